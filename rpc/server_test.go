package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// harness is a server and a client joined by an in-memory pipe.
type harness struct {
	t        *testing.T
	srv      *rpc.Server
	client   *rpctest.Client
	exit     chan int
	logs     *logbuf.Buffer
	shutdown atomic.Int32
}

// testMethods is a method table that exercises every dispatch path.
func testMethods(h *harness, log *perPathLog) map[string]rpc.Method {
	return map[string]rpc.Method{
		"initialize": {Class: rpc.Inline, Handle: func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{"capabilities": map[string]any{}}, nil
		}},
		"initialized": {Class: rpc.Inline, Handle: func(context.Context, json.RawMessage) (any, error) { return nil, nil }},
		"test/echo": {Class: rpc.Concurrent, Handle: func(_ context.Context, p json.RawMessage) (any, error) {
			return p, nil
		}},
		"test/params": {Class: rpc.Concurrent, Handle: func(_ context.Context, p json.RawMessage) (any, error) {
			var v struct {
				Path  string `json:"path"`
				Count int    `json:"count"`
			}
			if err := rpc.DecodeParams(p, &v); err != nil {
				return nil, err
			}
			if v.Path == "" {
				return nil, rpc.InvalidParams("path", "a non-empty string")
			}
			return v, nil
		}},
		"test/block": {Class: rpc.Concurrent, Handle: func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		"test/panic": {Class: rpc.Concurrent, Handle: func(context.Context, json.RawMessage) (any, error) {
			panic("boom in handler")
		}},
		"test/write": {Class: rpc.PerPath, Keys: pathKey, Handle: func(ctx context.Context, p json.RawMessage) (any, error) {
			var v struct {
				Path  string `json:"path"`
				N     int    `json:"n"`
				Block bool   `json:"block"`
			}
			json.Unmarshal(p, &v)
			if v.Block {
				log.blocked <- struct{}{}
				select {
				case <-log.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			log.add(v.Path, v.N)
			return v.N, nil
		}},
		"test/askClient": {Class: rpc.Concurrent, Handle: func(ctx context.Context, _ json.RawMessage) (any, error) {
			var answer string
			err := h.srv.Call(ctx, "client/ask", map[string]any{"q": "color?"}, &answer)
			return answer, err
		}},
		"test/inlineAsk": {Class: rpc.Inline, Handle: func(ctx context.Context, _ json.RawMessage) (any, error) {
			return nil, h.srv.Call(ctx, "client/ask", nil, nil)
		}},
		"test/progress": {Class: rpc.Concurrent, Handle: func(ctx context.Context, _ json.RawMessage) (any, error) {
			p := rpc.WorkDone(ctx)
			p.Begin(ctx, "working", "")
			p.Report(ctx, "half", 50)
			p.End(ctx, "done")
			return p.Active(), nil
		}},
		"test/badResult": {Class: rpc.Concurrent, Handle: func(context.Context, json.RawMessage) (any, error) {
			return func() {}, nil
		}},
	}
}

func pathKey(p json.RawMessage) []string {
	var v struct {
		Path string `json:"path"`
		To   string `json:"to"` // a second key, as a move has
	}
	json.Unmarshal(p, &v)
	if v.To != "" {
		return []string{v.Path, v.To}
	}
	return []string{v.Path}
}

type perPathLog struct {
	mu      sync.Mutex
	seen    map[string][]int
	blocked chan struct{}
	release chan struct{}
}

func (l *perPathLog) add(path string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[path] = append(l.seen[path], n)
}

func start(t *testing.T) (*harness, *perPathLog) {
	t.Helper()
	h := &harness{t: t, exit: make(chan int, 1), logs: &logbuf.Buffer{}}
	log := &perPathLog{seen: map[string][]int{}, blocked: make(chan struct{}, 10), release: make(chan struct{})}
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.srv = rpc.NewServer(rpc.Options{
		Methods:  testMethods(h, log),
		Logger:   logger,
		Shutdown: func(context.Context) { h.shutdown.Add(1) },
	})
	serverEnd, clientEnd := net.Pipe()
	go func() { h.exit <- h.srv.Serve(context.Background(), rpc.NewStream(serverEnd, logger, nil)) }()
	h.client = rpctest.NewClient(clientEnd)
	t.Cleanup(func() {
		h.client.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", h.logs.String())
		}
	})
	return h, log
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func initialized(t *testing.T) (*harness, *perPathLog) {
	h, l := start(t)
	if _, err := h.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return h, l
}

// wantCode asserts that err is a JSON-RPC error with code and a message
// containing every fragment.
func wantCode(t *testing.T, err error, code int64, fragments ...string) {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("want JSON-RPC error %d, got %v", code, err)
	}
	if e.Code != code {
		t.Fatalf("want code %d, got %d (%s)", code, e.Code, e.Message)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			t.Fatalf("error message %q does not mention %q", e.Message, f)
		}
	}
}

func (h *harness) echoWorks() {
	h.t.Helper()
	var got map[string]int
	if err := h.client.Call(ctxT(h.t), "test/echo", map[string]int{"x": 7}, &got); err != nil || got["x"] != 7 {
		h.t.Fatalf("connection no longer works: %v %v", got, err)
	}
}

func (h *harness) awaitExit() int {
	h.t.Helper()
	select {
	case code := <-h.exit:
		return code
	case <-time.After(5 * time.Second):
		h.t.Fatal("Serve did not return")
		return -1
	}
}

func TestLifecycle(t *testing.T) {
	t.Run("request before initialize answers -32002", func(t *testing.T) {
		h, _ := start(t)
		err := h.client.Call(ctxT(t), "test/echo", nil, nil)
		wantCode(t, err, rpc.CodeServerNotInitialized, "not initialized", "test/echo")
		// A notification before initialize is dropped, and initialize still works.
		h.client.Notify("test/echo", nil)
		if _, err := h.client.Initialize(ctxT(t), nil); err != nil {
			t.Fatal(err)
		}
		h.echoWorks()
	})
	t.Run("second initialize answers -32600", func(t *testing.T) {
		h, _ := initialized(t)
		err := h.client.Call(ctxT(t), "initialize", map[string]any{}, nil)
		wantCode(t, err, rpc.CodeInvalidRequest, "only once")
	})
	t.Run("after shutdown requests answer -32600 and exit returns 0", func(t *testing.T) {
		h, _ := initialized(t)
		if err := h.client.Call(ctxT(t), "shutdown", nil, nil); err != nil {
			t.Fatal(err)
		}
		if h.shutdown.Load() != 1 {
			t.Fatal("shutdown hook did not run before the shutdown answer")
		}
		err := h.client.Call(ctxT(t), "test/echo", nil, nil)
		wantCode(t, err, rpc.CodeInvalidRequest, "server is shutting down")
		h.client.Notify("exit", nil)
		if code := h.awaitExit(); code != 0 {
			t.Fatalf("exit after shutdown: code %d, want 0", code)
		}
	})
	t.Run("exit without shutdown returns 1 and still cleans up", func(t *testing.T) {
		h, _ := initialized(t)
		h.client.Notify("exit", nil)
		if code := h.awaitExit(); code != 1 {
			t.Fatalf("exit without shutdown: code %d, want 1", code)
		}
		if h.shutdown.Load() != 1 {
			t.Fatal("cleanup did not run")
		}
	})
	t.Run("end of input cleans up like shutdown and returns promptly", func(t *testing.T) {
		h, _ := initialized(t)
		begin := time.Now()
		h.client.Close()
		code := h.awaitExit()
		if code != 1 || h.shutdown.Load() != 1 {
			t.Fatalf("EOF: code %d, cleanups %d; want 1 and 1", code, h.shutdown.Load())
		}
		if d := time.Since(begin); d > 2*time.Second {
			t.Fatalf("EOF took %v to end the session", d)
		}
	})
}

func TestErrors(t *testing.T) {
	h, _ := initialized(t)
	ctx := ctxT(t)

	wantCode(t, h.client.Call(ctx, "no/such", nil, nil), rpc.CodeMethodNotFound, `"no/such"`)
	h.client.Notify("no/such/notification", nil) // ignored
	h.client.Notify("$/unknown", nil)            // ignored
	h.echoWorks()

	wantCode(t, h.client.Call(ctx, "test/params", map[string]any{"path": 3}, nil), rpc.CodeInvalidParams, `"path"`, "string")
	wantCode(t, h.client.Call(ctx, "test/params", map[string]any{"path": "a", "count": "x"}, nil), rpc.CodeInvalidParams, `"count"`, "integer")
	wantCode(t, h.client.Call(ctx, "test/params", map[string]any{}, nil), rpc.CodeInvalidParams, `"path"`, "non-empty")
	wantCode(t, h.client.Call(ctx, "test/params", []int{1}, nil), rpc.CodeInvalidParams, "object")

	wantCode(t, h.client.Call(ctx, "test/panic", nil, nil), rpc.CodeInternalError, "test/panic", "boom in handler")
	h.echoWorks()
	wantCode(t, h.client.Call(ctx, "test/badResult", nil, nil), rpc.CodeInternalError, "cannot encode")
	h.echoWorks()
	if !strings.Contains(h.logs.String(), "handler panicked") {
		t.Error("the panic was not logged")
	}
}

func TestInvalidMessagesKeepTheConnection(t *testing.T) {
	h, _ := initialized(t)
	cases := []struct {
		name, body string
		code       int64
		fragment   string
	}{
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method"`, rpc.CodeParseError, "parse error"},
		{"not JSON", `hello`, rpc.CodeParseError, "parse error"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"test/echo"}]`, rpc.CodeInvalidRequest, "batch"},
		{"not an object", `42`, rpc.CodeInvalidRequest, "object"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"test/echo"}`, rpc.CodeInvalidRequest, "id"},
		{"negative id", `{"jsonrpc":"2.0","id":-1,"method":"test/echo"}`, rpc.CodeInvalidRequest, "id"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"test/echo"}`, rpc.CodeInvalidRequest, "id"},
		{"method not a string", `{"jsonrpc":"2.0","method":5}`, rpc.CodeInvalidRequest, "method"},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, rpc.CodeInvalidRequest, "method"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.client.SendRaw([]byte(c.body))
			m, err := h.client.AwaitNullResponse(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, m.Error, c.code, c.fragment)
			h.echoWorks()
		})
	}
	t.Run("latin1 charset is refused, utf8 and lower-case headers accepted", func(t *testing.T) {
		h.client.SendBytes([]byte("Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=latin1\r\n\r\n{}"))
		m, err := h.client.AwaitNullResponse(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, m.Error, rpc.CodeInvalidRequest, "latin1", "utf-8")
		body := `{"jsonrpc":"2.0","id":"s1","method":"test/echo","params":{"x":1}}`
		h.client.SendBytes([]byte(fmt.Sprintf("content-type: application/vscode-jsonrpc; charset=utf8\r\ncontent-length: %d\r\n\r\n%s", len(body), body)))
		h.echoWorks()
	})
}

func TestFatalFramingClosesCleanly(t *testing.T) {
	cases := []struct{ name, bytes, logged string }{
		{"no colon", "Content-Length 12\r\n\r\n", "has no colon"},
		{"bad length", "Content-Length: twelve\r\n\r\n", "not a non-negative integer"},
		{"no length", "Content-Type: application/json\r\n\r\n", "no Content-Length"},
		{"endless header line", strings.Repeat("x", 20000), "header line longer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := initialized(t)
			h.client.SendBytes([]byte(c.bytes))
			if err := h.client.AwaitClosed(ctxT(t)); err != nil {
				t.Fatal("the connection stayed open:", err)
			}
			if code := h.awaitExit(); code != 1 {
				t.Fatalf("code %d", code)
			}
			if !strings.Contains(h.logs.String(), c.logged) {
				t.Fatalf("log does not explain %q:\n%s", c.logged, h.logs.String())
			}
		})
	}
	t.Run("truncated body", func(t *testing.T) {
		h, _ := initialized(t)
		h.client.SendBytes([]byte("Content-Length: 100\r\n\r\n{\"jsonrpc\""))
		h.client.Close()
		if code := h.awaitExit(); code != 1 {
			t.Fatalf("code %d", code)
		}
	})
}

func TestCancelRequest(t *testing.T) {
	h, _ := initialized(t)
	id, ch, _ := h.client.Start("test/block", nil)
	h.client.Notify("$/cancelRequest", map[string]any{"id": id})
	select {
	case m := <-ch:
		wantCode(t, m.Error, rpc.CodeRequestCancelled, "cancelled")
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled request never answered")
	}
	// Unknown ids are ignored.
	h.client.Notify("$/cancelRequest", map[string]any{"id": 12345})
	h.client.Notify("$/cancelRequest", map[string]any{"id": "nope"})
	h.echoWorks()
}

func TestPerPathSerialization(t *testing.T) {
	h, log := initialized(t)
	ctx := ctxT(t)

	// A call naming one key twice (a move onto itself) does not wait on
	// itself.
	if err := h.client.Call(ctx, "test/write", map[string]any{"path": "c", "to": "c", "n": 1}, nil); err != nil {
		t.Fatalf("a call with a key twice: %v", err)
	}

	// One blocked call on "a" holds later "a" calls, not calls on "b".
	_, first, _ := h.client.Start("test/write", map[string]any{"path": "a", "n": 0, "block": true})
	<-log.blocked
	var waits []<-chan rpctest.Message
	for i := 1; i <= 50; i++ {
		_, ch, _ := h.client.Start("test/write", map[string]any{"path": "a", "n": i})
		waits = append(waits, ch)
	}
	var n int
	if err := h.client.Call(ctx, "test/write", map[string]any{"path": "b", "n": 7}, &n); err != nil || n != 7 {
		t.Fatalf("call on another path was held up: %v", err)
	}
	// A queued call can be cancelled while it waits.
	id, queued, _ := h.client.Start("test/write", map[string]any{"path": "a", "n": 999})
	h.client.Notify("$/cancelRequest", map[string]any{"id": id})
	wantCode(t, (<-queued).Error, rpc.CodeRequestCancelled)

	close(log.release)
	<-first
	for _, ch := range waits {
		<-ch
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	got := log.seen["a"]
	for i, v := range got {
		if v != i {
			t.Fatalf("calls on one path ran out of arrival order: %v", got)
		}
	}
	if len(got) != 51 {
		t.Fatalf("want 51 writes on a (the cancelled one must not run), got %d", len(got))
	}
}

func TestServerCallsClient(t *testing.T) {
	h, _ := initialized(t)
	answer := make(chan struct{})
	h.client.OnRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
		<-answer
		return "blue", nil
	}
	_, ch, _ := h.client.Start("test/askClient", nil)
	// While the bridge waits for the client, it keeps serving.
	h.echoWorks()
	close(answer)
	m := <-ch
	if string(m.Result) != `"blue"` {
		t.Fatalf("got %s %v", m.Result, m.Error)
	}
	wantCode(t, h.client.Call(ctxT(t), "test/inlineAsk", nil, nil), rpc.CodeInternalError, "deadlock")
}

func TestOutgoingCallIsCancelledWithTheRequest(t *testing.T) {
	h, _ := initialized(t)
	asked := make(chan json.RawMessage, 1)
	h.client.OnRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
		asked <- params
		select {} // never answers
	}
	id, ch, _ := h.client.Start("test/askClient", nil)
	<-asked
	h.client.Notify("$/cancelRequest", map[string]any{"id": id})
	wantCode(t, (<-ch).Error, rpc.CodeRequestCancelled)
	if _, err := h.client.AwaitNotification(ctxT(t), "$/cancelRequest", nil); err != nil {
		t.Fatal("the bridge did not cancel its own call to the client:", err)
	}
}

func TestProgressAndTrace(t *testing.T) {
	h, _ := initialized(t)
	ctx := ctxT(t)
	var active bool
	if err := h.client.Call(ctx, "test/progress", map[string]any{"workDoneToken": "tok-1"}, &active); err != nil || !active {
		t.Fatalf("progress: %v %v", active, err)
	}
	for _, kind := range []string{"begin", "report", "end"} {
		m, err := h.client.AwaitNotification(ctx, "$/progress", nil)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Token string `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Token != "tok-1" || p.Value.Kind != kind {
			t.Fatalf("progress %s: got %s", kind, m.Params)
		}
	}
	if err := h.client.Call(ctx, "test/progress", map[string]any{}, &active); err != nil || active {
		t.Fatal("progress without a token must be inactive")
	}

	h.client.Notify("$/setTrace", map[string]any{"value": "verbose"})
	h.echoWorks()
	m, err := h.client.AwaitNotification(ctx, "$/logTrace", func(p json.RawMessage) bool {
		return bytes.Contains(p, []byte("test/echo"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(m.Params, []byte("verbose")) {
		t.Fatalf("verbose trace lacks params: %s", m.Params)
	}
}

func TestRecording(t *testing.T) {
	var buf logbuf.Buffer
	rec := rpc.NewRecorder(&buf)
	srv := rpc.NewServer(rpc.Options{Methods: map[string]rpc.Method{
		"initialize": {Class: rpc.Inline, Handle: func(context.Context, json.RawMessage) (any, error) { return map[string]any{}, nil }},
	}})
	a, b := net.Pipe()
	done := make(chan int)
	go func() { done <- srv.Serve(context.Background(), rpc.NewStream(a, nil, rec)) }()
	c := rpctest.NewClient(b)
	c.Initialize(ctxT(t), nil)
	c.SendRaw([]byte("not json"))
	c.AwaitNullResponse(ctxT(t))
	c.Close()
	<-done
	rec.Close()
	records, err := rpc.ReadRecords(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, r := range records {
		dirs = append(dirs, r.Dir)
	}
	if got := strings.Join(dirs, " "); got != "in out in in out" {
		t.Fatalf("recorded directions %q, want %q\n%s", got, "in out in in out", buf.String())
	}
	if records[3].Raw == nil || *records[3].Raw != "not json" {
		t.Fatalf("malformed input not recorded raw: %+v", records[3])
	}
}

// TestCallBeforeServeRecordsTheConnection: Serve's goroutine is late to
// record the connection (a loaded machine), while requests are already
// handled; a handler's call to the client still reaches it.
func TestCallBeforeServeRecordsTheConnection(t *testing.T) {
	late := make(chan struct{})
	rpc.SetTestHookServing(func() { <-late })
	t.Cleanup(func() { rpc.SetTestHookServing(nil) })
	defer close(late)
	h, _ := initialized(t)
	h.client.OnRequest = func(method string, _ json.RawMessage) (any, *rpc.Error) { return "blue", nil }
	var answer string
	if err := h.client.Call(ctxT(t), "test/askClient", nil, &answer); err != nil || answer != "blue" {
		t.Fatalf("a call to the client while Serve had not recorded the connection: %q, %v", answer, err)
	}
}
