package payfake

import (
	"fmt"
	"sync"
)

// StatementKnobs spoil a fake's daily statement on purpose, by a line's
// ref (what a ref names is each provider's: a trade number, a refund id,
// …): a line left out, a payment listed at another amount. A fake embeds
// them, so its StatementDrop and StatementAlter are these. The zero value
// is ready; they are safe for concurrent use, and may be read while the
// fake's own lock is held (they take no other lock).
type StatementKnobs struct {
	mu    sync.Mutex
	spoil map[string]spoil // by ref
}

// spoil is what the knobs do to the line(s) of one ref.
type spoil struct {
	dropped bool
	altered bool
	cents   int64 // what an altered payment lists
}

// StatementDrop leaves the line(s) whose ref is ref out of every statement
// built from now on.
func (k *StatementKnobs) StatementDrop(ref string) {
	k.set(ref, func(s *spoil) { s.dropped = true })
}

// StatementAlter lists the payment whose ref is ref with cents instead of
// what was really paid, in every statement built from now on.
func (k *StatementKnobs) StatementAlter(ref string, cents int64) {
	k.set(ref, func(s *spoil) { s.altered, s.cents = true, cents })
}

func (k *StatementKnobs) set(ref string, change func(*spoil)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.spoil == nil {
		k.spoil = map[string]spoil{}
	}
	s := k.spoil[ref]
	change(&s)
	k.spoil[ref] = s
}

func (k *StatementKnobs) of(ref string) spoil {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.spoil[ref]
}

// StatementDrops reports whether the line(s) of ref are left out.
func (k *StatementKnobs) StatementDrops(ref string) bool { return k.of(ref).dropped }

// StatementAmount is what the statement lists for the payment of ref that
// took cents: cents, or the amount StatementAlter set.
func (k *StatementKnobs) StatementAmount(ref string, cents int64) int64 {
	if s := k.of(ref); s.altered {
		return s.cents
	}
	return cents
}

// Yuan writes cents as the yuan amount Alipay's and WeChat Pay's statements
// list ("12.34", "-0.50" for a refund).
func Yuan(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}
