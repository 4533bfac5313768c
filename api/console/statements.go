package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/statement"

	"go.uber.org/zap"
)

// statementRuns bounds the runs the Statements page lists, newest first.
const statementRuns = 20

// statementsView is the Statements page: the latest runs, the open breaks,
// and what the run-a-day form offers.
type statementsView struct {
	Runs      []runRow
	Breaks    []statement.Break
	Providers []string
	// Yesterday is the form's default day (UTC; a provider whose calendar
	// is ahead may already have it over, one behind answers invalid_date).
	Yesterday string
}

// runRow is one run with the breaks it listed first, by kind.
type runRow struct {
	statement.Run
	Breaks map[string]int64
}

func (c *Console) statements(w http.ResponseWriter, r *http.Request) {
	showView(c, w, r, "statements", "Statements", c.statementsView)
}

func (c *Console) statementsView(ctx context.Context) (*statementsView, error) {
	runs, err := c.uc.Statements.Latest(ctx, statementRuns)
	if err != nil {
		return nil, err
	}
	v := &statementsView{Providers: c.uc.Statements.Providers(),
		Yesterday: c.sc.Clock.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)}
	for _, run := range runs {
		got, err := c.uc.Statements.Get(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		v.Runs = append(v.Runs, runRow{Run: *got.Run, Breaks: got.Breaks})
	}
	if v.Breaks, err = c.uc.Statements.Breaks(ctx, string(statement.BreakOpen), ""); err != nil {
		return nil, err
	}
	return v, nil
}

// resolveBreak is an operator's resolve of an open break, with the note
// typed beside its button; the use case audits it.
func (c *Console) resolveBreak(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.statementDone(w, r, statement.ErrBreakNotFound, "", "break "+r.PathValue("id"))
		return
	}
	b, err := c.uc.Statements.Resolve(r.Context(), id, r.PostFormValue("note"))
	ok := ""
	if err == nil {
		ok = fmt.Sprintf("Break %d (%s, %s %s) resolved by %s.", b.ID, b.Kind, b.Provider, b.Day, b.ResolvedBy)
	}
	c.statementDone(w, r, err, ok, fmt.Sprintf("break %d", id))
}

// runStatement queues a run of one provider's day now, or names the run
// of that day already queued or running.
func (c *Console) runStatement(w http.ResponseWriter, r *http.Request) {
	provider, day := r.PostFormValue("provider"), r.PostFormValue("date")
	run, err := c.uc.Statements.Open(r.Context(), provider, day)
	ok := ""
	if err == nil {
		ok = fmt.Sprintf("Run %d of the %s statement of %s is %s.", run.ID, run.Provider, run.Day, run.Status)
	}
	c.statementDone(w, r, err, ok, "the "+provider+" statement of "+day)
}

// statementDone is done for the Statements page's forms: the result as
// the next page's flash, and back to the page (post/redirect/get).
func (c *Console) statementDone(w http.ResponseWriter, r *http.Request, err error, ok, what string) {
	msg := ok
	var ae *apperr.Error
	switch {
	case err == nil:
		c.log.Info("console action", zap.String("path", r.URL.Path))
	case errors.As(err, &ae):
		msg = fmt.Sprintf("Nothing done to %s: %s.", what, ae.Message)
	default:
		c.log.Error("console action", zap.String("path", r.URL.Path), zap.Error(err))
		msg = fmt.Sprintf("%s: the action failed (%v); nothing was changed.", what, err)
	}
	flash(w, r, msg)
	http.Redirect(w, r, "/console/statements", http.StatusSeeOther)
}
