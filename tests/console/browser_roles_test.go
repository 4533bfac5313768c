//go:build browser

package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/chromedp/chromedp"
)

// TestConsoleRolesInBrowser drives the console in headless Chromium as two
// named operators (ORDERFLOW_ADMIN_TOKENS): alice, an operator, logs in
// with her own token, retries a failed order and reveals its codes from
// its story, and the story (and GET /api/v1/admin/audit) names her beside
// each action; vera, a viewer, logs in with hers, reads the story and the
// list with no action on them, and a post forged with her session is
// refused 403 and changes nothing. Pages go to tmp/console-roles-*.png.
func TestConsoleRolesInBrowser(t *testing.T) {
	const aliceToken, veraToken = "browser-alice-operator-token-01", "browser-vera-viewer-token-0001"
	s := testenv.StartFailFast(t, testenv.Shared, "alice:operator:"+aliceToken+",vera:viewer:"+veraToken)
	acted, codes := plantFailed(t, s, "roles-browser-a")
	untouched, _ := plantFailed(t, s, "roles-browser-b")

	br := newChromium(t, "console-roles-")
	ctx, run, shot, text := br.ctx, br.run, br.shot, br.text
	texts := func(sel string) []string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent)`, sel)))
		if err != nil {
			t.Fatalf("texts of %s: %v", sel, err)
		}
		return v
	}
	login := func(who, token string) {
		t.Helper()
		run("log in as "+who,
			chromedp.Navigate(s.APIURL+"/console/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login")),
			chromedp.WaitVisible(chromedp.CSS("header .operator")))
		if h := text("header .operator"); !strings.HasPrefix(h, who+" ") {
			t.Fatalf("the header after %s's login reads %q", who, h)
		}
	}
	story := func(no string) string { return s.APIURL + "/console/story?no=" + no }

	// alice acts from the order's story: a retry, then a look at the codes.
	login("alice", aliceToken)
	run("alice retries "+acted,
		chromedp.Navigate(story(acted)), chromedp.WaitVisible(chromedp.CSS("button.retry")),
		chromedp.Click(chromedp.CSS("button.retry")), chromedp.WaitVisible(chromedp.CSS("#flash")))
	if f := text("#flash"); !strings.Contains(f, "retried") {
		t.Errorf("flash after alice's retry: %q", f)
	}
	s.WaitStatus(t, acted, model.OrderFinished, 30*time.Second)
	run("alice reveals the codes of "+acted,
		chromedp.Navigate(story(acted)), chromedp.WaitVisible(chromedp.CSS("#reveal")), chromedp.Click(chromedp.CSS("#reveal")),
		chromedp.WaitVisible(chromedp.Search(`//p[@id="cards"]/span[contains(., "`+codes[0]+`")]`)))
	run("the story names alice", chromedp.Navigate(story(acted)), chromedp.WaitVisible(chromedp.CSS("#timeline tr.audit")), shot("alice-story"))
	lines := strings.Join(texts("#timeline tr.audit"), "\n")
	t.Logf("audit lines in %s's story:\n%s", acted, lines)
	for _, want := range []string{"alice: order_retry", "from: failed, to: paid", "alice: cards_reveal"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the story's audit lines lack %q:\n%s", want, lines)
		}
	}
	var got []string
	for _, e := range (&testenv.Client{Base: s.APIURL, Token: veraToken}).AuditTrail(t, acted) {
		got = append(got, e.Actor+" "+e.Action+" "+e.Object)
	}
	if want := []string{"alice order_retry " + acted, "alice cards_reveal " + acted}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("GET /api/v1/admin/audit?object=%s: %q, want %q", acted, got, want)
	}
	run("alice logs out", chromedp.Click(chromedp.CSS(`form[action="/console/logout"] button`)), chromedp.WaitVisible(chromedp.CSS("#token")))

	// vera reads the same pages with no action on them.
	login("vera", veraToken)
	run("vera reads "+untouched, chromedp.Navigate(story(untouched)), chromedp.WaitVisible(chromedp.CSS("#timeline")), shot("vera-story"))
	if st := text("#status"); st != "failed" {
		t.Fatalf("%s is %q, want failed", untouched, st)
	}
	forms := func() []string { return texts(`form[method="post"] button`) }
	if f := forms(); len(f) != 1 || f[0] != "Log out" {
		t.Errorf("vera's story of %s shows the post forms %q, want the log-out alone", untouched, f)
	}
	run("vera reads the list", chromedp.Navigate(s.APIURL+"/console/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-no="`+untouched+`"]`)), shot("vera-needs"))
	if f := forms(); len(f) != 1 {
		t.Errorf("vera's needs-a-hand shows the post forms %q, want the log-out alone", f)
	}
	if row := text(`tr[data-no="` + untouched + `"]`); !strings.Contains(row, "read only") {
		t.Errorf("vera's row of %s: %q, want it marked read only", untouched, row)
	}
	// A retry forged in her page, with her session and its form token.
	answer, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`(async () => {
			const body = new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value, story: %[1]q});
			const r = await fetch('/console/orders/' + %[1]q + '/retry', {method: 'POST', body, redirect: 'manual'});
			return [String(r.status), await r.text()];
		})()`, untouched), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vera's forged retry of %s answered %q", untouched, answer)
	if answer[0] != "403" || !strings.Contains(answer[1], "forbidden") {
		t.Errorf("vera's forged retry: %q, want 403 forbidden", answer)
	}
	if o := s.OrderRow(t, untouched); o.Status != model.OrderFailed {
		t.Errorf("after vera's refused retry %s is %s, want failed", untouched, o.Status)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM audit_entries WHERE object = ?`, untouched); n != 0 {
		t.Errorf("vera's refused retry left %d audit entries", n)
	}
}
