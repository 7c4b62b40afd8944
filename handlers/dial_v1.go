package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/updates"
)

// v1Link is a conversation on an OpenHands agent-server, whose agent uses
// the session's tools through the MCP endpoint.
type v1Link struct {
	*agentserver.Conversation
	stopObserving func()
}

// Close stops streaming and following the session's calls.
func (l v1Link) Close() {
	l.Conversation.Close()
	l.stopObserving()
}

func (l v1Link) status() any { return l.Status() }

func (l v1Link) reusable(p *connectParams) bool {
	st := l.Status()
	return st.ServerURL == p.ServerURL && (p.ConversationID == "" || p.ConversationID == st.ConversationID) &&
		p.Task == "" && st.State == agentserver.StateConnected
}

func (h *Handlers) connectV1(ctx context.Context, p *connectParams, header http.Header) (link, error) {
	// The conversation view gets what the agent says and does as
	// conversation updates, read from the events and the session's calls.
	var convID atomic.Value
	convID.Store("")
	tracker := updates.New(updates.Options{Emit: func(u updates.Update) {
		_ = h.conn.Notify(context.Background(), "openhands/did_update_conversation",
			map[string]any{"conversationId": convID.Load(), "update": u})
	}})
	stopObs := h.workspaceSession().Observe(tracker.Observer())
	h.dialing().tracker.Store(tracker)
	stop := func() {
		stopObs()
		h.dialing().tracker.CompareAndSwap(tracker, nil)
	}
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
		OnEvent: func(ev json.RawMessage) {
			h.receiveEvent(ev)
			tracker.Event(ev)
		},
		OnStatus: func(st agentserver.Status) {
			convID.Store(st.ConversationID)
			h.reportStatus(st)
		},
		Logger: h.cfg.Logger,
	})
	if err != nil {
		stop()
		return nil, err
	}
	return v1Link{s, stop}, nil
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

// confirmV1 asks the person about an action an agent in confirmation
// mode waits to run.
func (h *Handlers) confirmV1(ctx context.Context, event json.RawMessage) (agentserver.Decision, error) {
	allowed, err := updates.Confirm(ctx, h.workspaceSession(), event)
	if err != nil {
		return agentserver.Decision{}, err
	}
	if !allowed {
		return agentserver.Decision{Reason: "User rejected the action."}, nil
	}
	return agentserver.Decision{Accept: true}, nil
}
