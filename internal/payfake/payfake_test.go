package payfake

import (
	"sync"
	"testing"
)

// The statement knobs start with nothing spoiled; a drop and an alter
// are kept per ref and apart.
func TestStatementKnobs(t *testing.T) {
	var k StatementKnobs
	if k.StatementDrops("a") || k.StatementAmount("a", 100) != 100 {
		t.Fatal("a fresh knob set spoils a line")
	}
	k.StatementDrop("a")
	k.StatementAlter("b", 7)
	k.StatementAlter("a", 9)
	if !k.StatementDrops("a") || k.StatementDrops("b") {
		t.Errorf("drops: a %v, b %v; want true, false", k.StatementDrops("a"), k.StatementDrops("b"))
	}
	if got := k.StatementAmount("b", 100); got != 7 {
		t.Errorf("altered b lists %d, want 7", got)
	}
	if got := k.StatementAmount("c", 100); got != 100 {
		t.Errorf("untouched c lists %d, want 100", got)
	}
}

// Lookup reads a record under the lock, the zero value when it is missing;
// Sends counts by key.
func TestReadouts(t *testing.T) {
	var mu sync.Mutex
	m := map[string]*struct{ n int }{"x": {n: 3}}
	n := func(v *struct{ n int }) int { return v.n }
	if got := Lookup(&mu, m, "x", n); got != 3 {
		t.Errorf("Lookup x = %d, want 3", got)
	}
	if got := Lookup(&mu, m, "y", n); got != 0 {
		t.Errorf("Lookup y = %d, want 0", got)
	}
	if got := Len(&mu, m); got != 1 {
		t.Errorf("Len = %d, want 1", got)
	}
	var s Sends
	s.Add("r")
	s.Add("r")
	if s.Of("r") != 2 || s.Of("q") != 0 {
		t.Errorf("Sends r %d, q %d; want 2, 0", s.Of("r"), s.Of("q"))
	}
}

// Statements list amounts in yuan with two decimals, refunds signed.
func TestYuan(t *testing.T) {
	for cents, want := range map[int64]string{0: "0.00", 1: "0.01", 1234: "12.34", -150: "-1.50", 100000: "1000.00"} {
		if got := Yuan(cents); got != want {
			t.Errorf("Yuan(%d) = %q, want %q", cents, got, want)
		}
	}
}
