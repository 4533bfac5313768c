package audit

import "testing"

// Run looks each rule's check up by name: a rule added to Rules without a
// check (or a check whose rule is gone) fails here, not in the middle of a
// chaos run.
func TestEveryRuleHasOneCheck(t *testing.T) {
	for _, r := range Rules {
		if ruleChecks[r] == nil {
			t.Errorf("rule %s has no check", r)
		}
	}
	if len(ruleChecks) != len(Rules) {
		t.Errorf("%d checks for %d rules", len(ruleChecks), len(Rules))
	}
}
