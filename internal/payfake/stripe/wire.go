package stripe

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// authed checks the Bearer secret key and parses the form (body for POST,
// query for GET) as Stripe does, before next runs.
func (f *Fake) authed(next func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+f.SecretKey {
			f.fail(w, http.StatusUnauthorized, "invalid_request_error", "", "Invalid API Key provided")
			return
		}
		if err := r.ParseForm(); err != nil {
			f.fail(w, http.StatusBadRequest, "invalid_request_error", "parameter_invalid", "unparseable form body")
			return
		}
		next(w, r)
	}
}

// replay answers a POST from its Idempotency-Key's first answer; it reports
// whether it did. The same key with other parameters is Stripe's
// idempotency_error.
func (f *Fake) replay(w http.ResponseWriter, r *http.Request) bool {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return false
	}
	f.mu.Lock()
	a, ok := f.idem[key]
	f.mu.Unlock()
	if !ok {
		return false
	}
	if a.path != r.URL.Path || a.params != canonical(r.PostForm) {
		f.fail(w, http.StatusBadRequest, "idempotency_error", "",
			"Keys for idempotent requests can only be used with the same parameters they were first used with.")
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
	return true
}

// remember stores the first answer under the request's Idempotency-Key.
func (f *Fake) remember(r *http.Request, status int, body []byte) {
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		f.mu.Lock()
		f.idem[key] = idemAnswer{path: r.URL.Path, params: canonical(r.PostForm), status: status, body: body}
		f.mu.Unlock()
	}
}

func canonical(v url.Values) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strings.Join(v[k], ",") + "&")
	}
	return b.String()
}

// metadata collects metadata[k]=v form fields.
func metadata(v url.Values) map[string]string {
	m := map[string]string{}
	for k, vs := range v {
		if inner, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(inner, "]") && len(vs) > 0 {
			m[strings.TrimSuffix(inner, "]")] = vs[0]
		}
	}
	return m
}

func encode(v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return body
}

func (f *Fake) reply(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_"+randHex(7))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// fail writes Stripe's error object.
func (f *Fake) fail(w http.ResponseWriter, status int, typ, code, message string) {
	e := map[string]any{"type": typ, "message": message}
	if code != "" {
		e["code"] = code
	}
	f.reply(w, status, encode(map[string]any{"error": e}))
}

func list(url string, data []map[string]any) map[string]any {
	if data == nil {
		data = []map[string]any{}
	}
	return map[string]any{"object": "list", "data": data, "has_more": false, "url": url}
}

func unix(t time.Time) int64 { return t.Unix() }
