package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"orderflow/internal/domain/apperr"

	"go.uber.org/zap"
)

// Every action is one use-case call whose conditional move makes it
// idempotent: a second click finds the object moved on and says so. The
// result goes to the next page (post/redirect/get), so a reload never posts
// again.

func (c *Console) retryOrder(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("no")
	err := c.uc.Orders.Retry(r.Context(), no)
	c.done(w, r, err, "Order "+no+" retried: it is paid again and queued for activation.", "order", no)
}

func (c *Console) refundOrder(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("no")
	refundNo, _, err := c.uc.Orders.RefundFailed(r.Context(), no)
	c.done(w, r, err, fmt.Sprintf("Order %s is being refunded (refund %s).", no, refundNo), "order", no)
}

func (c *Console) retryRefund(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("no")
	newNo, err := c.uc.Refunds.Retry(r.Context(), no)
	c.done(w, r, err, fmt.Sprintf("Refund %s sent to the provider again as %s.", no, newNo), "refund", no)
}

func (c *Console) resolveRefund(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("no")
	err := c.uc.Refunds.Resolve(r.Context(), no, r.PostFormValue("note"))
	c.done(w, r, err, "Refund "+no+" recorded as returned by hand.", "refund", no)
}

func (c *Console) retryGroup(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("no")
	err := c.uc.Groups.Retry(r.Context(), no)
	c.done(w, r, err, "Group "+no+" queued to settle again.", "group", no)
}

// done leaves the action's result for the next page and sends the browser
// back where the form was (the story page, or the list). A business
// refusal, such as the second click of a double click, is a result too.
func (c *Console) done(w http.ResponseWriter, r *http.Request, err error, ok, object, no string) {
	msg := ok
	var ae *apperr.Error
	switch {
	case err == nil:
		c.log.Info("console action", zap.String("path", r.URL.Path), zap.String(object+"_no", no))
	case errors.As(err, &ae):
		msg = fmt.Sprintf("Nothing done to %s %s: %s (it may have moved on already — see its story).", object, no, ae.Message)
	default:
		c.log.Error("console action", zap.String("path", r.URL.Path), zap.String(object+"_no", no), zap.Error(err))
		msg = fmt.Sprintf("%s %s: the action failed (%v); nothing was changed that the history does not show.", object, no, err)
	}
	flash(w, r, msg)
	back := "/console/"
	if story := r.PostFormValue("story"); story != "" {
		back = "/console/story?no=" + url.QueryEscape(story)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
