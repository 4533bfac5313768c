package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"orderflow/internal/domain/group"
	"orderflow/internal/domain/order"
	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/operators"
	"orderflow/internal/infra/tasks"

	"github.com/hibiken/asynq"
)

// storyView is one order's (or group's) story.
type storyView struct {
	Query    string
	NotFound bool
	Order    *order.Story
	Group    *group.View
	Refunds  []refund.Refund
	Timeline []order.Event
	// Lines is the timeline with the audit trail's entries merged in.
	Lines []storyLine
	Tasks []taskView
	// Revealed holds the card codes after a reveal; otherwise the page
	// shows only how many there are.
	Revealed []string
}

// taskView is the asynq task that holds an object now.
type taskView struct {
	Type, ID, Queue, State string
	NextRun                time.Time
	Retried, MaxRetry      int
	LastErr                string
	Missing                bool // not in Redis (done, deleted, or not yet sent from the outbox)
	Link                   string
}

// story looks a number up as an order, a refund (its order's story) or a
// group, and shows its timeline.
func (c *Console) story(w http.ResponseWriter, r *http.Request) {
	no := strings.TrimSpace(r.URL.Query().Get("no"))
	v := &storyView{Query: no}
	if no != "" {
		if err := c.lookup(r.Context(), no, v); c.failed(w, r, err) {
			return
		}
	}
	status := http.StatusOK
	if v.NotFound {
		status = http.StatusNotFound
	}
	c.render(w, r, status, "story", "Order story", v)
}

func (c *Console) lookup(ctx context.Context, no string, v *storyView) error {
	orderNo := no
	if rf, err := c.uc.Refunds.Get(ctx, no); err == nil {
		orderNo = rf.OrderNo
	} else if !errors.Is(err, refund.ErrNotFound) {
		return fmt.Errorf("look up refund %s: %w", no, err)
	}
	s, err := c.uc.Orders.Story(ctx, orderNo)
	if errors.Is(err, order.ErrNotFound) {
		return c.groupStory(ctx, no, v)
	}
	if err != nil {
		return err
	}
	v.Order = s
	v.Timeline = append(v.Timeline, s.Events...)
	switch s.Status {
	case order.StatusPending.String():
		v.Tasks = append(v.Tasks, c.task(tasks.TypeOrderClose, tasks.QueueClose, s.OrderNo, s.CloseGen))
	case order.StatusPaid.String(), order.StatusClaimed.String(), order.StatusFailed.String():
		v.Tasks = append(v.Tasks, c.task(tasks.TypeOrderActivate, tasks.QueueCritical, s.OrderNo, s.ActivateGen))
	}
	for _, rv := range s.Refunds {
		rf, err := c.uc.Refunds.Get(ctx, rv.RefundNo)
		if err != nil {
			return fmt.Errorf("refund %s of order %s: %w", rv.RefundNo, s.OrderNo, err)
		}
		v.Refunds = append(v.Refunds, *rf)
		evs, err := c.uc.Refunds.History(ctx, rf)
		if err != nil {
			return err
		}
		v.Timeline = append(v.Timeline, evs...)
		if rf.Status == refund.StatusProcessing || rf.Status == refund.StatusManual {
			v.Tasks = append(v.Tasks, c.task(tasks.TypeRefundExecute, tasks.QueueDefault, rf.RefundNo, rf.TaskGen))
		}
	}
	sort.SliceStable(v.Timeline, func(i, j int) bool { return v.Timeline[i].ID < v.Timeline[j].ID })
	objects := []string{s.OrderNo}
	for _, rf := range v.Refunds {
		objects = append(objects, rf.RefundNo)
	}
	return c.withTrail(ctx, v, objects...)
}

func (c *Console) groupStory(ctx context.Context, no string, v *storyView) error {
	g, err := c.uc.Groups.Story(ctx, no)
	if errors.Is(err, group.ErrNotFound) {
		v.NotFound = true
		return nil
	}
	if err != nil {
		return err
	}
	v.Group, v.Timeline = g.View, g.Events
	if !g.Settled {
		v.Tasks = append(v.Tasks, c.task(tasks.TypeGroupSettle, tasks.QueueDefault, no, g.SettleGen))
	}
	return c.withTrail(ctx, v, no)
}

// task asks asynq's inspector about the task of a type, number and
// generation.
func (c *Console) task(typ, queue, no string, gen int) taskView {
	id := tasks.ID(typ, no, gen)
	t := taskView{Type: typ, ID: id, Queue: queue, Link: "/monitoring/queues/" + url.PathEscape(queue) + "/tasks/" + url.PathEscape(id)}
	info, err := c.sc.Inspector.GetTaskInfo(queue, id)
	if err != nil {
		t.Missing = true
		if !errors.Is(err, asynq.ErrTaskNotFound) && !errors.Is(err, asynq.ErrQueueNotFound) {
			t.LastErr = err.Error()
		}
		return t
	}
	t.State, t.NextRun, t.Retried, t.MaxRetry, t.LastErr = info.State.String(), info.NextProcessAt, info.Retried, info.MaxRetry, info.LastErr
	return t
}

// reveal shows an order's card codes, once the look is in its history. The
// codes are in this response only: never in a URL, never cached.
func (c *Console) reveal(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("no")
	op, _ := operators.FromContext(r.Context()) // act admitted an operator
	codes, err := c.uc.Orders.RevealCards(r.Context(), no, op.Name+" in the console")
	if c.failed(w, r, err) {
		return
	}
	v := &storyView{Query: no}
	if c.failed(w, r, c.lookup(r.Context(), no, v)) {
		return
	}
	v.Revealed = codes
	c.render(w, r, http.StatusOK, "story", "Order story", v)
}
