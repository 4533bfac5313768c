package operations

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
)

// The asynqmon dashboard can delete and rerun tasks, so it and every call
// its page makes answer 401 to anyone without the admin token, with a Basic
// challenge so a browser shows its login prompt, and 200 to the admin token
// given as a Bearer header or as the Basic-auth password.
func TestMonitoringRequiresAdminToken(t *testing.T) {
	s := startMonitored(t) // the dashboard should list the low queue
	_, buyer := s.NewUser(t, "mon-buyer", 0)
	admin := s.Config.AdminToken

	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	basic := func(user, pass string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	paths := []string{"/monitoring/", "/monitoring/api/queues", "/monitoring/api/queues/low", "/monitoring/api/servers", "/monitoring/api/redis_info"}
	refused := []struct {
		name string
		auth func(*http.Request)
	}{
		{"no credentials", nil},
		{"wrong bearer", bearer("not-the-admin-token-0000")},
		{"buyer token as bearer", bearer(buyer.Token)},
		{"admin token with a suffix", bearer(admin + "x")},
		{"wrong basic password", basic("admin", "not-the-admin-token-0000")},
		{"admin token as basic user name", basic(admin, "")},
		{"empty basic", basic("", "")},
	}
	for _, c := range refused {
		for _, p := range paths {
			t.Run(c.name+" "+p, func(t *testing.T) {
				resp := send(t, "GET", s.APIURL+p, c.auth)
				if resp.status != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401; body %.200q", resp.status, resp.body)
				}
				if ch := resp.header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Basic ") {
					t.Errorf("WWW-Authenticate = %q, want a Basic challenge", ch)
				}
				var e struct {
					Error struct{ Code string } `json:"error"`
				}
				if err := json.Unmarshal([]byte(resp.body), &e); err != nil || e.Error.Code == "" {
					t.Errorf("body %q is not an API error (%v)", resp.body, err)
				}
			})
		}
	}

	allowed := []struct {
		name string
		auth func(*http.Request)
	}{
		{"admin bearer", bearer(admin)},
		{"admin basic password", basic("ops", admin)},
		{"admin basic password, empty user", basic("", admin)},
	}
	for _, c := range allowed {
		t.Run(c.name, func(t *testing.T) {
			page := send(t, "GET", s.APIURL+"/monitoring/", c.auth)
			if page.status != 200 || !strings.Contains(page.body, "<html") {
				t.Fatalf("/monitoring/: status %d, body %.300q; want 200 with the dashboard's page", page.status, page.body)
			}
			api := send(t, "GET", s.APIURL+"/monitoring/api/queues", c.auth)
			if api.status != 200 {
				t.Fatalf("/monitoring/api/queues: status %d, body %.300q", api.status, api.body)
			}
			var qs struct {
				Queues []struct {
					Queue string `json:"queue"`
				} `json:"queues"`
			}
			if err := json.Unmarshal([]byte(api.body), &qs); err != nil {
				t.Fatalf("/monitoring/api/queues: %v in %.300q", err, api.body)
			}
			var names []string
			for _, q := range qs.Queues {
				names = append(names, q.Queue)
			}
			if !strings.Contains(","+strings.Join(names, ",")+",", ","+tasks.QueueLow+",") {
				t.Errorf("dashboard lists queues %v, want %q among them", names, tasks.QueueLow)
			}
			for _, p := range paths[2:] {
				if r := send(t, "GET", s.APIURL+p, c.auth); r.status != 200 {
					t.Errorf("%s: status %d, body %.200q", p, r.status, r.body)
				}
			}
		})
	}

	// A destructive call without the token is refused and changes nothing.
	t.Run("delete queue without token", func(t *testing.T) {
		if r := send(t, "DELETE", s.APIURL+"/monitoring/api/queues/low?force=true", nil); r.status != http.StatusUnauthorized {
			t.Fatalf("DELETE: status %d, want 401", r.status)
		}
		if r := send(t, "POST", s.APIURL+"/monitoring/api/queues/low:pause", bearer(buyer.Token)); r.status != http.StatusUnauthorized {
			t.Fatalf("pause as buyer: status %d, want 401", r.status)
		}
		if info, err := s.SC.Inspector.GetQueueInfo(tasks.QueueLow); err != nil || info.Paused {
			t.Fatalf("low queue after refused calls: %+v, %v; want it present and running", info, err)
		}
	})
}

type response struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, method, url string, edit func(*http.Request)) response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := plainHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b.String()}
}

// asynqmon's changes are body-less POSTs and DELETEs, and a browser keeps
// the Basic-auth password it was given: without an origin check, any page
// the operator visits could pause the critical queue. A change whose Origin
// (or, without one, Referer) is another site is refused with 403
// cross_site and changes nothing; from the dashboard's own origin, or with
// the token as a Bearer header (which no browser attaches by itself), it
// works. Reads are not changes and stay open to the admin.
func TestMonitoringRefusesCrossSiteChanges(t *testing.T) {
	s := startMonitored(t)
	admin := s.Config.AdminToken
	basic := func(headers ...string) func(*http.Request) {
		return func(r *http.Request) {
			r.SetBasicAuth("ops", admin)
			for i := 0; i+1 < len(headers); i += 2 {
				r.Header.Set(headers[i], headers[i+1])
			}
		}
	}
	paused := func(t *testing.T) bool {
		t.Helper()
		info, err := s.SC.Inspector.GetQueueInfo(tasks.QueueLow)
		if err != nil {
			t.Fatalf("low queue: %v", err)
		}
		return info.Paused
	}
	pause, resume := "/monitoring/api/queues/"+tasks.QueueLow+":pause", "/monitoring/api/queues/"+tasks.QueueLow+":resume"

	for _, c := range []struct {
		name, method, path string
		auth               func(*http.Request)
	}{
		{"foreign Origin", "POST", pause, basic("Origin", "http://evil.example")},
		{"foreign Referer, no Origin", "POST", pause, basic("Referer", "http://evil.example/page")},
		{"null Origin (sandboxed frame, no-referrer page)", "POST", pause, basic("Origin", "null")},
		{"same host, other scheme", "POST", pause, basic("Origin", strings.Replace(s.APIURL, "http:", "https:", 1))},
		{"foreign Origin over a same-site Referer", "POST", pause, basic("Origin", "http://evil.example", "Referer", s.APIURL+"/monitoring/")},
		{"browser password, neither header", "POST", pause, basic()},
		{"delete the queue, foreign Origin", "DELETE", "/monitoring/api/queues/" + tasks.QueueLow + "?force=true", basic("Origin", "http://evil.example")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := send(t, c.method, s.APIURL+c.path, c.auth)
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			_ = json.Unmarshal([]byte(r.body), &e)
			if r.status != http.StatusForbidden || e.Error.Code != "cross_site" {
				t.Errorf("status %d, body %.200q; want 403 with code cross_site", r.status, r.body)
			}
			if paused(t) {
				t.Errorf("the low queue was paused by a refused request")
				if err := s.SC.Inspector.UnpauseQueue(tasks.QueueLow); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if _, err := s.SC.Inspector.GetQueueInfo(tasks.QueueLow); err != nil {
		t.Fatalf("low queue after a refused delete: %v", err)
	}
	if r := send(t, "GET", s.APIURL+"/monitoring/api/queues", basic("Origin", "http://evil.example")); r.status != 200 {
		t.Errorf("a read with a foreign Origin: status %d, want 200 (reads change nothing)", r.status)
	}

	for _, c := range []struct {
		name string
		auth func(*http.Request)
	}{
		{"the dashboard's own Origin", basic("Origin", s.APIURL)},
		{"the dashboard's own Referer", basic("Referer", s.APIURL+"/monitoring/queues/low")},
		{"a Bearer header, neither header", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+admin) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := send(t, "POST", s.APIURL+pause, c.auth); r.status >= 300 || !paused(t) {
				t.Fatalf("pause: status %d, body %.200q; want the low queue paused", r.status, r.body)
			}
			if r := send(t, "POST", s.APIURL+resume, c.auth); r.status >= 300 || paused(t) {
				t.Fatalf("resume: status %d, body %.200q; want the low queue running", r.status, r.body)
			}
		})
	}
}

// startMonitored is a stack whose worker has created the low queue (its
// periodic jobs run there), so the dashboard has a queue to act on.
func startMonitored(t *testing.T) *testenv.Stack {
	t.Helper()
	return startMonitoredWith(t, testenv.Options{})
}

// startMonitoredWith is startMonitored with options.
func startMonitoredWith(t *testing.T, opt testenv.Options) *testenv.Stack {
	t.Helper()
	s := testenv.Start(t, opt)
	testenv.Eventually(t, 10*time.Second, "low queue exists", func() (bool, error) {
		qs, err := s.SC.Inspector.Queues()
		for _, q := range qs {
			if q == tasks.QueueLow {
				return true, nil
			}
		}
		return false, err
	})
	return s
}
