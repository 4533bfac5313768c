// Package console is the operator console at /console/: server-rendered
// pages (templates embedded in the binary, no build step, no CDN) over the
// same use cases the admin API calls. A login with an operator's token
// starts a session in the ledger and gives its signed cookie; every form
// carries a CSRF token derived from it; a log-out ends it. Any operator
// reads; a viewer's actions are refused (403).
package console

import (
	"bytes"
	"context"
	"crypto/hmac"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"time"

	"orderflow/api/httperr"
	"orderflow/api/sameorigin"
	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/operators"
	"orderflow/svc"

	"go.uber.org/zap"
)

//go:embed templates/*.html
var templateFS embed.FS

// Console serves /console/.
type Console struct {
	uc       *svc.UseCases
	sc       *svc.ServiceContext
	sources  metrics.Sources
	sessions *sessions
	log      *zap.Logger
	pages    map[string]*template.Template
}

// New builds the console on a service context and its use cases.
func New(sc *svc.ServiceContext, uc *svc.UseCases) *Console {
	c := &Console{uc: uc, sc: sc, log: sc.Log.Named("console"),
		sources:  metrics.Sources{Store: sc.Store, Inspector: sc.Inspector, Clock: sc.Clock},
		sessions: newSessions(sc.Config.Operators(), sc.Store, sc.Clock.Now),
		pages:    map[string]*template.Template{},
	}
	for _, p := range []string{"login", "needs", "story", "glance", "statements"} {
		c.pages[p] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+p+".html"))
	}
	return c
}

// Mount adds the console's routes to a mux.
func (c *Console) Mount(mux *http.ServeMux) {
	mux.Handle("GET /console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	mux.HandleFunc("GET /console/login", c.loginPage)
	mux.HandleFunc("POST /console/login", c.login)
	mux.Handle("POST /console/logout", c.action(operators.RoleViewer, c.logout))

	mux.Handle("GET /console/{$}", c.page(c.needs))
	mux.Handle("GET /console/story", c.page(c.story))
	mux.Handle("GET /console/glance", c.page(c.glance))
	mux.Handle("GET /console/statements", c.page(c.statements))

	mux.Handle("POST /console/orders/{no}/retry", c.act(c.retryOrder))
	mux.Handle("POST /console/orders/{no}/refund", c.act(c.refundOrder))
	mux.Handle("POST /console/orders/{no}/reveal", c.act(c.reveal))
	mux.Handle("POST /console/refunds/{no}/retry", c.act(c.retryRefund))
	mux.Handle("POST /console/refunds/{no}/resolve", c.act(c.resolveRefund))
	mux.Handle("POST /console/groups/{no}/retry", c.act(c.retryGroup))
	mux.Handle("POST /console/statements/runs", c.act(c.runStatement))
	mux.Handle("POST /console/statements/breaks/{id}/resolve", c.act(c.resolveBreak))

	// Anything else under /console/: the login for strangers, 404 for the admin.
	mux.Handle("/console/", c.page(http.NotFound))
}

// page admits a GET with a valid session; anyone else is sent to the login
// (or, for a method other than GET/HEAD, answered 401).
func (c *Console) page(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := c.signedIn(w, r, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				toLogin(w, r)
				return
			}
			http.Redirect(w, r, "/console/login", http.StatusSeeOther)
		})
		if !ok {
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		next(w, withSession(r, sess))
	})
}

// signedIn is the request's valid session. Without one it answers and
// returns false: unavailable when the sessions cannot be read, otherwise
// as stranger does.
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request, stranger http.HandlerFunc) (session, bool) {
	sess, ok, err := c.sessions.valid(r)
	if err != nil {
		c.unavailable(w, r, err)
		return session{}, false
	}
	if !ok {
		stranger(w, r)
	}
	return sess, ok
}

// toLogin answers a request without a session 401, pointing at the login.
func toLogin(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "log in at /console/login", http.StatusUnauthorized)
}

// act admits an action (a POST that changes something) of an operator or
// an admin; a viewer's is refused.
func (c *Console) act(next http.HandlerFunc) http.Handler {
	return c.action(operators.NeedFor(http.MethodPost), next)
}

// action admits a POST with a valid session whose role covers need, from
// this site (Origin or Referer, when sent), carrying the session's CSRF
// token.
func (c *Console) action(need operators.Role, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := c.signedIn(w, r, toLogin)
		if !ok {
			return
		}
		if sameorigin.Of(r) == sameorigin.Cross {
			c.log.Warn("cross-site console post refused", zap.String("path", r.URL.Path), zap.String("origin", r.Header.Get("Origin")), zap.String("referer", r.Header.Get("Referer")))
			http.Error(w, "cross-site request refused", http.StatusForbidden)
			return
		}
		if !validCSRF(r.PostFormValue(csrfField), c.sessions.csrf(sess.value)) {
			http.Error(w, "missing or stale form token: reload the page", http.StatusForbidden)
			return
		}
		if !sess.op.Role.Covers(need) {
			c.log.Warn("console action refused", zap.String("operator", sess.op.Name), zap.String("role", string(sess.op.Role)), zap.String("path", r.URL.Path))
			http.Error(w, "forbidden: "+sess.op.Name+" is a "+string(sess.op.Role)+" and may only read", http.StatusForbidden)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		next(w, withSession(r, sess))
	})
}

func validCSRF(got, want string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(want))
}

// view is what every page's layout needs.
type view struct {
	Title    string
	Nav      string
	CSRF     string
	Flash    string
	Operator operators.Operator // who is logged in (empty on the login page)
	// CanAct shows the action forms: a viewer's page has none (and the
	// server refuses a viewer's post anyway).
	CanAct bool
	Data   any
}

// showView renders page with the view load builds, or the error page when
// it cannot be built.
func showView[V any](c *Console, w http.ResponseWriter, r *http.Request, page, title string, load func(context.Context) (V, error)) {
	v, err := load(r.Context())
	if c.failed(w, r, err) {
		return
	}
	c.render(w, r, http.StatusOK, page, title, v)
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	v := view{Title: title, Nav: page, Data: data}
	if sess, ok := sessionOf(r); ok {
		v.CSRF = c.sessions.csrf(sess.value)
		v.Flash = takeFlash(w, r)
		v.Operator = sess.op
		v.CanAct = sess.op.Role.Covers(operators.NeedFor(http.MethodPost))
	}
	var buf bytes.Buffer
	if err := c.pages[page].Execute(&buf, v); err != nil {
		c.log.Error("render", zap.String("page", page), zap.Error(err))
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// unavailable answers a request the ledger could not serve: its session
// can be neither checked, started nor ended, so nothing was done.
func (c *Console) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	c.log.Error("console session", zap.String("path", r.URL.Path), zap.Error(err))
	http.Error(w, "the ledger is unreachable; try again", http.StatusServiceUnavailable)
}

// failed renders an error page for a failure the operator cannot fix by
// retrying the same request; it reports whether err was one.
func (c *Console) failed(w http.ResponseWriter, r *http.Request, err error) bool {
	if err == nil {
		return false
	}
	status := http.StatusInternalServerError
	msg := "something went wrong; see the API's log"
	var ae *apperr.Error
	if errors.As(err, &ae) {
		status, msg = httperr.Status(err), ae.Message
	} else {
		c.log.Error("console", zap.String("path", r.URL.Path), zap.Error(err))
	}
	c.render(w, r, status, "needs", "Error", needsView{Error: msg})
	return true
}

// since is how long ago t was, for a row's age.
func (c *Console) since(t time.Time) time.Duration { return c.sc.Clock.Now().Sub(t) }
