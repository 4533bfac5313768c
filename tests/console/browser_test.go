//go:build browser

package console

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/chromedp/chromedp"
)

// TestConsoleInBrowser drives the console in headless Chromium (Debian's
// package) the way an operator would: log in, retry a failed order and see
// it finished, resolve a manual refund, read an order's story, reveal its
// codes, and double-click an action that must act once. Each page is saved
// to tmp/console-*.png at the module root.
func TestConsoleInBrowser(t *testing.T) {
	s := startStack(t)
	failedA, codesA := plantFailed(t, s, "browser-a")
	failedB, _ := plantFailed(t, s, "browser-b")
	failedC, _ := plantFailed(t, s, "browser-c")
	_, refundNo := plantManual(t, s, "browser-manual")

	br := newChromium(t, "console-")
	ctx, run, shot, get, text := br.ctx, br.run, br.shot, br.get, br.text
	dialogs := &br.dialogs
	// doubleClick is two mouse clicks, one right after the other.
	doubleClick := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			nodes, err := chromedp.Nodes(chromedp.CSS(sel), chromedp.NodeVisible)(ctx, tg)
			if err != nil {
				return err
			}
			if _, err := chromedp.MouseClickNode(nodes[0])(ctx, tg); err != nil {
				return err
			}
			_, _ = chromedp.MouseClickNode(nodes[0])(ctx, tg) // the page may be leaving already
			return nil
		})
	}
	base := s.APIURL

	// Log in: the console sends a stranger to the login page.
	run("open the console", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible(chromedp.CSS("#token")), shot("login"))
	loc := get(chromedp.Location())
	if !strings.HasSuffix(loc, "/console/login") {
		t.Fatalf("without a session the console landed on %s, want the login", loc)
	}
	run("log in",
		chromedp.SendKeys(chromedp.CSS("#token"), s.Config.AdminToken),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-no="`+failedA+`"]`)), shot("needs"))

	// Retry a failed order, see the result, then see it finished.
	before := dialogs.Load()
	run("retry "+failedA,
		chromedp.Click(chromedp.CSS(`tr[data-no="`+failedA+`"] button.retry`)),
		chromedp.WaitVisible(chromedp.CSS("#flash")))
	if dialogs.Load() == before {
		t.Errorf("the retry did not ask for confirmation")
	}
	if f := text("#flash"); !strings.Contains(f, "retried") {
		t.Errorf("flash after retry: %q", f)
	}
	s.WaitStatus(t, failedA, model.OrderFinished, 30*time.Second)
	run("story of "+failedA, chromedp.Navigate(base+"/console/story?no="+failedA), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	if st := text("#status"); st != "finished" {
		t.Errorf("story shows %s as %q, want finished", failedA, st)
	}

	// The story: every move, in order.
	run("story screenshot", shot("story"))
	moves, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline tr.event td.move')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(moves, ",")
	for _, want := range []string{"- → pending", "pending → paid", "→ failed", "failed → paid", "→ finished"} {
		if !strings.Contains(joined, want) {
			t.Errorf("timeline %q lacks %q", joined, want)
		}
	}
	if want := testenv.Rows[struct{ N int }](t, s, `SELECT COUNT(*) AS n FROM events WHERE object_type = 'order' AND object_no = ?`, failedA)[0].N; len(moves) != want {
		t.Errorf("timeline shows %d events, the ledger has %d", len(moves), want)
	}
	// Codes masked until revealed; the reveal is in the history.
	html := get(chromedp.OuterHTML(chromedp.CSS("html")))
	if strings.Contains(html, codesA[0]) {
		t.Errorf("story shows card code %s before a reveal", codesA[0])
	}
	run("reveal", chromedp.Click(chromedp.CSS("#reveal")), chromedp.WaitVisible(chromedp.Search(`//p[@id="cards"]/span[contains(., "`+codesA[0]+`")]`)), shot("reveal"))
	if n := notes(t, s, failedA, "revealed"); n != 1 {
		t.Errorf("%d reveal notes in %s's history, want 1", n, failedA)
	}

	// Resolve a manual refund by hand, with a note.
	run("resolve "+refundNo,
		chromedp.Navigate(base+"/console/"),
		chromedp.SendKeys(chromedp.CSS(`tr[data-no="`+refundNo+`"] input[name=note]`), "returned by bank transfer"),
		chromedp.Click(chromedp.CSS(`tr[data-no="`+refundNo+`"] button.resolve`)),
		chromedp.WaitVisible(chromedp.CSS("#flash")))
	if f := text("#flash"); !strings.Contains(f, "returned by hand") {
		t.Errorf("flash after resolve: %q", f)
	}
	if r, err := s.SC.Store.RefundByNo(context.Background(), refundNo); err != nil || r.Status != model.RefundSucceeded {
		t.Errorf("refund %s after resolve: %+v %v, want succeeded", refundNo, r, err)
	}

	// A double click on retry: the page sends one request (the button is
	// disabled on submit) and the ledger moves once.
	run("double-click retry "+failedB,
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-no="`+failedB+`"] button.retry`)),
		doubleClick(`tr[data-no="`+failedB+`"] button.retry`),
		chromedp.WaitVisible(chromedp.CSS("#flash")))
	// And two posts that get past the page (a second tab, a replay): the
	// server acts once; both answers show a result.
	run("open the list", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-no="`+failedC+`"] button.retry`)))
	statuses, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](fmt.Sprintf(`(async () => {
			const f = document.querySelector('tr[data-no="%s"] form');
			const post = () => fetch(f.action, {method: 'POST', body: new URLSearchParams(new FormData(f))}).then(r => r.status);
			return Promise.all([post(), post()]);
		})()`, failedC), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	run("back to the list", chromedp.Navigate(base+"/console/"), shot("after-actions"))
	t.Logf("two posts of retry %s answered %v", failedC, statuses)
	for _, no := range []string{failedB, failedC} {
		s.WaitStatus(t, no, model.OrderFinished, 30*time.Second)
		if n := s.MoveCount(t, no, "failed→paid"); n != 1 {
			t.Errorf("%s: %d failed→paid moves after a double click, want 1", no, n)
		}
		s.CheckFinishedOnce(t, no)
	}

	run("at a glance", chromedp.Navigate(base+"/console/glance"), chromedp.WaitVisible(chromedp.CSS("svg.chart")), shot("glance"))
	if rates := text("#rates"); !strings.Contains(rates, "Close success rate") {
		t.Errorf("glance rates: %q", rates)
	}
	for _, name := range []string{"login", "needs", "story", "reveal", "after-actions", "glance"} {
		if fi, err := os.Stat(filepath.Join(br.outDir, "console-"+name+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s missing: %v", name, err)
		}
	}
}
