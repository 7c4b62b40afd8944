package facekit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/session"
)

// StartMCP opens an MCP endpoint over a session: Streamable HTTP on
// 127.0.0.1:at.Port (0 picks one), guarded by at.Token or, without one, a
// fresh token. With a token it takes over the MCP sessions an earlier
// endpoint on that port and token gave (an attached conversation's
// agent's). allowedOrigins are the browser origins the guard lets
// through. The one StartMCP is mcpserver.Starter; cmd/oh-bridge hands it
// to the faces, so that a face does not import another.
type StartMCP func(sess *session.Session, at conversation.Listen, allowedOrigins []string) (conversation.Endpoint, error)

// UnavailableError is an MCP endpoint that cannot be had: this build
// serves no MCP, one runs elsewhere, or it could not listen.
type UnavailableError struct{ Why string }

func (e *UnavailableError) Error() string { return e.Why }

// Kind returns "mcp_unavailable".
func (e *UnavailableError) Kind() string { return "mcp_unavailable" }

var errNoMCP = &UnavailableError{"this bridge was built without MCP"}

// MCP is a face's MCP endpoints: the shared one (the editor's mcp/start,
// which the person may hand to any agent and which outlives
// conversations), and those made for one conversation's agent alone,
// which close with its link. Its zero value serves none: set Start.
type MCP struct {
	Start StartMCP   // nil: this build serves no MCP
	Relay StartRelay // nil: this build reaches no relay
	Log   *slog.Logger

	mu     sync.Mutex
	shared *conversation.Endpoint
}

func (m *MCP) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}

// Serve starts the shared endpoint over sess at port (0: any free one),
// or returns the one running; one running on another port is an error
// that says how to move it.
func (m *MCP) Serve(sess *session.Session, port int, allowedOrigins []string) (conversation.Endpoint, error) {
	if m.Start == nil {
		return conversation.Endpoint{}, errNoMCP
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shared != nil {
		if port != 0 && port != m.shared.Port() {
			return conversation.Endpoint{}, &UnavailableError{fmt.Sprintf("MCP is already served at %s; call mcp/stop first to move it to port %d", m.shared.URL, port)}
		}
		return *m.shared, nil
	}
	ep, err := m.Start(sess, conversation.Listen{Port: port}, allowedOrigins)
	if err != nil {
		return conversation.Endpoint{}, &UnavailableError{err.Error()}
	}
	m.shared = &ep
	m.log().Info("MCP endpoint started", "url", ep.URL)
	return ep, nil
}

// Running is the shared endpoint, while one runs.
func (m *MCP) Running() (conversation.Endpoint, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shared == nil {
		return conversation.Endpoint{}, false
	}
	return *m.shared, true
}

// Stop closes the shared endpoint, if one runs, ending its MCP sessions.
func (m *MCP) Stop(ctx context.Context) {
	m.mu.Lock()
	ep := m.shared
	m.shared = nil
	m.mu.Unlock()
	if ep == nil {
		return
	}
	if err := ep.Close(ctx); err != nil {
		m.log().Warn("closing the MCP endpoint", "error", err)
	}
	m.log().Info("MCP endpoint stopped")
}

// Shared is conversation.Options.MCP for a face whose conversations use
// the shared endpoint (the editor's): a new conversation's agent gets the
// running one, or one started on a free port, and it stays when the
// conversation ends. An attached conversation's agent reaches its tools
// where it did when it was created (at): the running endpoint if that is
// it, else the shared endpoint started there when none runs, else one
// there for this conversation alone, closed with it.
func (m *MCP) Shared(sess *session.Session) func(context.Context, conversation.Listen) (conversation.Endpoint, error) {
	return func(_ context.Context, at conversation.Listen) (conversation.Endpoint, error) {
		if at == (conversation.Listen{}) {
			ep, err := m.Serve(sess, 0, nil)
			return withoutClose(ep), err
		}
		if m.Start == nil {
			return conversation.Endpoint{}, errNoMCP
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.shared != nil && m.shared.Port() == at.Port && m.shared.Token == at.Token {
			return withoutClose(*m.shared), nil
		}
		ep, err := m.Start(sess, at, nil)
		if err != nil {
			return conversation.Endpoint{}, err
		}
		if m.shared == nil {
			m.shared = &ep
			m.log().Info("MCP endpoint started where the attached conversation's agent reaches it", "url", ep.URL)
			return withoutClose(ep), nil
		}
		return ep, nil
	}
}

// Private is conversation.Options.MCP for a face whose conversations each
// have an endpoint of their own (ACP's sessions): where a loaded or
// resumed conversation's agent reaches its tools (at), anywhere for a new
// one; it closes with the conversation's link.
func (m *MCP) Private(sess *session.Session) func(context.Context, conversation.Listen) (conversation.Endpoint, error) {
	return func(_ context.Context, at conversation.Listen) (conversation.Endpoint, error) {
		if m.Start == nil {
			return conversation.Endpoint{}, errNoMCP
		}
		return m.Start(sess, at, nil)
	}
}

// withoutClose is a shared endpoint as a conversation's link holds it:
// the link must not close it.
func withoutClose(ep conversation.Endpoint) conversation.Endpoint {
	ep.Close = nil
	return ep
}

// Relay is where a face's conversations reach their tools when their
// agent-server runs on another machine: an oh-bridge relay there, which
// the bridge dials out to (docs/relay.md). The zero value is none.
type Relay struct {
	// URL is the relay's editors' side.
	URL string
	// Secret is the pairing secret the relay was started with.
	Secret string
}

// On says whether a relay is set.
func (r Relay) On() bool { return r.URL != "" }

// StartRelay registers the session with the relay as a window, if it is
// not yet, and binds a new conversation to it: the endpoint its agent's
// mcp_config names (the relay's URL and the conversation's token), with
// Via saying where the calls come from. The one StartRelay is
// cmd/oh-bridge's, over relaylink.
type StartRelay func(ctx context.Context, sess *session.Session, relay Relay) (conversation.Endpoint, error)

// Relayed is conversation.Options.MCP for a conversation whose
// agent-server reaches the person's window only through a relay: a new
// conversation is bound to this session's window there. An attached one
// (at set) names a local endpoint, and gets what withoutRelay gives.
func (m *MCP) Relayed(sess *session.Session, relay Relay, withoutRelay func(context.Context, conversation.Listen) (conversation.Endpoint, error)) func(context.Context, conversation.Listen) (conversation.Endpoint, error) {
	return func(ctx context.Context, at conversation.Listen) (conversation.Endpoint, error) {
		if at != (conversation.Listen{}) {
			return withoutRelay(ctx, at)
		}
		if m.Relay == nil {
			return conversation.Endpoint{}, &UnavailableError{"this build cannot reach a relay"}
		}
		ep, err := m.Relay(ctx, sess, relay)
		if err != nil {
			return conversation.Endpoint{}, err
		}
		m.log().Info("conversation bound through the relay", "relay", relay.URL, "via", ep.Via)
		return ep, nil
	}
}
