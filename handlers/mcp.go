package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

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

func (h *Handlers) mcpStart(ctx context.Context, p *mcpStartParams) (*mcpStatusResult, error) {
	if p.Port != nil && (*p.Port < 0 || *p.Port > 65535) {
		return nil, rpc.InvalidParams("port", "a TCP port between 1 and 65535, or 0 (or no port) for any free one")
	}
	sess := h.workspaceSession()
	if sess == nil {
		return nil, rpc.NewError(rpc.CodeInternalError, "the workspace is not open: initialize first", nil)
	}
	port := 0
	if p.Port != nil {
		port = *p.Port
	}
	if _, err := h.mcp.Serve(sess, port, p.AllowedOrigins); err != nil {
		return nil, err
	}
	return h.mcpStatusNow(sess), nil
}

func (h *Handlers) mcpStop(ctx context.Context, _ *noParams) (*mcpStatusResult, error) {
	h.mcp.Stop(ctx)
	return &mcpStatusResult{Agents: []agentInfo{}}, nil
}

func (h *Handlers) mcpStatus(ctx context.Context, _ *noParams) (*mcpStatusResult, error) {
	return h.mcpStatusNow(h.workspaceSession()), nil
}

func (h *Handlers) mcpStatusNow(sess *session.Session) *mcpStatusResult {
	res := &mcpStatusResult{Agents: []agentInfo{}}
	if ep, ok := h.mcp.Running(); ok {
		res.Serving, res.URL, res.Token = true, ep.URL, ep.Token
		if ep.Sessions != nil {
			res.Sessions = ep.Sessions()
		}
	}
	if sess != nil {
		for _, a := range sess.Agents() {
			res.Agents = append(res.Agents, agentInfo{ID: a.ID, Name: a.Name, TerminalID: a.TerminalID,
				Calls: a.Calls, Rejected: a.Rejected, SinceMs: a.Since.Milliseconds()})
		}
	}
	return res
}
