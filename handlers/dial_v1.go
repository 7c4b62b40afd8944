package handlers

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/oh-bridge/oh-bridge/dial/agentserver"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// v1Link is a conversation on an OpenHands agent-server, whose agent uses
// the session's tools through the MCP endpoint.
type v1Link struct{ *agentserver.Session }

func (l v1Link) status() any { return l.Status() }

func (l v1Link) reusable(p *connectParams) bool {
	st := l.Status()
	return p.Protocol != "v0" && st.ServerURL == p.ServerURL && (p.ConversationID == "" || p.ConversationID == st.ConversationID) &&
		p.Task == "" && st.State == agentserver.StateConnected
}

func (h *Handlers) connectV1(ctx context.Context, p *connectParams, header http.Header) (link, error) {
	s, err := agentserver.Connect(ctx, agentserver.Options{
		ServerURL:          p.ServerURL,
		SessionAPIKey:      p.SessionAPIKey,
		Header:             header,
		ConversationID:     p.ConversationID,
		Task:               p.Task,
		LLM:                p.LLM,
		Agent:              p.Agent,
		ConfirmationPolicy: p.ConfirmationPolicy,
		WorkingDir:         h.Roots()[0],
		MCP:                h.ensureMCP,
		Confirm:            h.confirmV1,
		OnEvent:            h.receiveEvent,
		OnStatus:           func(st agentserver.Status) { h.reportStatus(st) },
		Logger:             h.cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	return v1Link{s}, nil
}

// ensureMCP is the MCP endpoint the agent-server's agent reaches its tools
// through: the running one, or a new one on a free port.
func (h *Handlers) ensureMCP(ctx context.Context) (agentserver.MCPServer, error) {
	res, err := h.mcpStart(ctx, &mcpStartParams{})
	if err != nil {
		return agentserver.MCPServer{}, err
	}
	return agentserver.MCPServer{URL: res.URL, Token: res.Token}, nil
}

// confirmV1 asks the person about an action an agent in confirmation mode
// waits to run. A tool of the bridge's is described as its call will be,
// and allowed once here, the call does not ask again.
func (h *Handlers) confirmV1(ctx context.Context, event json.RawMessage) (agentserver.Decision, error) {
	var a struct {
		ID         string `json:"id"`
		ToolName   string `json:"tool_name"`
		ToolCallID string `json:"tool_call_id"`
		Action     struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		} `json:"action"`
	}
	json.Unmarshal(event, &a)
	req := session.PermissionRequest{ToolCallID: a.ToolCallID, Title: a.ToolName, Kind: "other", RawInput: a.Action.Data, Agent: "OpenHands"}
	if req.ToolCallID == "" {
		req.ToolCallID = a.ID
	}
	var call *ohtools.Call
	if a.Action.Kind == "MCPToolAction" {
		if c, err := ohtools.Parse(a.ToolName, a.Action.Data); err == nil {
			call, req.Title, req.Kind = c, c.Action.Title, c.Action.Kind
		}
	} else if len(a.Action.Kind) > 0 {
		req.Title, req.Kind, req.RawInput = a.ToolName, "think", event
	}
	sess := h.workspaceSession()
	allowed, err := sess.Permit(ctx, req)
	if err != nil {
		return agentserver.Decision{}, err
	}
	if !allowed {
		return agentserver.Decision{Reason: "User rejected the action."}, nil
	}
	if call != nil {
		sess.PreApprove(a.ToolName, a.Action.Data)
	}
	return agentserver.Decision{Accept: true}, nil
}
