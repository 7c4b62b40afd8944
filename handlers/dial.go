package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/dial"
	"github.com/oh-bridge/oh-bridge/ohruntime"
	"github.com/oh-bridge/oh-bridge/rpc"
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
// runtime as openhands/execute_action.
func (h *Handlers) executeForServer(ctx context.Context, action json.RawMessage) (json.RawMessage, error) {
	rt, err := h.ohRuntime()
	if err != nil {
		return nil, err
	}
	if h.Capabilities().RequestPermission {
		kind, title, needsAsk, err := ohruntime.Risk(action)
		if err == nil && needsAsk {
			allowed, err := h.askPermission(ctx, action, kind, title)
			if err != nil {
				return nil, fmt.Errorf("could not ask the user for permission: %w", err)
			}
			if !allowed {
				obs, err := rt.Reject(action)
				if err != nil {
					return nil, err
				}
				return json.Marshal(obs)
			}
		}
	}
	obs, err := rt.Execute(ctx, action)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obs)
}

// permissionOptions are offered for every action (ACP's option kinds).
var permissionOptions = []map[string]string{
	{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
	{"optionId": "allow_always", "name": "Allow always", "kind": "allow_always"},
	{"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
}

// askPermission asks the client (session/request_permission) before an
// action from the server runs; only an "allow" option lets it run.
func (h *Handlers) askPermission(ctx context.Context, action json.RawMessage, kind, title string) (bool, error) {
	var a struct {
		ID   json.RawMessage `json:"id"`
		Args json.RawMessage `json:"args"`
	}
	json.Unmarshal(action, &a)
	params := map[string]any{
		"toolCall": map[string]any{"toolCallId": string(a.ID), "title": title, "kind": kind, "rawInput": a.Args},
		"options":  permissionOptions,
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if err := h.conn.Call(ctx, "session/request_permission", params, &res); err != nil {
		return false, err
	}
	return res.Outcome.Outcome == "selected" && strings.HasPrefix(res.Outcome.OptionID, "allow"), nil
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
