package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/oh-bridge/oh-bridge/internal/process"
)

// The LSP lifecycle (created → initialized → shut down → exit), checked in
// one place: handle asks lifecycleGate about every message before the
// method table sees it.

// lifecycle is the connection's state.
type lifecycle int32

const (
	stateCreated lifecycle = iota
	stateInitialized
	stateShutdown
)

func (l lifecycle) String() string {
	return [...]string{"created", "initialized", "shut down"}[l]
}

// lifecycleGate answers what the lifecycle decides about a message by
// itself: exit, anything but initialize before it, anything after
// shutdown, a second initialize, and shutdown. It reports whether it
// handled the message.
func (s *Server) lifecycleGate(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) bool {
	if req.Method == "exit" {
		s.exit()
		return true
	}
	state := lifecycle(s.state.Load())
	switch {
	case state == stateCreated && req.Method != "initialize":
		if !req.Notif {
			s.replyErr(ctx, conn, req, NewError(CodeServerNotInitialized,
				fmt.Sprintf("server not initialized: send initialize before %q", req.Method), nil))
		}
		return true
	case state == stateShutdown:
		if !req.Notif {
			s.replyErr(ctx, conn, req, NewError(CodeInvalidRequest,
				fmt.Sprintf("server is shutting down: %q refused; only exit is accepted after shutdown", req.Method), nil))
		}
		return true
	case state == stateInitialized && req.Method == "initialize":
		s.replyErr(ctx, conn, req, NewError(CodeInvalidRequest, "initialize may be sent only once per connection", nil))
		return true
	case req.Method == "shutdown":
		s.state.Store(int32(stateShutdown))
		go func() {
			s.runShutdown(30 * time.Second)
			s.reply(ctx, conn, req, nil, nil)
		}()
		return true
	}
	return false
}

// initialize runs the initialize method inline, the connection
// initialized once it answers without an error.
func (s *Server) initialize(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, m Method, params json.RawMessage) {
	s.readInitialize(params)
	if s.runInline(ctx, conn, req, m, params) {
		s.state.Store(int32(stateInitialized))
	}
}

// readInitialize picks up what the rpc layer itself needs from initialize.
func (s *Server) readInitialize(params json.RawMessage) {
	var p struct {
		Trace     string `json:"trace"`
		ProcessID *int   `json:"processId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if p.Trace == "messages" || p.Trace == "verbose" {
		s.trace.Store(p.Trace)
	}
	if p.ProcessID != nil && *p.ProcessID > 0 {
		go s.watchParent(*p.ProcessID)
	}
}

// watchParent ends the session when the editor process dies without
// closing our stdin (LSP: "If the parent process is not alive then the
// server should exit").
func (s *Server) watchParent(pid int) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for range t.C {
		if !process.Alive(pid) {
			s.log.Warn("the editor process is gone; shutting down", "processId", pid)
			select {
			case s.exitCh <- 1:
			default:
			}
			return
		}
		if s.shutdownStarted() {
			return
		}
	}
}

func (s *Server) shutdownStarted() bool {
	select {
	case <-s.shutdownDone:
		return true
	default:
		return false
	}
}

func (s *Server) exit() {
	code := 1
	if lifecycle(s.state.Load()) == stateShutdown {
		code = 0
	}
	select {
	case s.exitCh <- code:
	default:
	}
}

// runShutdown runs the Shutdown hook once; later callers wait for it, up to grace.
func (s *Server) runShutdown(grace time.Duration) {
	s.shutdownOnce.Do(func() {
		go func() {
			defer close(s.shutdownDone)
			if s.opts.Shutdown != nil {
				ctx, cancel := context.WithTimeout(context.Background(), grace)
				defer cancel()
				s.opts.Shutdown(ctx)
			}
		}()
	})
	select {
	case <-s.shutdownDone:
	case <-time.After(grace):
		s.log.Warn("shutdown cleanup did not finish in time", "grace", grace)
	}
}
