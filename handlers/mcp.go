package handlers

import (
	"context"
	"fmt"
	"sync"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

type MCPEndpoint struct {
	URL      string
	Token    string
	Port     int
	Sessions func() int
	Close    func(context.Context) error
}

// MCPStarter opens an MCP endpoint over a session: Streamable HTTP on
// 127.0.0.1:at.Port (0 picks one), guarded by at.Token or, without one, a
// new token. With a token it takes over the MCP sessions an earlier
// endpoint on that port and token gave (an attached conversation's
// agent's). cmd/oh-bridge wires package mcpserver in, so this face does
// not import another.
type MCPStarter func(sess *session.Session, at conversation.Listen, allowedOrigins []string) (*MCPEndpoint, error)

// mcpState is the endpoint, while one runs.
type mcpState struct {
	mu sync.Mutex
	ep *MCPEndpoint
}

type mcpStartParams struct {
	Port           *int     `json:"port"`
	AllowedOrigins []string `json:"allowedOrigins"`
}

type mcpStatusResult struct {
	Serving  bool        `json:"serving"`
	URL      string      `json:"url,omitempty"`
	Token    string      `json:"token,omitempty"`
	Sessions int         `json:"sessions"`
	Agents   []agentInfo `json:"agents"`
}

// agentInfo is an agent using the session's tools, oldest first.
type agentInfo struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	TerminalID string `json:"terminalId"`
	Calls      int64  `json:"calls"`
	Rejected   int64  `json:"rejected"`
	SinceMs    int64  `json:"sinceMs"`
}

type mcpUnavailableError struct{ msg string }

func (e *mcpUnavailableError) Error() string { return e.msg }
func (e *mcpUnavailableError) Kind() string  { return "mcp_unavailable" }

func (h *Handlers) mcpStart(ctx context.Context, p *mcpStartParams) (*mcpStatusResult, error) {
	if p.Port != nil && (*p.Port < 0 || *p.Port > 65535) {
		return nil, rpc.InvalidParams("port", "a TCP port between 1 and 65535, or 0 (or no port) for any free one")
	}
	sess := h.workspaceSession()
	if sess == nil {
		return nil, rpc.NewError(rpc.CodeInternalError, "the workspace is not open: initialize first", nil)
	}
	if h.cfg.StartMCP == nil {
		return nil, &mcpUnavailableError{"this bridge was built without MCP"}
	}
	m := &h.mcp
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ep != nil {
		if p.Port != nil && *p.Port != 0 && *p.Port != m.ep.Port {
			return nil, &mcpUnavailableError{fmt.Sprintf("MCP is already served at %s; call mcp/stop first to move it to port %d", m.ep.URL, *p.Port)}
		}
		return h.mcpStatusLocked(sess), nil
	}
	port := 0
	if p.Port != nil {
		port = *p.Port
	}
	ep, err := h.cfg.StartMCP(sess, conversation.Listen{Port: port}, p.AllowedOrigins)
	if err != nil {
		return nil, &mcpUnavailableError{err.Error()}
	}
	m.ep = ep
	h.log.Info("MCP endpoint started", "url", ep.URL)
	return h.mcpStatusLocked(sess), nil
}

func (h *Handlers) mcpStop(ctx context.Context, _ *noParams) (*mcpStatusResult, error) {
	h.stopMCP(ctx)
	return &mcpStatusResult{Agents: []agentInfo{}}, nil
}

func (h *Handlers) mcpStatus(ctx context.Context, _ *noParams) (*mcpStatusResult, error) {
	m := &h.mcp
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.mcpStatusLocked(h.workspaceSession()), nil
}

func (h *Handlers) mcpStatusLocked(sess *session.Session) *mcpStatusResult {
	m := &h.mcp
	res := &mcpStatusResult{Agents: []agentInfo{}}
	if m.ep != nil {
		res.Serving, res.URL, res.Token, res.Sessions = true, m.ep.URL, m.ep.Token, m.ep.Sessions()
	}
	if sess != nil {
		for _, a := range sess.Agents() {
			res.Agents = append(res.Agents, agentInfo{ID: a.ID, Name: a.Name, TerminalID: a.TerminalID,
				Calls: a.Calls, Rejected: a.Rejected, SinceMs: a.Since.Milliseconds()})
		}
	}
	return res
}

// stopMCP closes the endpoint, if one runs, ending its sessions.
func (h *Handlers) stopMCP(ctx context.Context) {
	m := &h.mcp
	m.mu.Lock()
	ep := m.ep
	m.ep = nil
	m.mu.Unlock()
	if ep != nil {
		if err := ep.Close(ctx); err != nil {
			h.log.Warn("closing the MCP endpoint", "error", err)
		}
		h.log.Info("MCP endpoint stopped")
	}
}
