package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// These tests drive real bash and zsh under real PTYs through JSON-RPC,
// with the handlers served in-process over a pipe.

type runResult struct {
	TerminalID     string
	Seq            int
	Command        string
	Output         string
	ExitCode       *int
	Running        bool
	Cwd            string
	Truncated      bool
	TruncatedBytes int64
	Reason         string
	Escalation     string
	Mode           string
}

func (r runResult) String() string {
	ec := "null"
	if r.ExitCode != nil {
		ec = fmt.Sprint(*r.ExitCode)
	}
	return fmt.Sprintf("{%s seq %d exit %s running %v reason %q cwd %s output %q}", r.TerminalID, r.Seq, ec, r.Running, r.Reason, r.Cwd, r.Output)
}

type listEntry struct {
	TerminalID, Name, State, Cwd, Command, Shell, Mode string
	PID, Seq                                           int
}

// termSession is an initialized in-process bridge with one workspace root.
type termSession struct {
	t    *testing.T
	c    *rpctest.Client
	root string
}

func startTerms(t *testing.T, streaming bool) *termSession {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	_, c := serve(t, handlers.Config{Roots: []string{root}})
	caps := map[string]any{}
	if streaming {
		caps["terminal"] = map[string]any{"streaming": true}
	}
	if _, err := c.Initialize(ctxT(t), map[string]any{"capabilities": caps}); err != nil {
		t.Fatal(err)
	}
	// Shutdown closes every terminal, as the editor's shutdown would.
	t.Cleanup(func() { c.Call(context.Background(), "shutdown", nil, nil) })
	return &termSession{t: t, c: c, root: root}
}

func longCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// call fails the test on an error answer.
func (s *termSession) call(method string, params, result any) {
	s.t.Helper()
	if err := s.c.Call(longCtx(s.t), method, params, result); err != nil {
		s.t.Fatalf("%s %v: %v", method, params, err)
	}
}

// callErr wants an error answer with code, whose message contains fragment.
func (s *termSession) callErr(method string, params any, code int64, fragment string) *rpc.Error {
	s.t.Helper()
	err := s.c.Call(longCtx(s.t), method, params, nil)
	var e *rpc.Error
	if !errors.As(err, &e) || e.Code != code || !strings.Contains(e.Message, fragment) {
		s.t.Fatalf("%s %v: got %v; want code %d mentioning %q", method, params, err, code, fragment)
	}
	return e
}

func (s *termSession) open(params map[string]any) string {
	s.t.Helper()
	var r struct {
		TerminalID, Shell, Mode, Cwd string
		PID                          int
	}
	s.call("terminal/open", params, &r)
	if r.TerminalID == "" || r.PID <= 0 || r.Shell == "" {
		s.t.Fatalf("terminal/open %v = %+v", params, r)
	}
	return r.TerminalID
}

func (s *termSession) run(params map[string]any) runResult {
	s.t.Helper()
	var r runResult
	s.call("terminal/run", params, &r)
	return r
}

func (s *termSession) list() []listEntry {
	s.t.Helper()
	var l []listEntry
	s.call("terminal/list", nil, &l)
	return l
}

// awaitList polls terminal/list until ok holds: the terminals' states
// are their shells', which no notification here reports.
func (s *termSession) awaitList(what string, ok func([]listEntry) bool) []listEntry {
	s.t.Helper()
	return ohtest.Poll(s.t, 20*time.Second, what, func() ([]listEntry, bool) {
		l := s.list()
		return l, ok(l)
	})
}

func exited(t *testing.T, r runResult, code int) {
	t.Helper()
	if r.Running || r.ExitCode == nil || *r.ExitCode != code {
		t.Fatalf("got %v; want finished with exit code %d", r, code)
	}
}

func dataOf(t *testing.T, e *rpc.Error) map[string]any {
	t.Helper()
	var d map[string]any
	if e.Data == nil || json.Unmarshal(*e.Data, &d) != nil {
		t.Fatalf("error without data: %+v", e)
	}
	return d
}

// shells are the shells to run the shell-specific tests under. zsh is
// skipped when it is not installed, except in CI.
func shells(t *testing.T) []string {
	out := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		out = append(out, "zsh")
	} else if os.Getenv("CI") != "" {
		t.Fatal("zsh is not installed; .ci/run must install it (apt-get install zsh)")
	} else {
		t.Log("zsh is not installed (apt-get install zsh); testing bash only")
	}
	return out
}

func TestTerminalExitCodesAndPersistence(t *testing.T) {
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			s := startTerms(t, false)
			id := s.open(map[string]any{"shell": shell, "name": "main"})
			for _, c := range []struct {
				command string
				code    int
				output  string
			}{
				{"echo hi", 0, "hi\n"},
				{"false", 1, ""},
				{"(exit 3)", 3, ""},
				{"sh -c 'kill -TERM $$'", 143, "*"}, // the shell's notice varies
				{"printf 'a\\nb\\n'; exit_is_not_called=1", 0, "a\nb\n"},
			} {
				r := s.run(map[string]any{"terminalId": id, "command": c.command})
				exited(t, r, c.code)
				if (c.output != "*" && r.Output != c.output) || r.TerminalID != id || r.Command != c.command {
					t.Errorf("%q: %v; want output %q", c.command, r, c.output)
				}
			}
			// cd and export persist to later runs, and results carry the cwd.
			sub := filepath.Join(s.root, "sub dir")
			os.Mkdir(sub, 0o755)
			r := s.run(map[string]any{"terminalId": id, "command": "cd 'sub dir' && export GREETING=hello"})
			exited(t, r, 0)
			if r.Cwd != sub {
				t.Fatalf("cwd after cd: %v; want %s", r, sub)
			}
			r = s.run(map[string]any{"terminalId": id, "command": `echo "$GREETING from $(pwd)"`})
			if r.Output != "hello from "+sub+"\n" || r.Cwd != sub {
				t.Fatalf("persistence: %v", r)
			}
			// A cwd parameter changes directory first (relative to the first root).
			r = s.run(map[string]any{"terminalId": id, "command": "pwd", "cwd": "."})
			if r.Output != s.root+"\n" || r.Cwd != s.root {
				t.Fatalf("cwd param: %v; want %s", r, s.root)
			}
			l := s.list()
			if len(l) != 1 || l[0].TerminalID != id || l[0].Name != "main" || l[0].State != "idle" || l[0].Shell != shell || l[0].PID <= 0 || l[0].Cwd != s.root {
				t.Fatalf("terminal/list = %+v", l)
			}
			// exit ends the shell: the command reports its status and the
			// terminal is dead.
			r = s.run(map[string]any{"terminalId": id, "command": "exit 7"})
			exited(t, r, 7)
			s.awaitList("a dead terminal", func(l []listEntry) bool { return len(l) == 1 && l[0].State == "dead" })
			e := s.callErr("terminal/run", map[string]any{"terminalId": id, "command": "true"}, 1016, "has exited")
			if d := dataOf(t, e); d["kind"] != "terminal_dead" || d["terminalId"] != id {
				t.Fatalf("dead error data %v", d)
			}
		})
	}
}

func TestTerminalSoftAndHardTimeouts(t *testing.T) {
	t.Parallel()
	s := startTerms(t, false)
	// No output for 500 ms: the run answers, the command goes on, and
	// terminal/output returns only what is new, then the exit code.
	r := s.run(map[string]any{"command": "echo start; sleep 2; echo end", "noOutputTimeoutMs": 500})
	if !r.Running || r.ExitCode != nil || r.Output != "start\n" || r.Reason != "no_output_timeout" {
		t.Fatalf("soft timeout: %v", r)
	}
	var p runResult
	s.call("terminal/output", map[string]any{"terminalId": r.TerminalID}, &p)
	if !p.Running || p.Output != "" || p.Seq != r.Seq {
		t.Fatalf("an immediate poll: %v", p)
	}
	var out strings.Builder
	for p.Running {
		s.call("terminal/output", map[string]any{"terminalId": r.TerminalID, "seq": r.Seq, "waitMs": 300}, &p)
		out.WriteString(p.Output)
	}
	exited(t, p, 0)
	if out.String() != "end\n" {
		t.Fatalf("polled output %q, want only the new %q", out.String(), "end\n")
	}
	// Polling a finished command again returns nothing new.
	s.call("terminal/output", map[string]any{"terminalId": r.TerminalID}, &p)
	if p.Output != "" || p.ExitCode == nil {
		t.Fatalf("second poll of a finished command: %v", p)
	}
	// A hard timeout interrupts the command (Ctrl-C → 130).
	start := time.Now()
	r = s.run(map[string]any{"terminalId": r.TerminalID, "command": "echo going; sleep 30", "timeoutMs": 300})
	exited(t, r, 130)
	if r.Reason != "timeout" || !strings.HasPrefix(r.Output, "going\n") || time.Since(start) > 10*time.Second {
		t.Fatalf("hard timeout: %v after %v", r, time.Since(start))
	}
}

func TestTerminalBusyInterruptKillInputResizeClose(t *testing.T) {
	t.Parallel()
	s := startTerms(t, false)
	id := s.open(nil)
	r := s.run(map[string]any{"terminalId": id, "command": "sleep 30", "noOutputTimeoutMs": 100})
	if !r.Running {
		t.Fatalf("sleep 30: %v", r)
	}
	// A second command on the busy terminal is refused, naming the first.
	e := s.callErr("terminal/run", map[string]any{"terminalId": id, "command": "echo no"}, 1012, `still running "sleep 30"`)
	if d := dataOf(t, e); d["kind"] != "terminal_busy" || d["command"] != "sleep 30" || d["seq"] != float64(r.Seq) || d["terminalId"] != id {
		t.Fatalf("busy data %v", d)
	}
	l := s.list()
	if len(l) != 1 || l[0].State != "running" || l[0].Command != "sleep 30" {
		t.Fatalf("list while running: %+v", l)
	}
	var ir runResult
	s.call("terminal/interrupt", map[string]any{"terminalId": id}, &ir)
	exited(t, ir, 130)
	if ir.Reason != "interrupted" || ir.Escalation != "ctrl_c" {
		t.Fatalf("interrupt: %v (escalation %q)", ir, ir.Escalation)
	}
	s.callErr("terminal/interrupt", map[string]any{"terminalId": id}, 1016, "no running command")

	// kill: SIGKILL at once.
	s.run(map[string]any{"terminalId": id, "command": "sleep 30", "noOutputTimeoutMs": 100})
	s.call("terminal/kill", map[string]any{"terminalId": id}, &ir)
	exited(t, ir, 137)
	if ir.Reason != "killed" {
		t.Fatalf("kill: %v", ir)
	}

	// Input reaches the program that reads the terminal.
	r = s.run(map[string]any{"terminalId": id, "command": `read -r line; echo "got $line"`, "noOutputTimeoutMs": 200})
	if !r.Running {
		t.Fatalf("read: %v", r)
	}
	var info listEntry
	s.call("terminal/send_input", map[string]any{"terminalId": id, "data": "abc", "appendNewline": true}, &info)
	if info.TerminalID != id || info.PID <= 0 { // the state may already be idle again
		t.Fatalf("send_input answered %+v", info)
	}
	var p runResult
	s.call("terminal/output", map[string]any{"terminalId": id, "waitMs": 10000}, &p)
	exited(t, p, 0)
	if !strings.Contains(p.Output, "got abc\n") {
		t.Fatalf("after input: %v", p)
	}

	// Resize reaches the tty.
	s.call("terminal/resize", map[string]any{"terminalId": id, "cols": 100, "rows": 30}, nil)
	if r := s.run(map[string]any{"terminalId": id, "command": "stty size"}); r.Output != "30 100\n" {
		t.Fatalf("stty size after resize: %v", r)
	}

	// Close forgets the terminal.
	s.call("terminal/close", map[string]any{"terminalId": id}, nil)
	if l := s.list(); len(l) != 0 {
		t.Fatalf("list after close: %+v", l)
	}
	e = s.callErr("terminal/run", map[string]any{"terminalId": id, "command": "true"}, 1009, "no terminal with id")
	if d := dataOf(t, e); d["kind"] != "terminal_not_found" {
		t.Fatalf("not found data %v", d)
	}
}

func TestTerminalBadParamsAndOutsideRoots(t *testing.T) {
	t.Parallel()
	s := startTerms(t, false)
	outside := t.TempDir()
	for _, c := range []struct {
		method string
		params map[string]any
		code   int64
		want   string
	}{
		{"terminal/run", map[string]any{}, rpc.CodeInvalidParams, `"command"`},
		{"terminal/run", map[string]any{"command": 5}, rpc.CodeInvalidParams, `"command"`},
		{"terminal/run", map[string]any{"command": "true", "timeoutMs": -1}, rpc.CodeInvalidParams, `"timeoutMs"`},
		{"terminal/run", map[string]any{"command": "true", "cwd": outside}, 1003, "outside the workspace roots"},
		{"terminal/run", map[string]any{"command": "true", "cwd": "../.."}, 1003, "outside the workspace roots"},
		{"terminal/run", map[string]any{"command": "true", "cwd": "missing"}, 1001, "does not exist"},
		{"terminal/open", map[string]any{"cwd": outside}, 1003, "outside the workspace roots"},
		{"terminal/open", map[string]any{"shell": "fish"}, rpc.CodeInvalidParams, `"shell"`},
		{"terminal/open", map[string]any{"env": map[string]any{"A=B": "c"}}, rpc.CodeInvalidParams, `"env"`},
		{"terminal/output", map[string]any{}, rpc.CodeInvalidParams, `"terminalId"`},
		{"terminal/output", map[string]any{"terminalId": "t99"}, 1009, `"t99"`},
		{"terminal/send_input", map[string]any{"terminalId": "t99", "data": "x"}, 1009, `"t99"`},
		{"terminal/resize", map[string]any{"terminalId": "t99", "cols": 1, "rows": 1}, 1009, `"t99"`},
		{"terminal/close", map[string]any{"terminalId": "t99"}, 1009, `"t99"`},
	} {
		t.Run(c.method+" "+fmt.Sprint(c.params), func(t *testing.T) {
			s.callErr(c.method, c.params, c.code, c.want)
		})
	}
	if l := s.list(); len(l) != 0 {
		t.Fatalf("refused calls opened terminals: %+v", l)
	}
	id := s.open(nil)
	s.callErr("terminal/resize", map[string]any{"terminalId": id, "cols": 0, "rows": 10}, rpc.CodeInvalidParams, `"cols"`)
	s.callErr("terminal/send_input", map[string]any{"terminalId": id}, rpc.CodeInvalidParams, `"data"`)
	s.callErr("terminal/output", map[string]any{"terminalId": id, "seq": 42}, 1017, "no command with seq 42")
}

func TestTerminalRunWithoutIDReusesOrOpens(t *testing.T) {
	t.Parallel()
	s := startTerms(t, false)
	id := s.open(nil)
	// An idle terminal is reused.
	for range 3 {
		if r := s.run(map[string]any{"command": "echo reuse"}); r.TerminalID != id || r.Output != "reuse\n" {
			t.Fatalf("run without terminalId: %v; want reuse of %s", r, id)
		}
	}
	// Concurrent runs while all are busy open new terminals, up to the
	// limit of 8.
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r runResult
			if err := s.c.Call(longCtx(t), "terminal/run", map[string]any{"command": fmt.Sprintf("echo run%d; sleep 30", i), "noOutputTimeoutMs": 200}, &r); err != nil {
				t.Errorf("run %d: %v", i, err)
			}
			ids[i] = r.TerminalID
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	if len(seen) != 8 || !seen[id] {
		t.Fatalf("8 concurrent runs used terminals %v; want 8 distinct, including %s", ids, id)
	}
	s.awaitList("8 running terminals", func(l []listEntry) bool {
		n := 0
		for _, e := range l {
			if e.State == "running" {
				n++
			}
		}
		return n == 8
	})
	// A ninth is refused, listing what runs where.
	e := s.callErr("terminal/run", map[string]any{"command": "echo nine"}, 1012, "all 8 terminals are busy")
	d := dataOf(t, e)
	ts, _ := d["terminals"].([]any)
	if d["kind"] != "terminal_limit" || d["limit"] != float64(8) || len(ts) != 8 {
		t.Fatalf("limit data %v", d)
	}
	if first, _ := ts[0].(map[string]any); first["terminalId"] != "t1" || !strings.Contains(fmt.Sprint(first["command"]), "sleep 30") {
		t.Fatalf("limit data names %v", ts[0])
	}
	s.callErr("terminal/open", nil, 1012, "all 8 terminals are busy")
	// Freeing one makes room again, and the freed terminal is reused.
	var ir runResult
	s.call("terminal/kill", map[string]any{"terminalId": "t3"}, &ir)
	if r := s.run(map[string]any{"command": "echo again"}); r.TerminalID != "t3" || r.Output != "again\n" {
		t.Fatalf("after freeing t3: %v", r)
	}
}

func TestTerminalCancelledRunKeepsRunning(t *testing.T) {
	t.Parallel()
	// Streaming, so the test knows when the terminal has read "before":
	// its terminal/did_output says so.
	s := startTerms(t, true)
	id := s.open(nil)
	reqID, ch, err := s.c.Start("terminal/run", map[string]any{"terminalId": id, "command": "echo before; sleep 1.5; echo after"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.AwaitNotification(longCtx(t), "terminal/did_output", func(p json.RawMessage) bool {
		var o didOutput
		return json.Unmarshal(p, &o) == nil && strings.Contains(o.Data, "before")
	}); err != nil {
		t.Fatalf("no terminal/did_output with the command's first line: %v", err)
	}
	s.c.Notify("$/cancelRequest", map[string]any{"id": reqID})
	select {
	case m := <-ch:
		if m.Error == nil || m.Error.Code != rpc.CodeRequestCancelled {
			t.Fatalf("cancelled run answered %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled run did not answer")
	}
	// The command goes on; polling returns all its output, including what
	// the cancelled call had read.
	l := s.list()
	if l[0].State != "running" || !strings.Contains(l[0].Command, "sleep 1.5") {
		t.Fatalf("after cancel: %+v", l)
	}
	var p runResult
	s.call("terminal/output", map[string]any{"terminalId": id, "waitMs": 10000}, &p)
	exited(t, p, 0)
	if p.Output != "before\nafter\n" {
		t.Fatalf("poll after cancel: %v", p)
	}
}

type didOutput struct {
	TerminalID string
	Data       string
	Offset     int64
	Lost       int64
}

type didState struct {
	TerminalID, State, Command, Cwd, Reason string
	Seq                                     int
	ExitCode                                *int
}

func awaitState(t *testing.T, c *rpctest.Client, match func(didState) bool) didState {
	t.Helper()
	var got didState
	_, err := c.AwaitNotification(longCtx(t), "terminal/did_change_state", func(p json.RawMessage) bool {
		var st didState
		json.Unmarshal(p, &st)
		if match(st) {
			got = st
			return true
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// drainOutput takes the did_output notifications already received, in order.
func drainOutput(t *testing.T, c *rpctest.Client, id string) []didOutput {
	var out []didOutput
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		m, err := c.AwaitNotification(ctx, "terminal/did_output", nil)
		cancel()
		if err != nil {
			return out
		}
		var o didOutput
		json.Unmarshal(m.Params, &o)
		if o.TerminalID == id {
			out = append(out, o)
		}
	}
}

func TestTerminalStreaming(t *testing.T) {
	t.Parallel()
	s := startTerms(t, true)
	id := s.open(nil)
	awaitState(t, s.c, func(st didState) bool { return st.TerminalID == id && st.State == "idle" })
	r := s.run(map[string]any{"terminalId": id, "command": "printf 'h\\303\\251llo w\\303\\266rld\\n'; seq 1 2000 | tr '\\n' ' '; echo; (exit 4)"})
	exited(t, r, 4)
	running := awaitState(t, s.c, func(st didState) bool { return st.TerminalID == id && st.State == "running" })
	idle := awaitState(t, s.c, func(st didState) bool { return st.TerminalID == id && st.State == "idle" })
	if running.Seq != r.Seq || idle.Seq != r.Seq || idle.ExitCode == nil || *idle.ExitCode != 4 || idle.Cwd != s.root {
		t.Fatalf("state notifications %+v then %+v for %v", running, idle, r)
	}
	// The state change follows the output that ended the command, so the
	// output is all here now.
	chunks := drainOutput(t, s.c, id)
	var all strings.Builder
	next := chunks[0].Offset
	for _, ch := range chunks {
		if ch.Offset != next || ch.Lost != 0 || !utf8.ValidString(ch.Data) {
			t.Fatalf("chunk at %d (lost %d), want offset %d: %q", ch.Offset, ch.Lost, next, ch.Data)
		}
		next += int64(len(ch.Data))
		all.WriteString(ch.Data)
	}
	if !strings.Contains(all.String(), "héllo wörld") || !strings.Contains(all.String(), "1999 2000") {
		t.Fatalf("streamed output lacks the command's output: %q", all.String())
	}
	// Closing reports the terminal dead.
	s.call("terminal/close", map[string]any{"terminalId": id}, nil)
	awaitState(t, s.c, func(st didState) bool { return st.TerminalID == id && st.State == "dead" })
}

func TestTerminalNoStreamingWithoutTheCapability(t *testing.T) {
	t.Parallel()
	s := startTerms(t, false)
	exited(t, s.run(map[string]any{"command": "echo quiet"}), 0)
	for _, method := range []string{"terminal/did_output", "terminal/did_change_state"} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		m, err := s.c.AwaitNotification(ctx, method, nil)
		cancel()
		if err == nil {
			t.Fatalf("got %s %s without terminal.streaming", method, m.Params)
		}
	}
}

func TestTerminalCapabilities(t *testing.T) {
	_, c := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	res, err := c.Initialize(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Capabilities struct {
			Terminal struct {
				Run, Pty, Streaming bool
				Shells              []string
				MaxTerminals        int
			}
		}
	}
	json.Unmarshal(res, &r)
	term := r.Capabilities.Terminal
	if !term.Run || !term.Pty || !term.Streaming || term.MaxTerminals != 8 || len(term.Shells) == 0 || term.Shells[0] != "bash" {
		t.Fatalf("terminal capabilities in %s", res)
	}
}
