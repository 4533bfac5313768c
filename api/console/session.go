package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"orderflow/api/sameorigin"
	"orderflow/internal/infra/operators"
)

const (
	sessionCookie = "orderflow_console"
	flashCookie   = "orderflow_console_flash"
	sessionTTL    = 12 * time.Hour
	csrfField     = "csrf"
)

// sessions starts, checks and ends the console's sessions. Each log-in is
// a row in the ledger (console_sessions); its cookie names the row and the
// operator who logged in, and is signed, with its expiry, by a key derived
// from every operator's token and role: the cookie never holds a token, a
// changed token or role ends every session, and a log-out ends the row's
// session on every API process, every copy of its cookie with it.
type sessions struct {
	ops   *operators.Set
	key   []byte
	store sessionLedger
	now   func() time.Time
}

// sessionLedger is where the sessions' rows live (the ledger's
// console_sessions, model.Store).
type sessionLedger interface {
	StartConsoleSession(ctx context.Context, id string, at, expires time.Time) error
	ConsoleSessionLive(ctx context.Context, id string) (bool, error)
	EndConsoleSession(ctx context.Context, id string, at time.Time) (bool, error)
}

func newSessions(ops *operators.Set, store sessionLedger, now func() time.Time) *sessions {
	return &sessions{ops: ops, key: ops.Key("orderflow console session key"), store: store, now: now}
}

func (s *sessions) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(m.Sum(nil))
}

// session is a console session as its cookie carries it.
type session struct {
	id    string             // its row in console_sessions
	value string             // the cookie's whole value, which the CSRF token is derived from
	op    operators.Operator // who logged in, with the role the configuration gives them now
}

// issue starts a session in the ledger for an operator and returns its
// cookie's value.
func (s *sessions) issue(ctx context.Context, op operators.Operator) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("console session id: %w", err)
	}
	id, now := hex.EncodeToString(b[:]), s.now()
	exp := now.Add(sessionTTL)
	if err := s.store.StartConsoleSession(ctx, id, now, exp); err != nil {
		return "", fmt.Errorf("start console session: %w", err)
	}
	return s.sign(id, exp, op.Name), nil
}

// sign is a session cookie's value: "<id>.<expiry unix>.<hmac>.<operator
// name>" (the name last, as it may hold dots).
func (s *sessions) sign(id string, exp time.Time, name string) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	return id + "." + e + "." + s.mac("session", id, e, name) + "." + name
}

// signed checks a cookie value's signature and expiry without reading the
// ledger, and returns the session's id and its operator name: a forged or
// expired cookie costs no query.
func (s *sessions) signed(value string) (id, name string, ok bool) {
	parts := strings.SplitN(value, ".", 4)
	if len(parts) != 4 {
		return "", "", false
	}
	id, exp, sig, name := parts[0], parts[1], parts[2], parts[3]
	if !hmac.Equal([]byte(sig), []byte(s.mac("session", id, exp, name))) {
		return "", "", false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.now().Before(time.Unix(unix, 0)) {
		return "", "", false
	}
	return id, name, true
}

// valid reports whether a request carries a live session: a signed,
// unexpired cookie of a configured operator whose session has not been
// ended (one primary-key read of the ledger). err is the ledger's: the
// request can be neither admitted nor refused.
func (s *sessions) valid(r *http.Request) (session, bool, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false, nil
	}
	id, name, ok := s.signed(c.Value)
	if !ok {
		return session{}, false, nil
	}
	op, ok := s.ops.ByName(name)
	if !ok {
		return session{}, false, nil
	}
	live, err := s.store.ConsoleSessionLive(r.Context(), id)
	if err != nil || !live {
		return session{}, false, err
	}
	return session{id: id, value: c.Value, op: op}, true, nil
}

// end ends a session in the ledger: its cookie, and every copy of it, is
// refused from now on by every API process.
func (s *sessions) end(ctx context.Context, sess session) error {
	if _, err := s.store.EndConsoleSession(ctx, sess.id, s.now()); err != nil {
		return fmt.Errorf("end console session: %w", err)
	}
	return nil
}

type sessionKey struct{}

// withSession is r carrying the session its guard admitted it with, and
// its operator for the handlers (operators.FromContext).
func withSession(r *http.Request, sess session) *http.Request {
	ctx := operators.WithOperator(r.Context(), sess.op)
	return r.WithContext(context.WithValue(ctx, sessionKey{}, sess))
}

// sessionOf is the session a request was admitted with (false: none, as
// on the login page).
func sessionOf(r *http.Request) (session, bool) {
	sess, ok := r.Context().Value(sessionKey{}).(session)
	return sess, ok
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
