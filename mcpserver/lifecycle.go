package mcpserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/mcpadopt"
)

// How the HTTP endpoint tells that a client is gone. Claude Code and
// Gemini CLI never send HTTP DELETE when they exit; Codex does. Every
// client of the official TypeScript SDK holds the session's event stream
// (a GET) open while it runs, and the stream closes with the process. So:
//   - a session whose client held its stream and dropped it, with no
//     request running or arriving for StreamGoneGrace, has ended: its
//     agent's shell closes (the grace lets a client reconnect the stream);
//   - a session that never opened a stream ends after SessionIdleTimeout
//     without a request, as before;
//   - DELETE ends a session at once.
const (
	StreamGoneGrace = 10 * time.Second
	// MaxSessions caps the sessions (each with its own shell) one
	// endpoint serves at once.
	MaxSessions = 32
	// maxIdleConns caps keep-alive connections waiting for a request;
	// the oldest is closed past it.
	maxIdleConns = 64
	// idleConnTimeout closes a keep-alive connection with no request.
	idleConnTimeout = 30 * time.Second
)

const (
	sessionHeader         = mcpadopt.SessionHeader
	protocolVersionHeader = mcpadopt.ProtocolVersionHeader
)

var tooManySessions = fmt.Sprintf("this endpoint already serves %d MCP sessions, each with its own shell: end one (its agent exits, or sends DELETE), or restart the endpoint (mcp/stop, mcp/start)", MaxSessions)

// watch follows each session's requests and event streams, to end the
// sessions whose clients are gone, and caps new sessions.
type watch struct {
	s     *Server
	grace time.Duration
	adopt bool // serve unknown session ids (HTTPOptions.AdoptSessions)

	mu       sync.Mutex
	sessions map[string]*watched
}

type watched struct {
	streams, inflight int
	sawStream         bool
	last              time.Time
	timer             *time.Timer
}

func newWatch(s *Server, grace time.Duration) *watch {
	return &watch{s: s, grace: grace, sessions: map[string]*watched{}}
}

// handler wraps the SDK's handler.
func (w *watch) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		if id == "" && r.Method == http.MethodPost {
			id, method, stateless := statelessRequest(r, heldBytes(r))
			if stateless {
				w.s.answerStateless(rw, id, method)
				return
			}
			if method == "initialize" {
				if w.s.liveSessions() >= MaxSessions {
					writeJSON(rw, http.StatusServiceUnavailable, rpcError(nil, -32000, tooManySessions, nil))
					return
				}
				// One session is made at a time: an adopted one takes
				// the id the SDK asks for next (adopt.go).
				w.s.adopter.Making.Lock()
				defer w.s.adopter.Making.Unlock()
			}
		}
		if id != "" && w.adopt && (r.Method == http.MethodPost || r.Method == http.MethodGet) && !w.s.knows(id) {
			if w.s.liveSessions() >= MaxSessions {
				writeJSON(rw, http.StatusServiceUnavailable, rpcError(nil, -32000, tooManySessions, nil))
				return
			}
			if err := w.s.adoptSession(r, next, id); err != nil {
				w.s.log.Warn("an MCP session an earlier endpoint gave could not be taken over", "session", id, "error", err)
			}
		}
		if id == "" {
			// A session is followed from its first request that names it.
			next.ServeHTTP(rw, r)
			return
		}
		stream := r.Method == http.MethodGet
		w.begin(id, stream)
		defer w.end(id, stream)
		next.ServeHTTP(rw, r)
	})
}

func (w *watch) begin(id string, stream bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.sessions[id]
	if s == nil {
		s = &watched{}
		w.sessions[id] = s
	}
	if stream {
		s.streams++
		s.sawStream = true
	} else {
		s.inflight++
	}
	s.last = time.Now()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

func (w *watch) end(id string, stream bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.sessions[id]
	if s == nil {
		return
	}
	if stream {
		s.streams--
	} else {
		s.inflight--
	}
	s.last = time.Now()
	if s.sawStream && s.streams == 0 && s.inflight == 0 && s.timer == nil {
		s.timer = time.AfterFunc(w.grace, func() { w.expire(id) })
	}
}

// expire ends a session whose client dropped its stream and sent nothing
// since.
func (w *watch) expire(id string) {
	w.mu.Lock()
	s := w.sessions[id]
	gone := s != nil && s.streams == 0 && s.inflight == 0 && time.Since(s.last) >= w.grace
	if gone {
		delete(w.sessions, id)
	} else if s != nil {
		s.timer = nil
	}
	w.mu.Unlock()
	if gone {
		w.s.log.Info("an MCP client dropped its event stream and went quiet; ending its session", "session", id)
		w.s.closeSessionID(id)
	}
}

// forget drops what is known of a session that ended otherwise.
func (w *watch) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.sessions[id]; s != nil && s.timer != nil {
		s.timer.Stop()
	}
	delete(w.sessions, id)
}

// heldBytes is the body holdBody read.
func heldBytes(r *http.Request) []byte {
	if b, ok := r.Body.(heldBody); ok {
		return b.b
	}
	return nil
}

// rpcError is a JSON-RPC error response (id nil: JSON's null), which MCP
// clients show as it is.
func rpcError(id json.RawMessage, code int64, msg string, data any) []byte {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return b
}

// writeJSON answers an HTTP request with a JSON body.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// idleConns closes the oldest keep-alive connection waiting for a request
// once more than max wait: any local process could otherwise hold
// connections without bound.
type idleConns struct {
	max int

	mu    sync.Mutex
	order []net.Conn // idle connections, oldest first
}

func (c *idleConns) state(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	for i, x := range c.order {
		if x == conn {
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			break
		}
	}
	var oldest net.Conn
	if st == http.StateIdle {
		c.order = append(c.order, conn)
		if len(c.order) > c.max {
			oldest, c.order = c.order[0], c.order[1:]
		}
	}
	c.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}
