package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/domain/trail"
)

// storyLine is one row of a story's timeline: a move or a note from the
// ledger's events, or an operator's action from the audit trail, so the
// story reads who did what beside the moves it caused.
type storyLine struct {
	At    time.Time
	Event *order.Event // nil for an audit entry
	Audit *trail.Entry // nil for an event
}

// withTrail reads the audit trail of the story's objects (the order and
// its refunds, or the group) in one read and merges it into the timeline.
func (c *Console) withTrail(ctx context.Context, v *storyView, objects ...string) error {
	entries, err := c.uc.Audit.ForAll(ctx, objects...)
	if err != nil {
		return err
	}
	v.Lines = mergeTimeline(v.Timeline, entries)
	return nil
}

// mergeTimeline interleaves events (in ledger order) and audit entries
// (oldest first) by time; an entry goes before an event of the same
// instant, as the operator's action comes before the move it made.
func mergeTimeline(events []order.Event, entries []trail.Entry) []storyLine {
	out := make([]storyLine, 0, len(events)+len(entries))
	i, j := 0, 0
	for i < len(events) || j < len(entries) {
		if j < len(entries) && (i == len(events) || !events[i].CreatedAt.Before(entries[j].At)) {
			out = append(out, storyLine{At: entries[j].At, Audit: &entries[j]})
			j++
			continue
		}
		out = append(out, storyLine{At: events[i].CreatedAt, Event: &events[i]})
		i++
	}
	return out
}

// detail shows an audit entry's detail as "key: value" pairs, keys in
// order; a detail that is not a JSON object is shown as it is.
func detail(raw json.RawMessage) string {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // amounts in cents as written, never 1e+06
	if err := dec.Decode(&m); err != nil {
		return string(raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
