package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the endpoint serves MCP.
const Path = "/mcp"

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
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: SessionIdleTimeout, Logger: s.sdkLog})
	grace := o.StreamGoneGrace
	if grace <= 0 {
		grace = StreamGoneGrace
	}
	w := newWatch(s, grace)
	w.adopt = o.AdoptSessions
	s.mu.Lock()
	s.watch = w
	s.mu.Unlock()
	idle := &idleConns{max: maxIdleConns}
	e.srv = &http.Server{
		Handler:           guard(w.handler(h), e.Token, port, o.AllowedOrigins),
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

func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
