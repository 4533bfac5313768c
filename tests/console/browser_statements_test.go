//go:build browser

package console

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"orderflow/model"

	"github.com/chromedp/chromedp"
)

// TestConsoleStatementsInBrowser opens the Statements page from the nav,
// resolves one of two planted breaks with a note by clicking (the page
// asks first), and sees it leave the open list while the other stays; the
// break is resolved with the note in the admin's name. Pages are saved to
// tmp/console-statements*.png.
func TestConsoleStatementsInBrowser(t *testing.T) {
	s := startStack(t)
	_, first := plantBreak(t, s, "2020-02-03", "TBROWSER1")
	_, second := plantBreak(t, s, "2020-02-04", "TBROWSER2")
	row := func(id int64) string { return "#break-" + strconv.FormatInt(id, 10) }

	br := newChromium(t, "console-")
	run, shot, text := br.run, br.shot, br.text
	run("log in",
		chromedp.Navigate(s.APIURL+"/console/login"),
		chromedp.SendKeys(chromedp.CSS("#token"), s.Config.AdminToken),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/console/statements"]`)))
	run("open Statements from the nav",
		chromedp.Click(chromedp.CSS(`header a[href="/console/statements"]`)),
		chromedp.WaitVisible(chromedp.CSS(row(first))), shot("statements"))
	if got := text(row(first) + " td.kind"); got != "amount_mismatch" {
		t.Errorf("break %d's kind reads %q", first, got)
	}

	before := br.dialogs.Load()
	run("resolve break "+strconv.FormatInt(first, 10),
		chromedp.SendKeys(chromedp.CSS(row(first)+" input[name=note]"), "fee refunded by the provider on 2020-02-05"),
		chromedp.Click(chromedp.CSS(row(first)+" button.resolve")),
		chromedp.WaitVisible(chromedp.CSS("#flash")),
		chromedp.WaitVisible(chromedp.CSS(row(second))), shot("statements-resolved"))
	if br.dialogs.Load() == before {
		t.Errorf("the resolve did not ask for confirmation")
	}
	if f := text("#flash"); !strings.Contains(f, "resolved by admin") {
		t.Errorf("flash after resolve: %q", f)
	}
	html := br.get(chromedp.OuterHTML(chromedp.CSS("#open-breaks")))
	if strings.Contains(html, `id="break-`+strconv.FormatInt(first, 10)+`"`) {
		t.Errorf("the resolved break %d is still listed open", first)
	}
	b, err := s.SC.Store.StatementBreakByID(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != model.BreakResolved || b.ResolvedBy != "admin" || b.Note != "fee refunded by the provider on 2020-02-05" {
		t.Errorf("break %d: %s by %q with %q, want resolved by admin with the note", first, b.Status, b.ResolvedBy, b.Note)
	}
}
