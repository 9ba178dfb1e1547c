package send

import (
	"errors"
	"net/http"
)

// errCrossHostRedirect: an answer redirected a request to another host (or
// scheme). It is not followed, since the client's round trippers (the
// envelope's X-Sentry-Auth, `headers:`, the auth extension's credentials,
// the management API's token) would add their credentials to the request
// to that host too: net/http strips only Authorization and Cookie on a
// redirect, and only those it set itself.
var errCrossHostRedirect = errors.New("redirect to another host refused: credentials stay with their host")

// maxRedirects is net/http's own limit of redirects within one host.
const maxRedirects = 10

// sameHostRedirects is every client's CheckRedirect: a redirect is followed
// only to the scheme and host (with port) of the request it began with.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return errCrossHostRedirect
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}
