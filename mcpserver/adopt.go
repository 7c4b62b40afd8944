package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
)

// Taking over the sessions of an earlier endpoint (HTTPOptions.AdoptSessions).
//
// An agent-server's agent keeps the MCP session it opened for as long as
// its conversation is loaded, and sends its id with every call. When the
// bridge that served it ended and a new one listens on the same port with
// the same token, the SDK would answer 404 "session not found", which
// OpenHands' MCP client (mcp 1.28, streamable_http.py) turns into a
// "Session terminated" error for that call and every later one: it never
// initializes again. So the endpoint initializes a session under that id on
// the client's behalf, then serves the request as usual.

// sessionID is the SDK's GetSessionID: the id being adopted, or a fresh
// one. s.making is held while a session is made, so the two never mix.
func (s *Server) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id := s.adopting; id != "" {
		s.adopting = ""
		return id
	}
	return rand.Text()
}

// knows reports whether a session with this id is live.
func (s *Server) knows(id string) bool {
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// adoptSession makes a session with the id a client names, through the
// SDK's own handler: initialize (the client's protocol version, or the
// oldest served when it sent none, as a 2025-03-26 client does), then
// notifications/initialized.
func (s *Server) adoptSession(r *http.Request, h http.Handler, id string) error {
	ctx, version := r.Context(), r.Header.Get(protocolVersionHeader)
	s.making.Lock()
	defer s.making.Unlock()
	if s.knows(id) {
		return nil
	}
	if !slices.Contains(ProtocolVersions[1:], version) {
		version = ProtocolVersions[len(ProtocolVersions)-1]
	}
	s.mu.Lock()
	s.adopting = id
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.adopting = ""
		s.mu.Unlock()
	}()
	init := map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "MCP client (resumed session)"},
	}}
	rec, err := s.serveInternal(ctx, h, r.Host, init, "", "")
	if err != nil {
		return err
	}
	if got := rec.Header().Get(sessionHeader); got != id {
		return fmt.Errorf("initialize answered HTTP %d with session %q", rec.Code, got)
	}
	rec, err = s.serveInternal(ctx, h, r.Host, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, id, version)
	if err != nil {
		return err
	}
	if rec.Code/100 != 2 {
		return fmt.Errorf("notifications/initialized answered HTTP %d", rec.Code)
	}
	s.log.Info("took over an MCP session an earlier endpoint on this port had given its client", "session", id)
	return nil
}

// serveInternal puts one JSON-RPC message to the SDK's handler, as sent
// to host (the client's request's, which the SDK checks).
func (s *Server) serveInternal(ctx context.Context, h http.Handler, host string, msg any, session, version string) (*httptest.ResponseRecorder, error) {
	body, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, Path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
		req.Header.Set(protocolVersionHeader, version)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, nil
}
