package console

import (
	"net/http"

	"orderflow/api/sameorigin"
)

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.sessions.valid(r); ok {
		http.Redirect(w, r, "/console/", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "login", "Log in", "")
}

// login trades the admin token, typed into the form, for a session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if sameorigin.Of(r) == sameorigin.Cross {
		http.Error(w, "cross-site request refused", http.StatusForbidden)
		return
	}
	if !c.sessions.isAdmin(r.PostFormValue("token")) {
		c.log.Warn("console login refused")
		c.render(w, r, http.StatusUnauthorized, "login", "Log in", "That is not the admin token.")
		return
	}
	setCookie(w, r, sessionCookie, c.sessions.issue(), int(sessionTTL.Seconds()))
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}
