package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	sessionCookie = "orderflow_console"
	flashCookie   = "orderflow_console_flash"
	sessionTTL    = 12 * time.Hour
	csrfField     = "csrf"
)

// sessions signs the console's session cookies and CSRF tokens with a key
// derived from the admin token: the cookie holds an expiry and its HMAC,
// never the token, and a new admin token ends every session.
type sessions struct {
	adminToken string
	key        []byte
	now        func() time.Time
}

func newSessions(adminToken string, now func() time.Time) *sessions {
	m := hmac.New(sha256.New, []byte(adminToken))
	m.Write([]byte("orderflow console session key"))
	return &sessions{adminToken: adminToken, key: m.Sum(nil), now: now}
}

func (s *sessions) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(m.Sum(nil))
}

// isAdmin compares a typed token with the admin token in constant time.
func (s *sessions) isAdmin(token string) bool {
	return s.adminToken != "" && token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.adminToken)) == 1
}

// issue returns a new session cookie's value: "<expiry unix>.<hmac>".
func (s *sessions) issue() string {
	exp := strconv.FormatInt(s.now().Add(sessionTTL).Unix(), 10)
	return exp + "." + s.mac("session", exp)
}

// valid reports whether a request carries an unexpired session cookie,
// and returns its value.
func (s *sessions) valid(r *http.Request) (string, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", false
	}
	exp, sig, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.mac("session", exp))) {
		return "", false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.now().Before(time.Unix(unix, 0)) {
		return "", false
	}
	return c.Value, true
}

// csrf is the token every form of a session carries.
func (s *sessions) csrf(session string) string { return s.mac("csrf", session) }

// sameOrigin reports whether a request's Origin (or, without one, its
// Referer) names this scheme and host; a request with neither passes, left to the
// CSRF token and the SameSite=Strict cookie.
func sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return true
	}
	u, err := url.Parse(from)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if overTLS(r) {
		scheme = "https"
	}
	return u.Host == r.Host && u.Scheme == scheme
}

// overTLS reports whether the browser reached the console over TLS: to this
// process, or to a proxy in front that says so. A cross-site form cannot
// set X-Forwarded-Proto, so trusting it here opens nothing to CSRF.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/console/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	})
}

// flash leaves a one-time message for the page the browser is sent to
// next (post/redirect/get).
func flash(w http.ResponseWriter, r *http.Request, msg string) {
	setCookie(w, r, flashCookie, url.QueryEscape(msg), 60)
}

// takeFlash reads and clears the message left by the last action.
func takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	setCookie(w, r, flashCookie, "", -1)
	msg, _ := url.QueryUnescape(c.Value)
	return msg
}
