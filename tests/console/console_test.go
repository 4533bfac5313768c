package console

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// Every console URL: a GET without a session is sent to the login, any
// other method is answered 401, and nothing behind them runs.
var consoleURLs = []struct{ method, path string }{
	{"GET", "/console/"},
	{"GET", "/console/story"},
	{"GET", "/console/story?no=O123"},
	{"GET", "/console/glance"},
	{"GET", "/console/statements"},
	{"GET", "/console/no-such-page"},
	{"POST", "/console/logout"},
	{"POST", "/console/orders/O123/retry"},
	{"POST", "/console/orders/O123/refund"},
	{"POST", "/console/orders/O123/reveal"},
	{"POST", "/console/refunds/R123/retry"},
	{"POST", "/console/refunds/R123/resolve"},
	{"POST", "/console/groups/G123/retry"},
	{"POST", "/console/statements/runs"},
	{"POST", "/console/statements/breaks/1/resolve"},
}

func TestConsole(t *testing.T) {
	s := startStack(t)
	admin := s.Config.AdminToken

	t.Run("without a session every URL redirects to the login or answers 401", func(t *testing.T) {
		stranger := newBrowser(t, s.APIURL)
		forged := newBrowser(t, s.APIURL)
		u, _ := url.Parse(s.APIURL + "/console/")
		forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: "orderflow_console", Value: "99999999999.deadbeef", Path: "/console/"}})
		for _, b := range []*browser{stranger, forged} {
			for _, c := range consoleURLs {
				a := b.do(t, c.method, c.path, url.Values{})
				if c.method == "GET" {
					if a.status != http.StatusSeeOther || a.location != "/console/login" {
						t.Errorf("%s %s: %d to %q, want 303 to /console/login", c.method, c.path, a.status, a.location)
					}
				} else if a.status != http.StatusUnauthorized {
					t.Errorf("%s %s: %d, want 401", c.method, c.path, a.status)
				}
			}
		}
		if a := stranger.do(t, "GET", "/console/login", nil); a.status != 200 || !strings.Contains(a.body, `name="token"`) {
			t.Errorf("login page: %d, no token field", a.status)
		}
	})

	t.Run("a wrong token is refused and starts no session", func(t *testing.T) {
		b := newBrowser(t, s.APIURL)
		for _, tok := range []string{"", "wrong-token-0000", admin + "x", strings.ToUpper(admin)} {
			a := b.do(t, "POST", "/console/login", url.Values{"token": {tok}})
			if a.status != http.StatusUnauthorized || strings.Contains(a.header.Get("Set-Cookie"), "orderflow_console=") {
				t.Errorf("login with %q: %d, Set-Cookie %q; want 401 and no session", tok, a.status, a.header.Get("Set-Cookie"))
			}
		}
		if a := b.do(t, "GET", "/console/", nil); a.status != http.StatusSeeOther {
			t.Errorf("after refused logins /console/ answered %d, want 303 to the login", a.status)
		}
		a := b.do(t, "POST", "/console/login", url.Values{"token": {admin}}, "Origin", "http://evil.example")
		if a.status != http.StatusForbidden {
			t.Errorf("cross-site login: %d, want 403", a.status)
		}
	})

	t.Run("the session cookie", func(t *testing.T) {
		b := newBrowser(t, s.APIURL)
		a := b.do(t, "POST", "/console/login", url.Values{"token": {admin}})
		c := a.header.Get("Set-Cookie")
		for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/console/"} {
			if !strings.Contains(c, want) {
				t.Errorf("session cookie %q lacks %s", c, want)
			}
		}
		if strings.Contains(c, admin) {
			t.Errorf("session cookie holds the admin token: %q", c)
		}
		for _, p := range []string{"/console/", "/console/story", "/console/glance"} {
			if a := b.do(t, "GET", p, nil); a.status != 200 || strings.Contains(a.body, admin) {
				t.Errorf("GET %s with a session: %d (admin token in page: %v)", p, a.status, strings.Contains(a.body, admin))
			}
		}
	})

	orderNo, codes := plantFailed(t, s, "console-failed")
	op := newBrowser(t, s.APIURL)
	op.login(t, admin)

	t.Run("needs a hand lists the failed order with its reason", func(t *testing.T) {
		a := op.do(t, "GET", "/console/", nil)
		if !strings.Contains(a.body, `data-no="`+orderNo+`"`) {
			t.Fatalf("failed order %s not on the page", orderNo)
		}
		if !strings.Contains(a.body, "/console/orders/"+orderNo+"/retry") {
			t.Errorf("no retry form for %s", orderNo)
		}
	})

	t.Run("a cross-site or tokenless post changes nothing", func(t *testing.T) {
		token := op.csrf(t)
		retry := "/console/orders/" + orderNo + "/retry"
		cases := []struct {
			name    string
			form    url.Values
			headers []string
		}{
			{"no token", url.Values{}, nil},
			{"another session's token", url.Values{"csrf": {strings.Repeat("0", len(token))}}, nil},
			{"foreign Origin", url.Values{"csrf": {token}}, []string{"Origin", "http://evil.example"}},
			{"foreign Referer", url.Values{"csrf": {token}}, []string{"Referer", "http://evil.example/page"}},
			{"https Origin for an http console", url.Values{"csrf": {token}}, []string{"Origin", "https://" + strings.TrimPrefix(s.APIURL, "http://")}},
		}
		for _, c := range cases {
			if a := op.do(t, "POST", retry, c.form, c.headers...); a.status != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", c.name, a.status)
			}
		}
		if st := s.OrderRow(t, orderNo).Status; st != model.OrderFailed {
			t.Fatalf("order %s is %s after refused posts, want failed", orderNo, st)
		}
		if n := s.MoveCount(t, orderNo, "failed→paid"); n != 0 {
			t.Errorf("%d failed→paid moves after refused posts", n)
		}
	})

	t.Run("a double post of retry acts once", func(t *testing.T) {
		token := op.csrf(t)
		var wg sync.WaitGroup
		answers := make([]answer, 2)
		for i := range answers {
			wg.Go(func() {
				answers[i] = op.do(t, "POST", "/console/orders/"+orderNo+"/retry", url.Values{"csrf": {token}}, "Origin", s.APIURL)
			})
		}
		wg.Wait()
		for _, a := range answers {
			if a.status != http.StatusSeeOther || a.location != "/console/" {
				t.Errorf("retry: %d to %q, want 303 to /console/", a.status, a.location)
			}
		}
		s.WaitStatus(t, orderNo, model.OrderFinished, 30*time.Second)
		if n := s.MoveCount(t, orderNo, "failed→paid"); n != 1 {
			t.Errorf("%d failed→paid moves after a double post, want 1", n)
		}
		s.CheckFinishedOnce(t, orderNo)
		if a := op.do(t, "GET", "/console/", nil); !strings.Contains(a.body, `id="flash"`) {
			t.Errorf("no result shown after the redirect")
		}
		if a := op.do(t, "GET", "/console/", nil); strings.Contains(a.body, `id="flash"`) {
			t.Errorf("the result is shown twice")
		}
	})

	t.Run("card codes are masked until revealed, and a reveal is in the history", func(t *testing.T) {
		story := op.do(t, "GET", "/console/story?no="+orderNo, nil)
		if story.status != 200 || !strings.Contains(story.body, "finished → ") && !strings.Contains(story.body, "→ finished") {
			t.Fatalf("story: %d, no move to finished in %.500s", story.status, story.body)
		}
		pages := []string{"/console/", "/console/story?no=" + orderNo, "/console/glance"}
		for _, p := range pages {
			for _, code := range codes {
				if a := op.do(t, "GET", p, nil); strings.Contains(a.body, code) {
					t.Errorf("%s shows card code %s before a reveal", p, code)
				}
			}
		}
		if n := notes(t, s, orderNo, "revealed"); n != 0 {
			t.Fatalf("%d reveal notes before a reveal", n)
		}
		if a := op.do(t, "POST", "/console/orders/"+orderNo+"/reveal", url.Values{}); a.status != http.StatusForbidden {
			t.Errorf("reveal without the form token: %d, want 403", a.status)
		}
		a := op.do(t, "POST", "/console/orders/"+orderNo+"/reveal", url.Values{"csrf": {op.csrf(t)}})
		if a.status != 200 || a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("reveal: %d, Cache-Control %q", a.status, a.header.Get("Cache-Control"))
		}
		for _, code := range codes {
			if !strings.Contains(a.body, code) {
				t.Errorf("revealed page lacks code %s", code)
			}
		}
		if n := notes(t, s, orderNo, "revealed"); n != 1 {
			t.Errorf("%d reveal notes after one reveal, want 1", n)
		}
		if a := op.do(t, "GET", "/console/story?no="+orderNo, nil); strings.Contains(a.body, codes[0]) || !strings.Contains(a.body, "card codes revealed") {
			t.Errorf("after the reveal the story shows the code again (%v) or lacks the note", strings.Contains(a.body, codes[0]))
		}
	})

	t.Run("a manual refund resolved by hand, with a note", func(t *testing.T) {
		refOrder, refundNo := plantManual(t, s, "console-manual")
		if a := op.do(t, "GET", "/console/", nil); !strings.Contains(a.body, `data-no="`+refundNo+`"`) {
			t.Fatalf("manual refund %s not on the page", refundNo)
		}
		form := url.Values{"csrf": {op.csrf(t)}, "note": {"bank transfer 2026-12-02"}, "story": {refOrder}}
		for range 2 {
			a := op.do(t, "POST", "/console/refunds/"+refundNo+"/resolve", form)
			if a.status != http.StatusSeeOther || a.location != "/console/story?no="+refOrder {
				t.Fatalf("resolve: %d to %q", a.status, a.location)
			}
		}
		s.WaitStatus(t, refOrder, model.OrderRefunded, 10*time.Second)
		n := s.Count(t, `SELECT COUNT(*) FROM events WHERE object_type = 'refund' AND object_no = ? AND to_status = 'succeeded' AND reason = ?`,
			refundNo, "operator resolved: bank transfer 2026-12-02")
		if n != 1 {
			t.Errorf("%d resolve events with the note, want 1", n)
		}
		if a := op.do(t, "GET", "/console/story?no="+refundNo, nil); !strings.Contains(a.body, "bank transfer 2026-12-02") {
			t.Errorf("the refund's story lacks the note")
		}
	})

	t.Run("an unknown number is a 404 story", func(t *testing.T) {
		if a := op.do(t, "GET", "/console/story?no=O-nope", nil); a.status != 404 {
			t.Errorf("unknown number: %d, want 404", a.status)
		}
	})

	t.Run("logout ends the session", func(t *testing.T) {
		if a := op.do(t, "POST", "/console/logout", url.Values{"csrf": {op.csrf(t)}}); a.status != http.StatusSeeOther {
			t.Fatalf("logout: %d", a.status)
		}
		if a := op.do(t, "GET", "/console/", nil); a.status != http.StatusSeeOther {
			t.Errorf("after logout: %d, want 303 to the login", a.status)
		}
	})
}

// The dev mode's ledger is SQLite: the console's queries (model/console.go)
// and the reveal note run there too.
func TestConsoleOnSQLite(t *testing.T) {
	s := testenv.StartFailFast(t, testenv.Embedded, "")
	orderNo, codes := plantFailed(t, s, "sqlite-failed")
	op := newBrowser(t, s.APIURL)
	op.login(t, s.Config.AdminToken)
	if a := op.do(t, "GET", "/console/", nil); a.status != 200 || !strings.Contains(a.body, `data-no="`+orderNo+`"`) {
		t.Fatalf("needs a hand: %d, failed order listed: %v", a.status, strings.Contains(a.body, orderNo))
	}
	if a := op.do(t, "POST", "/console/orders/"+orderNo+"/retry", url.Values{"csrf": {op.csrf(t)}}); a.status != http.StatusSeeOther {
		t.Fatalf("retry: %d", a.status)
	}
	s.WaitStatus(t, orderNo, model.OrderFinished, 30*time.Second)
	for _, p := range []string{"/console/glance", "/console/story?no=" + orderNo} {
		if a := op.do(t, "GET", p, nil); a.status != 200 || strings.Contains(a.body, codes[0]) {
			t.Errorf("GET %s: %d (code shown: %v)", p, a.status, strings.Contains(a.body, codes[0]))
		}
	}
	if a := op.do(t, "POST", "/console/orders/"+orderNo+"/reveal", url.Values{"csrf": {op.csrf(t)}}); a.status != 200 || !strings.Contains(a.body, codes[0]) {
		t.Errorf("reveal: %d", a.status)
	}
	if n := notes(t, s, orderNo, "revealed"); n != 1 {
		t.Errorf("%d reveal notes, want 1", n)
	}
}
