package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"

	"github.com/oh-bridge/oh-bridge/dial"
	"github.com/oh-bridge/oh-bridge/ohruntime"
	"github.com/oh-bridge/oh-bridge/session"
)

// v0Link plays the runtime role of an OpenHands V0 server
// (docs/openhands-runtime-protocol.md).
type v0Link struct{ *dial.Session }

func (l v0Link) status() any { return l.Status() }

func (l v0Link) Close() { l.Session.Close() }

func (l v0Link) reusable(p *connectParams) bool {
	st := l.Status()
	return p.Protocol == "v0" && st.ServerURL == p.ServerURL && (p.ConversationID == "" || p.ConversationID == st.ConversationID) &&
		p.Task == "" && st.State == dial.StateConnected
}

func (h *Handlers) connectV0(ctx context.Context, p *connectParams, header http.Header) (link, error) {
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
		OnStatus: func(st dial.Status) { h.reportStatus(st) },
		OnEvent:  h.receiveEvent,
		Logger:   h.cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	return v0Link{s}, nil
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
