package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

type requestKey struct{}

// requestInfo is what a handler's context knows about its request.
type requestInfo struct {
	server *Server
	method string
	params *json.RawMessage
}

func infoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestKey{}).(*requestInfo)
	return ri
}

// Progress reports work-done progress on the token the client put in the
// request's params (workDoneToken). Without a token every method is a no-op,
// so handlers call it unconditionally.
type Progress struct {
	server *Server
	token  json.RawMessage
}

// WorkDone returns the progress reporter for the request handled under ctx.
func WorkDone(ctx context.Context) *Progress {
	ri := infoFrom(ctx)
	if ri == nil || ri.params == nil {
		return &Progress{}
	}
	var p struct {
		Token json.RawMessage `json:"workDoneToken"`
	}
	if json.Unmarshal(*ri.params, &p) != nil || len(p.Token) == 0 || string(p.Token) == "null" {
		return &Progress{}
	}
	return &Progress{server: ri.server, token: p.Token}
}

// Active reports whether the client asked for progress.
func (p *Progress) Active() bool { return p.server != nil }

// Begin starts the progress with a title.
func (p *Progress) Begin(ctx context.Context, title, message string) {
	p.send(ctx, map[string]any{"kind": "begin", "title": title, "message": message, "cancellable": true})
}

// Report sends an intermediate message; percentage < 0 leaves it out.
func (p *Progress) Report(ctx context.Context, message string, percentage int) {
	v := map[string]any{"kind": "report", "message": message}
	if percentage >= 0 {
		v["percentage"] = percentage
	}
	p.send(ctx, v)
}

// End finishes the progress.
func (p *Progress) End(ctx context.Context, message string) {
	p.send(ctx, map[string]any{"kind": "end", "message": message})
}

func (p *Progress) send(ctx context.Context, value map[string]any) {
	if p.server == nil {
		return
	}
	_ = p.server.Notify(ctx, "$/progress", map[string]any{"token": p.token, "value": value})
}

// MessageType is LSP's window message severity.
type MessageType int

// LSP message types.
const (
	MessageError   MessageType = 1
	MessageWarning MessageType = 2
	MessageInfo    MessageType = 3
	MessageLog     MessageType = 4
)

// LogMessage sends window/logMessage, for the editor's output channel.
func (s *Server) LogMessage(ctx context.Context, typ MessageType, message string) error {
	return s.Notify(ctx, "window/logMessage", map[string]any{"type": typ, "message": message})
}

// ShowMessage sends window/showMessage, for the user's attention.
func (s *Server) ShowMessage(ctx context.Context, typ MessageType, message string) error {
	return s.Notify(ctx, "window/showMessage", map[string]any{"type": typ, "message": message})
}

// Trace reports the level set by initialize.trace or $/setTrace.
func (s *Server) Trace() string { return s.trace.Load().(string) }

// LogTrace sends $/logTrace when tracing is on; verbose is sent only at
// the "verbose" level.
func (s *Server) LogTrace(ctx context.Context, message, verbose string) {
	level := s.Trace()
	if level == "off" {
		return
	}
	p := map[string]any{"message": message}
	if level == "verbose" && verbose != "" {
		p["verbose"] = verbose
	}
	_ = s.Notify(ctx, "$/logTrace", p)
}

func (s *Server) traceIn(ctx context.Context, req *jsonrpc2.Request) {
	if s.Trace() == "off" {
		return
	}
	verbose := ""
	if req.Params != nil {
		verbose = "Params: " + string(*req.Params)
	}
	if req.Notif {
		s.LogTrace(ctx, fmt.Sprintf("Received notification '%s'.", req.Method), verbose)
		return
	}
	s.LogTrace(ctx, fmt.Sprintf("Received request '%s - (%s)'.", req.Method, req.ID), verbose)
}

func (s *Server) traceOut(ctx context.Context, req *jsonrpc2.Request, start time.Time, err error) {
	if s.Trace() == "off" || req.Notif {
		return
	}
	verbose := ""
	if err != nil {
		verbose = "Error: " + err.Error()
	}
	s.LogTrace(ctx, fmt.Sprintf("Sending response '%s - (%s)'. Processing request took %dms", req.Method, req.ID, time.Since(start).Milliseconds()), verbose)
}
