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
	s := testenv.Start(t, testenv.Options{})
	_, buyer := s.NewUser(t, "mon-buyer", 0)
	admin := s.Config.AdminToken
	// The worker's periodic jobs create the low queue; the dashboard should list it.
	testenv.Eventually(t, 10*time.Second, "low queue exists", func() (bool, error) {
		qs, err := s.SC.Inspector.Queues()
		for _, q := range qs {
			if q == tasks.QueueLow {
				return true, nil
			}
		}
		return false, err
	})

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
