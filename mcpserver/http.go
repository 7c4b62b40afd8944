package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the endpoint serves MCP.
const Path = "/mcp"

// BodyTimeout bounds the time a request's body takes to arrive once its
// headers have: a client that trickles a body is answered 408 and its
// connection closed, where it used to hold a connection and its goroutine
// for as long as it liked. A whole MaxMessageSize body takes milliseconds
// on the loopback. The bound is on the body only: the response a request
// streams (a long terminal call) and the event stream a GET holds open
// are not cut by it (TestStreamsOutliveTheBodyDeadline).
const BodyTimeout = 10 * time.Second

// SessionIdleTimeout closes an HTTP session (and its agent's terminal)
// that sent nothing for this long: a client that went away without saying
// so leaves no shell behind for ever.
const SessionIdleTimeout = time.Hour

// Endpoint is a running Streamable HTTP endpoint.
type Endpoint struct {
	URL   string
	Token string
	Port  int

	srv  *http.Server
	done chan struct{}
	s    *Server
}

// HTTPOptions configure an Endpoint.
type HTTPOptions struct {
	// Port to listen on, on 127.0.0.1; 0 picks a free one.
	Port int
	// Token is the bearer token to take; "" makes a fresh random one.
	// A given one is the token of an endpoint that served here before:
	// an attached conversation's agent still sends it.
	Token string
	// AdoptSessions serves a request that names an MCP session this
	// endpoint does not know as that session, initialized on the
	// client's behalf, instead of answering 404: the agent of an attached
	// conversation still holds the session an earlier endpoint on this
	// port and token gave it, and OpenHands' MCP client never starts a new
	// one (a 404 only fails its call with "Session terminated").
	AdoptSessions bool
	// AllowedOrigins are browser origins allowed to call (say the MCP
	// Inspector's "http://localhost:6274"). Requests without an Origin
	// header, as from command-line agents, need none.
	AllowedOrigins []string
	// StreamGoneGrace is how long a session lives on once its client
	// dropped its event stream and went quiet (0: StreamGoneGrace).
	StreamGoneGrace time.Duration
	// AllowUID says whose processes may connect (peers.go); nil: the
	// person's and root's.
	AllowUID func(uid int) bool
	// BodyTimeout is how long a request's body may take to arrive once
	// its headers have (0: BodyTimeout).
	BodyTimeout time.Duration
}

// ListenHTTP opens the endpoint on 127.0.0.1, with the token given or a
// new random one. A port that cannot be listened on comes back as an
// error wrapping the system's (syscall.EADDRINUSE when it is taken).
func (s *Server) ListenHTTP(o HTTPOptions) (*Endpoint, error) {
	if o.Port < 0 || o.Port > 65535 {
		return nil, fmt.Errorf("port %d is not a TCP port (0-65535; 0 picks a free one)", o.Port)
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)))
	if err != nil {
		return nil, fmt.Errorf("cannot listen on 127.0.0.1:%d: %w (pick another port, or 0 for any free one)", o.Port, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	allow := o.AllowUID
	if allow == nil {
		allow = personOrRoot
	}
	ln = &peerListener{Listener: ln, allow: allow, log: s.log}
	token := o.Token
	if token == "" {
		var b [32]byte
		rand.Read(b[:])
		token = base64.RawURLEncoding.EncodeToString(b[:])
	}
	e := &Endpoint{
		URL:   fmt.Sprintf("http://127.0.0.1:%d%s", port, Path),
		Token: token,
		Port:  port,
		done:  make(chan struct{}),
		s:     s,
	}
	// The SDK bounds a body at 4 MiB unless told (go-sdk v1.8.0,
	// mcp/streamable.go: DefaultMaxRequestBodyBytes); stdio takes
	// MaxMessageSize, and so does HTTP.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: SessionIdleTimeout, Logger: s.sdkLog, MaxRequestBodyBytes: MaxMessageSize})
	grace := o.StreamGoneGrace
	if grace <= 0 {
		grace = StreamGoneGrace
	}
	w := newWatch(s, grace)
	w.adopt = o.AdoptSessions
	s.mu.Lock()
	s.watch = w
	s.mu.Unlock()
	bodyTimeout := o.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = BodyTimeout
	}
	idle := &idleConns{max: maxIdleConns}
	e.srv = &http.Server{
		Handler: bodyDeadline(guard(holdBody(w.handler(h), bodyTimeout), e.Token, port, o.AllowedOrigins), bodyTimeout),
		// No ReadTimeout: bodyDeadline bounds a body instead, so that
		// one that does not arrive is answered 408 saying so (the SDK
		// answers a body it cannot read 400 "failed to read body").
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idleConnTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         idle.state,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(e.done)
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("the MCP endpoint stopped", "error", err)
		}
	}()
	s.log.Info("serving MCP over HTTP", "url", e.URL)
	return e, nil
}

// Close stops listening and ends every MCP session, closing the agents'
// terminals.
func (e *Endpoint) Close(ctx context.Context) error {
	e.s.closeSessions()
	err := e.srv.Shutdown(ctx)
	if err != nil {
		e.srv.Close() // streams still open: cut them
	}
	<-e.done
	return nil
}

// guard lets through only requests for this endpoint, from this machine's
// command-line clients or an allowed origin, with the token.
func guard(next http.Handler, token string, port int, allowedOrigins []string) http.Handler {
	hosts := []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("localhost:%d", port)}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(hosts, strings.ToLower(r.Host)) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this endpoint (%s): refused, so that a web page cannot reach it by DNS rebinding", r.Host, hosts[0]))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(allowedOrigins, origin) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Origin %q may not use this endpoint: it serves agents on this machine, not web pages (to allow a browser-based client, pass its origin in allowedOrigins to mcp/start)", origin))
			return
		}
		if r.URL.Path != Path {
			refuse(w, http.StatusNotFound, fmt.Sprintf("nothing is served at %s; MCP is at %s", r.URL.Path, Path))
			return
		}
		auth := r.Header.Get("Authorization")
		if auth == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="oh-bridge"`)
			refuse(w, http.StatusUnauthorized, "missing bearer token: send Authorization: Bearer <token>, with the token mcp/start returned")
			return
		}
		scheme, got, _ := strings.Cut(auth, " ")
		if !strings.EqualFold(scheme, "bearer") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="oh-bridge"`)
			refuse(w, http.StatusUnauthorized, fmt.Sprintf("the Authorization header uses %q; send Authorization: Bearer <token>, with the token mcp/start returned", scheme))
			return
		}
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="oh-bridge", error="invalid_token"`)
			refuse(w, http.StatusUnauthorized, "wrong bearer token: use the token mcp/start returned (it changes each time the endpoint starts)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyDeadline sets a deadline of timeout on reading a request's body, for
// every request that has one, refused ones included: net/http reads what
// is left of a small body before it writes an answer, and without a
// deadline a client that trickles its body would hold that read for ever.
// A request without a body gets none: net/http is already reading the
// connection in the background, to tell when the client goes away, and
// a deadline would end that read, and with it the request's context: a
// GET's event stream would end after timeout.
func bodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// Not every ResponseWriter can (a test's recorder): then
			// there is no connection to hold either.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// heldBody is a request's body, read whole.
type heldBody struct {
	*bytes.Reader
	b []byte
}

func (heldBody) Close() error { return nil }

// holdBody reads a request's body, up to MaxMessageSize, before the SDK
// sees the request, under bodyDeadline's deadline, and lifts it: the
// read net/http starts in the background once the body has ended must
// not fail while a call's answer streams for minutes (net/http lifts it
// too when it starts that read, in Go 1.26; this does not count on it).
func holdBody(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageSize+1))
		r.Body.Close()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			refuse(w, http.StatusRequestTimeout, fmt.Sprintf("the request's body did not arrive within %v of its headers: refused; send the whole request at once", timeout))
			return
		case err != nil:
			refuse(w, http.StatusBadRequest, fmt.Sprintf("reading the request's body: %v", err))
			return
		case len(body) > MaxMessageSize:
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a request's body over %d bytes (%d MiB): refused; MCP messages are limited to %d MiB here, send smaller ones", MaxMessageSize, MaxMessageSize>>20, MaxMessageSize>>20))
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		r.Body = heldBody{bytes.NewReader(body), body}
		next.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
