package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/oh-bridge/oh-bridge/dial"
	"github.com/oh-bridge/oh-bridge/ohruntime"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// dialMethods connect the bridge to an OpenHands server, on demand: no
// network traffic of any kind happens before openhands/connect.
func (h *Handlers) dialMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		"openhands/connect":      {Class: rpc.Concurrent, Handle: handle(h.connect)},
		"openhands/disconnect":   {Class: rpc.Concurrent, Handle: handle(h.disconnect)},
		"openhands/status":       {Class: rpc.Inline, Handle: handle(h.status)},
		"openhands/send_message": {Class: rpc.Concurrent, Handle: handle(h.sendMessage)},
	}
}

// dialState is the session's OpenHands connection.
type dialState struct {
	mu      sync.Mutex // serializes connect and disconnect
	session *dial.Session
	// last is the last status sent to the client. It is guarded by h.mu,
	// not mu: connect holds mu while the session reports its status.
	last dial.Status
}

func (h *Handlers) dialing() *dialState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dial == nil {
		h.dial = &dialState{last: dial.Status{State: dial.StateDisconnected, LastEventID: -1}}
	}
	return h.dial
}

func (h *Handlers) stopDial(ctx context.Context) {
	d := h.dialing()
	d.mu.Lock()
	s := d.session
	d.session = nil
	d.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

type connectParams struct {
	ServerURL      string            `json:"serverUrl"`
	ConversationID string            `json:"conversationId"`
	Task           string            `json:"task"`
	SessionAPIKey  string            `json:"sessionApiKey"`
	Headers        map[string]string `json:"headers"`
}

type connectResult struct {
	ConversationID string      `json:"conversationId"`
	Status         dial.Status `json:"status"`
}

func (h *Handlers) connect(ctx context.Context, p *connectParams) (*connectResult, error) {
	if p.ServerURL == "" {
		return nil, rpc.InvalidParams("serverUrl", "the OpenHands server's URL, e.g. http://localhost:3000")
	}
	d := h.dialing()
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.session; old != nil {
		st := old.Status()
		if st.ServerURL == p.ServerURL && (p.ConversationID == "" || p.ConversationID == st.ConversationID) && p.Task == "" && st.State == dial.StateConnected {
			return &connectResult{ConversationID: st.ConversationID, Status: st}, nil
		}
		old.Close()
		d.session = nil
	}
	header := http.Header{}
	for k, v := range p.Headers {
		header.Set(k, v)
	}
	roots := h.Roots()
	s, err := dial.Connect(ctx, dial.SessionOptions{
		ServerURL:      p.ServerURL,
		ConversationID: p.ConversationID,
		Task:           p.Task,
		SessionAPIKey:  p.SessionAPIKey,
		Header:         header,
		Registration: map[string]any{
			"workspace":    map[string]any{"name": filepath.Base(roots[0]), "path": roots[0], "roots": roots},
			"bridge":       map[string]any{"name": "oh-bridge", "version": h.cfg.Version},
			"capabilities": map[string]any{"actions": ohruntime.Executed},
		},
		Execute:  h.executeForServer,
		OnStatus: h.reportStatus,
		OnEvent: func(event json.RawMessage) {
			_ = h.conn.Notify(context.Background(), "openhands/did_receive_event", map[string]any{"event": event})
		},
		Logger: h.cfg.Logger,
	})
	if err != nil {
		return nil, toRPCError(err)
	}
	d.session = s
	st := s.Status()
	return &connectResult{ConversationID: st.ConversationID, Status: st}, nil
}

// reportStatus sends openhands/did_change_status when the status changed.
func (h *Handlers) reportStatus(st dial.Status) {
	d := h.dialing()
	h.mu.Lock()
	changed := st != d.last
	d.last = st
	h.mu.Unlock()
	if changed {
		_ = h.conn.Notify(context.Background(), "openhands/did_change_status", st)
	}
}

// executeForServer runs an action the server sent, through the same
// runtime as openhands/execute_action, once the person allowed it.
func (h *Handlers) executeForServer(ctx context.Context, action json.RawMessage) (json.RawMessage, error) {
	rt, err := h.ohRuntime()
	if err != nil {
		return nil, err
	}
	if kind, title, needsAsk, err := ohruntime.Risk(action); err == nil && needsAsk {
		var a struct {
			ID   json.RawMessage `json:"id"`
			Args json.RawMessage `json:"args"`
		}
		json.Unmarshal(action, &a)
		allowed, err := h.workspaceSession().Permit(ctx, session.PermissionRequest{
			ToolCallID: string(a.ID), Title: title, Kind: kind, RawInput: a.Args, Agent: "OpenHands",
		})
		if err != nil {
			return nil, err
		}
		if !allowed {
			obs, err := rt.Reject(action)
			if err != nil {
				return nil, err
			}
			return json.Marshal(obs)
		}
	}
	obs, err := rt.Execute(ctx, action)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obs)
}

func (h *Handlers) disconnect(ctx context.Context, _ *noParams) (*dial.Status, error) {
	h.stopDial(ctx)
	st := dial.Status{State: dial.StateDisconnected, LastEventID: -1}
	h.reportStatus(st)
	return &st, nil
}

func (h *Handlers) status(ctx context.Context, _ *noParams) (*dial.Status, error) {
	d := h.dialing()
	h.mu.Lock()
	st := d.last
	h.mu.Unlock()
	return &st, nil
}

type sendMessageParams struct {
	Text string `json:"text"`
}

type notConnectedError struct{}

func (notConnectedError) Error() string {
	return "not connected to an OpenHands server; run openhands/connect first"
}
func (notConnectedError) Kind() string { return "not_connected" }

func (h *Handlers) sendMessage(ctx context.Context, p *sendMessageParams) (any, error) {
	if p.Text == "" {
		return nil, rpc.InvalidParams("text", "a non-empty message for the agent")
	}
	d := h.dialing()
	d.mu.Lock()
	s := d.session
	d.mu.Unlock()
	if s == nil {
		return nil, notConnectedError{}
	}
	return nil, s.SendMessage(ctx, p.Text)
}
