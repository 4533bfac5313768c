package console

import (
	"net/http"

	"orderflow/api/sameorigin"

	"go.uber.org/zap"
)

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	_, ok, err := c.sessions.valid(r)
	if err != nil {
		c.log.Warn("console session not checked; showing the login", zap.Error(err))
	}
	if ok {
		http.Redirect(w, r, "/console/", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", "Log in", "")
}

// login trades an operator's token, typed into the form, for a session
// cookie in that operator's name.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if sameorigin.Of(r) == sameorigin.Cross {
		http.Error(w, "cross-site request refused", http.StatusForbidden)
		return
	}
	op, ok := c.sessions.ops.ByToken(r.PostFormValue("token"))
	if !ok {
		c.log.Warn("console login refused")
		c.render(w, r, http.StatusUnauthorized, "login", "Log in", "That is no operator's token.")
		return
	}
	value, err := c.sessions.issue(r.Context(), op)
	if err != nil {
		c.unavailable(w, r, err)
		return
	}
	c.log.Info("console login", zap.String("operator", op.Name), zap.String("role", string(op.Role)))
	setCookie(w, r, sessionCookie, value, int(sessionTTL.Seconds()))
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// logout ends the session in the ledger, so a copy of its cookie (another
// browser, a proxy's log) is refused too, then drops this browser's.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	sess, _ := sessionOf(r) // action admitted it
	if err := c.sessions.end(r.Context(), sess); err != nil {
		c.unavailable(w, r, err)
		return
	}
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}
