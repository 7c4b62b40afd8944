package ohtest

import "net/http"

// Headers is an http.RoundTripper for tests' clients: it sets Set on
// every request, then sends it with Next (http.DefaultTransport when
// nil). An endpoint's bearer token (Bearer), a proxy's forwarded headers.
type Headers struct {
	Set  map[string]string
	Next http.RoundTripper
}

// Bearer sends every request with "Authorization: Bearer token".
func Bearer(token string, next http.RoundTripper) Headers {
	return Headers{Set: map[string]string{"Authorization": "Bearer " + token}, Next: next}
}

func (h Headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.Set {
		r.Header.Set(k, v)
	}
	next := h.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}
