// Package mcpadopt takes over MCP sessions an earlier server gave.
//
// An agent-server's agent keeps the MCP session it opened for as long as
// its conversation is loaded, and sends its id with every call. When the
// server that gave it is gone and another serves the same URL (a bridge
// restarted on the same port and token; a relay restarted), the SDK would
// answer 404 "session not found", which OpenHands' MCP client (mcp 1.28,
// streamable_http.py) turns into a "Session terminated" error for that
// call and every later one: it never initializes again. So the server
// initializes a session under that id on the client's behalf, then serves
// the request as usual. mcpserver's endpoint and the relay's agents' side
// both do.
package mcpadopt

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Streamable HTTP headers the adoption sends.
const (
	SessionHeader         = "Mcp-Session-Id"
	ProtocolVersionHeader = "Mcp-Protocol-Version"
)

// Adopter makes one session at a time, under a fresh id or one being
// adopted. Its SessionID is the server's ServerOptions.GetSessionID.
type Adopter struct {
	// Making is held while a session is made (an initialize served), so
	// an adopted id never goes to another client's session.
	Making sync.Mutex

	mu       sync.Mutex
	adopting string
}

// SessionID is the id the session being made takes: the one adopted, or
// a fresh one.
func (a *Adopter) SessionID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id := a.adopting; id != "" {
		a.adopting = ""
		return id
	}
	return rand.Text()
}

// Knows reports whether srv has a live session with this id.
func Knows(srv *mcp.Server, id string) bool {
	for ss := range srv.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// Adopt makes a session of srv with the id r names, through h (the SDK's
// handler for srv, at path): initialize, at the client's protocol
// version (or the oldest of versions when it sent none, as a 2025-03-26
// client does), then notifications/initialized. versions are the server's
// supported ones, newest first.
func (a *Adopter) Adopt(r *http.Request, h http.Handler, srv *mcp.Server, path, id string, versions []string) error {
	ctx, version := r.Context(), r.Header.Get(ProtocolVersionHeader)
	a.Making.Lock()
	defer a.Making.Unlock()
	if Knows(srv, id) {
		return nil
	}
	if !slices.Contains(versions[1:], version) {
		version = versions[len(versions)-1]
	}
	a.mu.Lock()
	a.adopting = id
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.adopting = ""
		a.mu.Unlock()
	}()
	init := map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "MCP client (resumed session)"},
	}}
	rec, err := serveInternal(ctx, h, path, r.Host, init, "", "")
	if err != nil {
		return err
	}
	if got := rec.Header().Get(SessionHeader); got != id {
		return fmt.Errorf("initialize answered HTTP %d with session %q", rec.Code, got)
	}
	rec, err = serveInternal(ctx, h, path, r.Host, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, id, version)
	if err != nil {
		return err
	}
	if rec.Code/100 != 2 {
		return fmt.Errorf("notifications/initialized answered HTTP %d", rec.Code)
	}
	return nil
}

// serveInternal puts one JSON-RPC message to the SDK's handler, as sent
// to host (the client's request's, which the SDK checks).
func serveInternal(ctx context.Context, h http.Handler, path, host string, msg any, session, version string) (*httptest.ResponseRecorder, error) {
	body, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(SessionHeader, session)
		req.Header.Set(ProtocolVersionHeader, version)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, nil
}
