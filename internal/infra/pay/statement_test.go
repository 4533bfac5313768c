package pay

import (
	"errors"
	"testing"
)

// A pager hands full pages as they fill and the rest on Flush, each page a
// slice of its own, and stops at fn's error.
func TestPager(t *testing.T) {
	var got [][]StatementLine
	p := NewPager(func(page []StatementLine) error { got = append(got, page); return nil })
	for i := range 2*StatementPage + 1 {
		if err := p.Add(StatementLine{Ref: string(rune('a' + i%26))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil || len(got) != 3 {
		t.Fatalf("pages %d, second Flush %v; want 3 pages, nil", len(got), err)
	}
	for i, want := range []int{StatementPage, StatementPage, 1} {
		if len(got[i]) != want {
			t.Errorf("page %d has %d lines, want %d", i, len(got[i]), want)
		}
	}
	if got[0][0].Ref != "a" {
		t.Errorf("the first page kept starts with %q, want \"a\": a later page overwrote it", got[0][0].Ref)
	}

	stop := errors.New("stop")
	p = NewPager(func([]StatementLine) error { return stop })
	for range StatementPage - 1 {
		_ = p.Add(StatementLine{})
	}
	if err := p.Add(StatementLine{}); !errors.Is(err, stop) {
		t.Errorf("Add of the page's last line = %v, want fn's error", err)
	}
}
