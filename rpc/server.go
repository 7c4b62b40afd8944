package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Class says how the dispatcher runs a method relative to other messages.
type Class int

const (
	// Inline methods run on the read goroutine, in arrival order, before the
	// next message is read. They must be fast and must not call the peer
	// (Peer.Call refuses, since the answer could never be read).
	Inline Class = iota
	// PerPath methods are serialized per key (see Method.Keys) in arrival
	// order; methods on different keys run concurrently.
	PerPath
	// Concurrent methods run on their own goroutine at once.
	Concurrent
)

func (c Class) String() string {
	switch c {
	case Inline:
		return "inline"
	case PerPath:
		return "per-path"
	case Concurrent:
		return "concurrent"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Handler runs one method. Its result is encoded as the response's result;
// an *Error chooses the error code, any other error answers -32603.
// Notifications' results are discarded.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Method is one entry of the method table.
type Method struct {
	Class  Class
	Handle Handler
	// Keys returns the serialization keys of a PerPath call (usually the
	// resolved paths it mutates). Calls whose keys cannot be determined
	// should return nil: they then run without waiting.
	Keys func(params json.RawMessage) []string
}

// Peer is the other end of the connection, as seen by handlers.
type Peer interface {
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
	// Call sends a request and waits for its answer. Cancelling ctx sends
	// $/cancelRequest to the peer and returns ctx.Err().
	Call(ctx context.Context, method string, params, result any) error
}

// Options configure a Server.
type Options struct {
	Methods map[string]Method
	Logger  *slog.Logger
	// Shutdown releases everything the handlers hold (child processes,
	// watchers). It runs once, on the shutdown request or when the client
	// goes away, with a deadline.
	Shutdown func(ctx context.Context)
	// ShutdownGrace bounds Shutdown when the client disappears; default 1.5 s,
	// so that the process still exits within 2 s of stdin closing.
	ShutdownGrace time.Duration
	// CancelMethod is the notification that cancels a request, both ways:
	// LSP's "$/cancelRequest" (the default) or ACP's "$/cancel_request".
	CancelMethod string
}

// Server dispatches one JSON-RPC connection.
type Server struct {
	opts    Options
	log     *slog.Logger
	started time.Time

	state atomic.Int32 // lifecycle
	trace atomic.Value // string: "off", "messages", "verbose"

	connMu sync.Mutex
	conn   *jsonrpc2.Conn
	// raw writes encoded responses directly when the stream allows it.
	raw rawWriter
	// held is the stream that keeps requests' params from jsonrpc2's
	// decoding (Stream.splitParams); handle takes them from it.
	held *Stream

	mu       sync.Mutex
	inflight map[jsonrpc2.ID]*call
	tails    map[string]chan struct{}

	nextID       atomic.Uint64
	exitCh       chan int
	shutdownOnce sync.Once
	shutdownDone chan struct{}
}

type call struct {
	method    string
	cancel    context.CancelFunc
	cancelled atomic.Bool
}

// NewServer returns a server for one connection.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = 1500 * time.Millisecond
	}
	if opts.CancelMethod == "" {
		opts.CancelMethod = "$/cancelRequest"
	}
	s := &Server{
		opts:         opts,
		log:          opts.Logger.With("component", "rpc"),
		started:      time.Now(),
		inflight:     map[jsonrpc2.ID]*call{},
		tails:        map[string]chan struct{}{},
		exitCh:       make(chan int, 1),
		shutdownDone: make(chan struct{}),
	}
	s.trace.Store("off")
	return s
}

// Serve runs the connection until exit, or until the stream ends or breaks.
// It returns the process exit code the LSP rules ask for: 0 if shutdown came
// before the end, else 1. Shutdown cleanup has run when it returns.
func (s *Server) Serve(ctx context.Context, stream jsonrpc2.ObjectStream) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Set before NewConn starts reading: the first reply may need it.
	s.raw, _ = stream.(rawWriter)
	if st, ok := stream.(*Stream); ok {
		st.holdParams = true
		s.held = st
	}
	conn := jsonrpc2.NewConn(ctx, stream, handlerFunc(s.handle), jsonrpc2.SetLogger(discardLogger{}))
	if hook := testHookServing.Load(); hook != nil {
		(*hook)()
	}
	s.connMu.Lock()
	s.conn = conn
	s.connMu.Unlock()

	var code int
	select {
	case code = <-s.exitCh:
	case <-conn.DisconnectNotify():
		s.log.Info("client connection ended", "state", lifecycle(s.state.Load()).String())
		code = 1
		if lifecycle(s.state.Load()) == stateShutdown {
			code = 0
		}
	case <-ctx.Done():
		code = 1
	}
	cancel() // every handler context ends with the connection
	s.runShutdown(s.opts.ShutdownGrace)
	conn.Close()
	return code
}

// Uptime is the time since the server was created.
func (s *Server) Uptime() time.Duration { return time.Since(s.started) }

// InFlight counts the requests being handled now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inflight)
}

type handlerFunc func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request)

func (f handlerFunc) Handle(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) {
	f(ctx, c, r)
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// handle runs on the read goroutine for every request and notification.
func (s *Server) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	// NewConn reads at once, and Serve records the connection only once
	// NewConn has returned: on a loaded machine a request could be handled
	// before, and a call it makes to the client would find none. The
	// connection is known here from the first message on.
	s.connMu.Lock()
	if s.conn == nil {
		s.conn = conn
	}
	s.connMu.Unlock()
	if s.held != nil {
		if p, ok := s.held.takeParams(); ok {
			req.Params = p
		}
	}
	params := json.RawMessage(nil)
	if req.Params != nil {
		params = *req.Params
	}
	if req.Method == s.opts.CancelMethod {
		s.cancelInbound(params)
		return
	}
	if req.Method == "$/setTrace" {
		var p struct {
			Value string `json:"value"`
		}
		if json.Unmarshal(params, &p) == nil && (p.Value == "off" || p.Value == "messages" || p.Value == "verbose") {
			s.trace.Store(p.Value)
		}
		return
	}
	if s.lifecycleGate(ctx, conn, req) {
		return
	}

	m, ok := s.opts.Methods[req.Method]
	if !ok {
		if !req.Notif {
			s.replyErr(ctx, conn, req, NewError(CodeMethodNotFound, fmt.Sprintf("method not found: %q is not a method of oh-bridge", req.Method), nil))
		} else {
			s.log.Debug("ignored unknown notification", "method", req.Method)
		}
		return
	}
	if req.Method == "initialize" {
		s.initialize(ctx, conn, req, m, params)
		return
	}

	switch m.Class {
	case Inline:
		s.runInline(ctx, conn, req, m, params)
	case PerPath:
		s.runPerPath(ctx, conn, req, m, params)
	default:
		rctx, c := s.begin(ctx, req)
		go s.run(rctx, conn, req, m, params, c)
	}
}

func (s *Server) begin(ctx context.Context, req *jsonrpc2.Request) (context.Context, *call) {
	rctx, cancel := context.WithCancel(ctx)
	c := &call{method: req.Method, cancel: cancel}
	if !req.Notif {
		s.mu.Lock()
		s.inflight[req.ID] = c
		s.mu.Unlock()
	}
	rctx = context.WithValue(rctx, requestKey{}, &requestInfo{server: s, method: req.Method, params: req.Params})
	return rctx, c
}

func (s *Server) end(req *jsonrpc2.Request, c *call) {
	if !req.Notif {
		s.mu.Lock()
		if s.inflight[req.ID] == c {
			delete(s.inflight, req.ID)
		}
		s.mu.Unlock()
	}
	c.cancel()
}

func (s *Server) runInline(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, m Method, params json.RawMessage) bool {
	rctx, c := s.begin(ctx, req)
	rctx = context.WithValue(rctx, inlineKey{}, true)
	return s.run(rctx, conn, req, m, params, c)
}

// runPerPath chains the call behind the previous call on each of its keys.
// The chain is built here, on the read goroutine, so arrival order is kept.
func (s *Server) runPerPath(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, m Method, params json.RawMessage) {
	var keys []string
	if m.Keys != nil {
		// A key twice (a move onto itself) must not wait on itself.
		keys = slices.Compact(slices.Sorted(slices.Values(m.Keys(params))))
	}
	done := make(chan struct{})
	var waits []chan struct{}
	s.mu.Lock()
	for _, k := range keys {
		if prev, ok := s.tails[k]; ok {
			waits = append(waits, prev)
		}
		s.tails[k] = done
	}
	s.mu.Unlock()

	rctx, c := s.begin(ctx, req)
	go func() {
		defer func() {
			s.mu.Lock()
			for _, k := range keys {
				if s.tails[k] == done {
					delete(s.tails, k)
				}
			}
			s.mu.Unlock()
			close(done)
		}()
		for _, w := range waits {
			select {
			case <-w:
			case <-rctx.Done():
				// Answer now, but keep our place in the chain: a later call
				// on the same key must still wait for the earlier ones.
				s.finish(rctx, conn, req, nil, rctx.Err(), c)
				for _, w := range waits {
					<-w
				}
				return
			}
		}
		s.run(rctx, conn, req, m, params, c)
	}()
}

// run calls the handler, contains panics, and answers. It reports success.
func (s *Server) run(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, m Method, params json.RawMessage, c *call) (ok bool) {
	start := time.Now()
	s.traceIn(ctx, req)
	var result any
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("handler panicked", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
				err = NewError(CodeInternalError, fmt.Sprintf("internal error: %s panicked: %v", req.Method, p), nil)
			}
		}()
		if ctx.Err() != nil {
			err = ctx.Err()
			return
		}
		result, err = m.Handle(ctx, params)
	}()
	s.traceOut(ctx, req, start, err)
	return s.finish(ctx, conn, req, result, err, c)
}

func (s *Server) finish(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, result any, err error, c *call) bool {
	defer s.end(req, c)
	if req.Notif {
		if err != nil {
			s.log.Warn("notification failed", "method", req.Method, "error", err)
		}
		return err == nil
	}
	if c.cancelled.Load() {
		err = NewError(CodeRequestCancelled, fmt.Sprintf("request cancelled: %s", req.Method), nil)
	}
	s.reply(ctx, conn, req, result, err)
	return err == nil
}

func (s *Server) reply(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, result any, err error) {
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			rpcErr = NewError(CodeInternalError, err.Error(), nil)
		}
		s.replyErr(ctx, conn, req, rpcErr)
		return
	}
	if s.raw == nil {
		if rerr := conn.Reply(context.WithoutCancel(ctx), req.ID, result); rerr != nil && !errors.Is(rerr, jsonrpc2.ErrClosed) {
			s.log.Error("cannot send a result", "method", req.Method, "error", rerr)
			s.replyErr(ctx, conn, req, NewError(CodeInternalError, "internal error: cannot encode the result: "+rerr.Error(), nil))
		}
		return
	}
	body, err := encodeResponse(req.ID, result)
	if err != nil {
		// The result could not be encoded; the request still gets an answer.
		s.log.Error("cannot encode a result", "method", req.Method, "error", err)
		s.replyErr(ctx, conn, req, NewError(CodeInternalError, "internal error: cannot encode the result: "+err.Error(), nil))
		return
	}
	if err := s.raw.WriteRaw(body); err != nil {
		s.log.Debug("cannot send a result", "method", req.Method, "error", err)
	}
}

// rawWriter is implemented by *Stream.
type rawWriter interface{ WriteRaw([]byte) error }

// encodeResponse encodes a result response in one pass. jsonrpc2's own
// Reply re-validates and re-compacts the result at two nested levels,
// which costs more than the encoding itself for large results (a 1 MiB
// file read).
func encodeResponse(id jsonrpc2.ID, result any) ([]byte, error) {
	idJSON, err := id.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if a, ok := result.(JSONAppender); ok {
		// Encoded in place, each string escaped once straight into the
		// body that is written.
		b := make([]byte, 0, 4<<10)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, idJSON...)
		b = append(b, `,"result":`...)
		b = a.AppendJSON(b)
		return append(b, '}'), nil
	}
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(idJSON)
	buf.WriteString(`,"result":`)
	enc := json.NewEncoder(&buf)
	// Results carry file text and terminal output: keep <, > and & as they are.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(result); err != nil {
		return nil, err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func (s *Server) replyErr(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, e *Error) {
	if req.Notif {
		return
	}
	if err := conn.ReplyWithError(context.WithoutCancel(ctx), req.ID, e); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		s.log.Error("cannot send an error", "method", req.Method, "error", err)
	}
}

// cancelInbound handles $/cancelRequest from the client. Unknown or
// finished ids are ignored, as LSP asks.
func (s *Server) cancelInbound(params json.RawMessage) {
	var p struct {
		ID jsonrpc2.ID `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		s.log.Debug("ignored $/cancelRequest with a bad id", "params", string(params))
		return
	}
	s.mu.Lock()
	c := s.inflight[p.ID]
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.cancelled.Store(true)
	c.cancel()
}

// Notify sends a notification to the client.
func (s *Server) Notify(ctx context.Context, method string, params any) error {
	conn := s.currentConn()
	if conn == nil {
		return errNotConnected
	}
	return conn.Notify(context.WithoutCancel(ctx), method, params)
}

var errNotConnected = errors.New("rpc: the client is not connected")

// testHookServing, set by a test, runs in Serve between the connection's
// start and its being recorded: a late goroutine, as a loaded machine has.
var testHookServing atomic.Pointer[func()]

// Call sends a request to the client and waits for the answer. A cancelled
// ctx sends $/cancelRequest and returns at once. Calling from an Inline
// handler is refused: the answer would arrive on the goroutine that waits.
func (s *Server) Call(ctx context.Context, method string, params, result any) error {
	if inline, _ := ctx.Value(inlineKey{}).(bool); inline {
		return fmt.Errorf("rpc: %s called from an inline handler would deadlock the read loop; make the method PerPath or Concurrent", method)
	}
	conn := s.currentConn()
	if conn == nil {
		return errNotConnected
	}
	id := jsonrpc2.ID{Num: s.nextID.Add(1)}
	w, err := conn.DispatchCall(context.WithoutCancel(ctx), method, params, jsonrpc2.PickID(id))
	if err != nil {
		return err
	}
	err = w.Wait(ctx, result)
	if ctx.Err() != nil {
		_ = conn.Notify(context.WithoutCancel(ctx), s.opts.CancelMethod, map[string]any{"id": id})
		return ctx.Err()
	}
	return err
}

func (s *Server) currentConn() *jsonrpc2.Conn {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.conn
}

type inlineKey struct{}
