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

	"orderflow/api/sameorigin"
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

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/console/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: sameorigin.OverTLS(r),
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
