// Package sameorigin tells a change a browser sent from this site's own
// pages from one another site's page made it send: the one check both
// operator UIs (the console's forms, asynqmon's calls) make before a
// request that changes something, since a browser attaches their
// credentials (a cookie, a Basic-auth password) to either.
package sameorigin

import (
	"net/http"
	"net/url"
)

// Source is what a request says of the page that sent it.
type Source int

const (
	// Unstated: neither Origin nor Referer (not a browser, or a page that
	// suppressed both; browsers send Origin with every POST and DELETE).
	Unstated Source = iota
	// Same: this scheme and host.
	Same
	// Cross: another scheme or host, an opaque "null" origin, or a header
	// that does not parse.
	Cross
)

// Of reads a request's Origin or, without one, its Referer: Origin wins,
// as a page cannot forge it, and Referer stands in for browsers and
// requests that omit Origin.
func Of(r *http.Request) Source {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return Unstated
	}
	u, err := url.Parse(from)
	if err != nil || u.Host == "" {
		return Cross
	}
	scheme := "http"
	if OverTLS(r) {
		scheme = "https"
	}
	if u.Host == r.Host && u.Scheme == scheme {
		return Same
	}
	return Cross
}

// OverTLS reports whether the browser reached this server over TLS: to this
// process, or to a proxy in front that says so. A cross-site page cannot
// set X-Forwarded-Proto, so trusting it here opens nothing to CSRF.
func OverTLS(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}
