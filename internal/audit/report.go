package audit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of one audit.
type Report struct {
	At      time.Time
	Results []Result
}

// Violations is the total over every rule.
func (r *Report) Violations() int {
	n := 0
	for _, res := range r.Results {
		n += res.Violations
	}
	return n
}

// Failed reports whether any rule found a violation.
func (r *Report) Failed() bool { return r.Violations() > 0 }

// Result returns the named rule's result.
func (r *Report) Result(rule string) Result {
	for _, res := range r.Results {
		if res.Rule == rule {
			return res
		}
	}
	return Result{Rule: rule, Skipped: "unknown rule"}
}

// Violated lists the rules with at least one violation.
func (r *Report) Violated() []string {
	var out []string
	for _, res := range r.Results {
		if res.Violations > 0 {
			out = append(out, res.Rule)
		}
	}
	return out
}

// Print writes the report as a table: rule, objects checked, violations,
// and the examples, one per line.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tCHECKED\tVIOLATIONS\tEXAMPLES")
	for _, res := range r.Results {
		switch {
		case res.Skipped != "":
			fmt.Fprintf(tw, "%s\t-\tskipped\t%s\n", res.Rule, res.Skipped)
		case len(res.Examples) == 0:
			fmt.Fprintf(tw, "%s\t%d\t%d\t\n", res.Rule, res.Checked, res.Violations)
		default:
			for i, ex := range res.Examples {
				if i == 0 {
					fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", res.Rule, res.Checked, res.Violations, ex)
				} else {
					fmt.Fprintf(tw, "\t\t\t%s\n", ex)
				}
			}
		}
	}
	_ = tw.Flush()
	if r.Failed() {
		fmt.Fprintf(w, "audit: %d violation(s) in %s\n", r.Violations(), strings.Join(r.Violated(), ", "))
	} else {
		fmt.Fprintln(w, "audit: 0 violations")
	}
}
