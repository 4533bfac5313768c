package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"orderflow/api/handler"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// "Log out" ends the session on the server, not only in the browser that
// pressed it: a copy of the cookie taken before (another browser, a proxy
// log, a stolen laptop's profile) is refused afterwards by every API
// process of the fleet, not just the one that served the log-out.
func TestLogoutEndsACopiedSessionOnEveryAPI(t *testing.T) {
	testenv.EachBackend(t, func(t *testing.T, backend testenv.Backend) {
		s := testenv.Start(t, testenv.Options{Backend: backend, NoWorker: true})
		apis := []string{s.APIURL, secondAPI(t, s)}
		op := newBrowser(t, s.APIURL)
		op.login(t, s.Config.AdminToken)
		copied := sessionValue(t, op)
		csrf := op.csrf(t)
		withCopy := []string{"Cookie", "orderflow_console=" + copied}

		for _, api := range apis {
			if a := newBrowser(t, api).do(t, "GET", "/console/", nil, withCopy...); a.status != http.StatusOK {
				t.Fatalf("%s: the copied cookie before the log-out: %d, want 200", api, a.status)
			}
		}
		if a := op.do(t, "POST", "/console/logout", url.Values{"csrf": {csrf}}); a.status != http.StatusSeeOther {
			t.Fatalf("logout: %d", a.status)
		}
		for _, api := range apis {
			b := newBrowser(t, api)
			if a := b.do(t, "GET", "/console/", nil, withCopy...); a.status != http.StatusSeeOther || a.location != "/console/login" {
				t.Errorf("%s: the copied cookie after the log-out: GET /console/ %d to %q, want 303 to /console/login", api, a.status, a.location)
			}
			if a := b.do(t, "POST", "/console/orders/O123/retry", url.Values{"csrf": {csrf}}, withCopy...); a.status != http.StatusUnauthorized {
				t.Errorf("%s: the copied cookie after the log-out: a retry with its form token answered %d, want 401", api, a.status)
			}
			if a := b.do(t, "GET", "/console/login", nil, withCopy...); a.status != http.StatusOK {
				t.Errorf("%s: the copied cookie after the log-out: the login page answered %d, want 200 (the form, not a way in)", api, a.status)
			}
		}

		op.login(t, s.Config.AdminToken)
		if a := op.do(t, "GET", "/console/", nil); a.status != http.StatusOK {
			t.Errorf("a new login after the log-out: %d, want 200", a.status)
		}
		if sessionValue(t, op) == copied {
			t.Errorf("the new login reused the ended session's cookie")
		}
	})
}

// secondAPI serves the API from a second service context on the stack's
// database and Redis: another process of the fleet, as far as sessions go.
func secondAPI(t *testing.T, s *testenv.Stack) string {
	t.Helper()
	sc, err := svc.New(s.Config, s.SC.Log.Named("api2"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler.NewRouter(sc, sc.NewUseCases()))
	t.Cleanup(func() {
		srv.Close()
		sc.Close()
	})
	return srv.URL
}

// sessionValue is the console session cookie a browser holds.
func sessionValue(t *testing.T, b *browser) string {
	t.Helper()
	u, err := url.Parse(b.base + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "orderflow_console" {
			return c.Value
		}
	}
	t.Fatal("the browser holds no console session cookie")
	return ""
}
