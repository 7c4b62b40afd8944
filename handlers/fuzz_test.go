package handlers_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// target is a bridge served in process for hostile input: its method
// table, a client, and what the handlers logged when one panicked.
type target struct {
	methods []string
	client  *rpctest.Client
	root    string
	panics  *panicLog
	// patience is how long a call may take before it is cancelled (3 s:
	// a command asked to run long).
	patience time.Duration
}

// panicLog keeps the rpc layer's "handler panicked" records.
type panicLog struct {
	mu   sync.Mutex
	seen []string
}

func (p *panicLog) Write(b []byte) (int, error) {
	if strings.Contains(string(b), "handler panicked") {
		p.mu.Lock()
		p.seen = append(p.seen, string(b))
		p.mu.Unlock()
	}
	return len(b), nil
}

func (p *panicLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.seen
	p.seen = nil
	return out
}

// newTarget starts a bridge over a fresh workspace and initializes it.
// Its terminals get a HOME of their own, so no user setup runs.
func newTarget(tb testing.TB) *target {
	root, err := os.MkdirTemp("", "oh-bridge-fuzz-")
	if err != nil {
		tb.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.Mkdir(filepath.Join(root, "d"), 0o755)
	os.Setenv("HOME", root)
	panics := &panicLog{}
	h, c := serveLogged(tb, handlers.Config{Roots: []string{root}}, slogTo(panics))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, map[string]any{"capabilities": map[string]any{}}); err != nil {
		tb.Fatal(err)
	}
	var methods []string
	for name := range h.Methods() {
		if name != "initialize" { // once per connection, by the protocol
			methods = append(methods, name)
		}
	}
	slices.Sort(methods)
	return &target{methods: methods, client: c, root: root, panics: panics, patience: 3 * time.Second}
}

// call sends one request and checks its answer: every request is
// answered, within a bound or once cancelled; errors are invalid params,
// a cancellation or a domain error with its kind, never a bare internal
// error; nothing panics.
func (tg *target) call(t *testing.T, method string, params json.RawMessage) {
	t.Helper()
	var p any
	if params != nil {
		p = params
	}
	id, ch, err := tg.client.Start(method, p)
	if err != nil {
		t.Fatalf("%s: sending: %v", method, err)
	}
	var m rpctest.Message
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > time.Second {
			t.Logf("slow: %s %.80s took %v", method, params, d.Round(time.Millisecond))
		}
	}()
	select {
	case m = <-ch:
	case <-time.After(tg.patience):
		// A long command may be what was asked: cancel it, and the
		// answer must still come.
		tg.client.Notify("$/cancelRequest", map[string]any{"id": id})
		select {
		case m = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %.200s: no answer, even 10 s after $/cancelRequest", method, params)
		}
	}
	if p := tg.panics.take(); len(p) > 0 {
		t.Fatalf("%s %.200s: a handler panicked: %s", method, params, p[0])
	}
	if m.Error != nil {
		var data struct {
			Kind string `json:"kind"`
		}
		if m.Error.Data != nil {
			json.Unmarshal(*m.Error.Data, &data)
		}
		switch {
		case m.Error.Code == rpc.CodeInvalidParams, m.Error.Code == rpc.CodeRequestCancelled, m.Error.Code == rpc.CodeInvalidRequest:
		case data.Kind != "":
		default:
			t.Errorf("%s %.120s: answered %d %.300q with no kind: want -32602 or a domain error", method, params, m.Error.Code, m.Error.Message)
		}
	}
}

// alive checks the bridge still answers bridge/info.
func (tg *target) alive(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var info map[string]any
	if err := tg.client.Call(ctx, "bridge/info", nil, &info); err != nil || info["pid"] == nil {
		t.Fatalf("bridge/info after hostile input: %v %v", info, err)
	}
}

// hostile is params that no method should choke on, for every method.
func hostile(root string) []string {
	deep := strings.Repeat(`{"a":[`, 5000) + strings.Repeat(`]}`, 5000)
	// 1 MiB strings for every method; 10 MiB ones go to a few methods only
	// (TestHugeParams): their cost is the transport's, the same for all.
	big := `"` + strings.Repeat("x", 1<<20) + `"`
	var out []string
	out = append(out,
		``, `null`, `[]`, `[1,2]`, `"str"`, `123`, `true`, `{}`, deep,
		`{"path":`+big+`}`, `{"command":`+big+`,"content":`+big+`,"text":`+big+`}`,
	)
	for _, p := range []string{"", "..", "../x", "/", "/proc/self/root/etc/passwd", "/proc/self/fd/0", "/etc/passwd",
		"file:///etc/passwd", `C:\Windows\win.ini`, `\\server\share\x`, "a\x00b", "a.txt/..", "~/x", "d/../../x",
		strings.Repeat("n", 5000), root, filepath.Join(root, "a.txt")} {
		s, _ := json.Marshal(p)
		out = append(out, `{"path":`+string(s)+`}`, `{"path":`+string(s)+`,"old_str":"alpha","new_str":"x"}`,
			`{"from":`+string(s)+`,"to":`+string(s)+`}`, `{"uri":`+string(s)+`}`)
	}
	out = append(out,
		`{"path":"a.txt","line":1e308,"limit":-9223372036854775808}`,
		`{"path":"a.txt","line":-1,"limit":99999999999999999999999}`,
		`{"path":1,"content":[],"options":"x"}`,
		`{"path":"a.txt","content":"\u0000\ud800"}`,
		"{\"path\":\"a.txt\",\"content\":\"\xff\xfe\"}",
		`{"terminalId":"t-1","cols":-5,"rows":1e9}`,
		`{"terminalId":"","data":"\u0003"}`,
		`{"action":{"action":"run","args":{"command":"echo hi"},"timeout":-1}}`,
		`{"action":[]}`, `{"action":{"action":42}}`,
		`{"serverUrl":"http://[::1"}`, `{"serverUrl":"ftp://x"}`, `{"port":-1}`, `{"port":99999}`,
	)
	return out
}

// TestEveryMethodHostileParams feeds every method of the table every
// hostile input: each gets an answer, nothing panics, the bridge lives.
func TestEveryMethodHostileParams(t *testing.T) {
	if testing.Short() {
		t.Skip("sends every method ~90 hostile inputs")
	}
	tg := newTarget(t)
	defer os.RemoveAll(tg.root)
	inputs := hostile(tg.root)
	for _, m := range tg.methods {
		for _, p := range inputs {
			var raw json.RawMessage
			if p != "" {
				raw = json.RawMessage(p)
			}
			tg.call(t, m, raw)
		}
		tg.alive(t)
	}
	t.Logf("%d methods × %d inputs answered", len(tg.methods), len(inputs))
}

// TestHugeParams sends 10 MiB strings where methods expect paths,
// contents, commands and messages.
func TestHugeParams(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 10 MiB params")
	}
	tg := newTarget(t)
	defer os.RemoveAll(tg.root)
	tg.patience = time.Minute // 10 MiB through the race detector is slow
	huge := `"` + strings.Repeat("y", 10<<20) + `"`
	for _, c := range []struct{ method, params string }{
		{"fs/read_text_file", `{"path":` + huge + `}`},
		{"fs/write_text_file", `{"path":"huge.txt","content":` + huge + `}`},
		{"edit/str_replace", `{"path":"a.txt","old_str":` + huge + `,"new_str":"x"}`},
		{"terminal/run", `{"command":` + huge + `}`},
		{"openhands/send_message", `{"text":` + huge + `}`},
	} {
		tg.call(t, c.method, json.RawMessage(c.params))
	}
	tg.alive(t)
	if fi, err := os.Stat(filepath.Join(tg.root, "huge.txt")); err != nil || fi.Size() != 10<<20 {
		t.Errorf("the 10 MiB write: %v %v", fi, err)
	}
}

var (
	fuzzOnce   sync.Once
	fuzzTarget *target
)

// FuzzMethods mutates params from a seed corpus for the method the input
// picks from the table itself. One bridge serves a whole fuzzing process,
// so state built by earlier inputs (terminals, edits) is fuzzed too.
func FuzzMethods(f *testing.F) {
	tg := newTarget(f)
	fuzzOnce.Do(func() { fuzzTarget = tg })
	seeds := map[string][]string{
		"fs/read_text_file":  {`{"path":"a.txt","line":2,"limit":1}`},
		"fs/write_text_file": {`{"path":"b.txt","content":"x\n","createParents":true}`},
		"fs/list_directory":  {`{"path":".","depth":2,"limit":10}`},
		"fs/move":            {`{"from":"b.txt","to":"d/b.txt"}`},
		"edit/str_replace":   {`{"path":"a.txt","old_str":"beta","new_str":"gamma"}`},
		"edit/view":          {`{"path":"a.txt","view_range":[1,2]}`},
		"edit/insert":        {`{"path":"a.txt","insert_line":1,"new_str":"x"}`},
		"terminal/run":       {`{"command":"echo hi","timeoutMs":2000}`},
		"terminal/open":      {`{"cols":80,"rows":24}`},
		"openhands/execute_action": {`{"action":{"action":"run","args":{"command":"echo hi","blocking":true},"timeout":5}}`,
			`{"action":{"action":"edit","args":{"path":"/nonexistent","command":"view"}}}`},
	}
	for i, m := range tg.methods {
		f.Add(uint16(i), []byte(`{}`))
		for _, s := range seeds[m] {
			f.Add(uint16(i), []byte(s))
		}
	}
	for _, s := range []string{`[]`, `{"path":"../x"}`, `{"path":"/proc/self/root"}`, `{"path":"a\u0000b"}`, `{"line":-1}`} {
		f.Add(uint16(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, pick uint16, params []byte) {
		tg := fuzzTarget
		method := tg.methods[int(pick)%len(tg.methods)]
		raw := json.RawMessage(params)
		if !json.Valid(params) {
			// Not JSON: sent as a JSON string, a wrong type for every
			// method that takes params.
			s, _ := json.Marshal(string(params))
			raw = s
		}
		tg.call(t, method, raw)
		tg.alive(t)
	})
}

// slogTo is a logger of errors writing to w.
func slogTo(w *panicLog) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelError}))
}
