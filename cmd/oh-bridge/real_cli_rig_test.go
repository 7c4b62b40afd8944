//go:build unix

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// The rig TestRealCLI runs the CLI in: one bridge, its terminals and
// what they stream, and each run's folder, HOME and programs.

// cliRig is one bridge whose terminals run the CLI, a workspace root, the
// terminals' mirrored streams and the proxy that refuses the CLI's calls
// home.
type cliRig struct {
	venv  string
	root  string
	b     *bridge
	watch *termWatch
	trap  *proxyTrap
}

func startCLIRig(t *testing.T, venv string) *cliRig {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &cliRig{venv: venv, root: root, watch: newTermWatch(), trap: startProxyTrap(t)}
	// Nothing of the developer's environment but where programs are and
	// the locale: no LLM_*, OPENHANDS_*, LMNR_* or OTEL_* reaches the CLI.
	env := []string{"HOME=" + t.TempDir()}
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	r.b = startBridgeClean(t, env, "--workspace", root)
	r.b.client.DivertNotifications(r.watch.note)
	ctx := ctxT(t)
	if _, err := r.b.client.Initialize(ctx, map[string]any{"processId": nil, "capabilities": map[string]any{"terminal": map[string]any{"streaming": true}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.b.client.Call(ctx, "shutdown", nil, nil)
		r.b.client.Notify("exit", nil)
		r.b.wait(t, 10*time.Second)
	})
	return r
}

// startBridgeClean is startBridge with exactly env as the environment.
func startBridgeClean(t *testing.T, env []string, args ...string) *bridge {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return runBridge(t, cmd)
}

// cliResult is a terminal/run result.
type cliResult struct {
	Output    string
	ExitCode  *int
	Reason    string
	AltScreen bool
}

// run runs a command in the terminal and waits for it to end.
func (r *cliRig) run(t *testing.T, tid, command string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var res cliResult
	if err := r.b.client.Call(ctx, "terminal/run", map[string]any{"terminalId": tid, "command": command, "timeoutMs": 270000}, &res); err != nil {
		t.Fatalf("terminal/run %q: %v", command, err)
	}
	return res
}

// termState is a terminal's terminal/list entry.
type termState struct {
	TerminalID, State, Command string
}

func (r *cliRig) state(t *testing.T, tid string) termState {
	t.Helper()
	var list []termState
	if err := r.b.client.Call(ctxT(t), "terminal/list", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.TerminalID == tid {
			return e
		}
	}
	t.Fatalf("%s is not listed: %+v", tid, list)
	return termState{}
}

func (r *cliRig) input(t *testing.T, tid, data string) {
	t.Helper()
	if err := r.b.client.Call(ctxT(t), "terminal/send_input", map[string]any{"terminalId": tid, "data": data}, nil); err != nil {
		t.Fatal(err)
	}
}

// cliRun is one run's workspace folder, HOME and programs.
type cliRun struct {
	r    *cliRig
	dir  string // the workspace folder the terminal starts in
	home string
	path string // a directory first in PATH: openhands and oh-bridge
	env  map[string]string
}

func (r *cliRig) newRun(t *testing.T, name string) *cliRun {
	run := &cliRun{r: r, dir: filepath.Join(r.root, name), home: t.TempDir(), path: t.TempDir()}
	if err := os.Mkdir(run.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// As `uv tool install openhands` links it into ~/.local/bin.
	if err := os.Symlink(filepath.Join(r.venv, "bin", "openhands"), filepath.Join(run.path, "openhands")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(run.path, "oh-bridge")); err != nil {
		t.Fatal(err)
	}
	run.env = map[string]string{
		"HOME": run.home,
		"PATH": run.path + string(os.PathListSeparator) + os.Getenv("PATH"),
		// LiteLLM reads its model cost map from the package instead of
		// fetching it from GitHub.
		"LITELLM_LOCAL_MODEL_COST_MAP": "True",
		"OPENHANDS_SUPPRESS_BANNER":    "1",
	}
	for k, v := range r.trap.env() {
		run.env[k] = v
	}
	// The CLI's terminal tool starts a tmux server (socket "openhands")
	// and leaves it running, with a session per start: here it is one of
	// the run's own, ended with the run. The directory's path is short,
	// as sockets' must be (104 bytes on macOS).
	tmux, err := os.MkdirTemp("", "oh-tmux-")
	if err != nil {
		t.Fatal(err)
	}
	run.env["TMUX_TMPDIR"] = tmux
	t.Cleanup(func() {
		sockets, _ := filepath.Glob(filepath.Join(tmux, "tmux-*", "*"))
		for _, s := range sockets {
			exec.Command("tmux", "-S", s, "kill-server").Run()
		}
		os.RemoveAll(tmux)
	})
	return run
}

// cmdline is the command line of the CLI's process run as `openhands
// args`: its script (a sh and Python polyglot) execs the python beside
// its real path on itself.
func (run *cliRun) cmdline(args string) string {
	real, _ := filepath.EvalSymlinks(filepath.Join(run.r.venv, "bin", "openhands"))
	return filepath.Join(filepath.Dir(real), "python") + " " + filepath.Join(run.path, "openhands") + " " + args
}

// headlessEnv adds the model for --override-with-envs.
func (run *cliRun) headlessEnv(model *scriptedllm.Server) map[string]string {
	env := map[string]string{"LLM_MODEL": "openai/oh-scripted", "LLM_BASE_URL": model.URL, "LLM_API_KEY": "sk-scripted"}
	for k, v := range run.env {
		env[k] = v
	}
	return env
}

func (run *cliRun) writeHome(t *testing.T, name, text string) {
	dir := filepath.Join(run.home, ".openhands")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// traceWith makes openhands run under strace, which follows every
// process it starts (the MCP server, git) and logs their connections.
func (run *cliRun) traceWith(t *testing.T, strace, log string) {
	shim := filepath.Join(run.path, "openhands")
	os.Remove(shim)
	script := fmt.Sprintf("#!/bin/sh\nexec %s -f -qq -e trace=connect,sendto,sendmsg -e signal=none -o %s %s \"$@\"\n",
		shQuote(strace), shQuote(log), shQuote(filepath.Join(run.r.venv, "bin", "openhands")))
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// open opens a bash terminal in the run's folder.
func (run *cliRun) open(t *testing.T, env map[string]string) string {
	var open struct{ TerminalID, Mode string }
	err := run.r.b.client.Call(ctxT(t), "terminal/open", map[string]any{"shell": "bash", "name": "OpenHands", "cwd": run.dir, "env": env}, &open)
	if err != nil {
		t.Fatal(err)
	}
	if open.Mode != "integrated" {
		t.Fatalf("terminal %s opened in mode %q, want integrated", open.TerminalID, open.Mode)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terminal %s showed:\n%s", open.TerminalID, tail(run.r.watch.output(open.TerminalID), 6000))
		}
	})
	return open.TerminalID
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// commandLineMark is a command line as OSC 633;E carries it (VS Code's
// escaping: \ as \\, ; and control characters as \xNN).
func commandLineMark(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == ';' || c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// termWatch keeps each terminal's mirrored stream (terminal/did_output).
type termWatch struct {
	mu      sync.Mutex
	out     map[string]*strings.Builder
	changed chan struct{} // closed and replaced on each notification
}

func newTermWatch() *termWatch {
	return &termWatch{out: map[string]*strings.Builder{}, changed: make(chan struct{})}
}

func (w *termWatch) note(m rpctest.Message) {
	if m.Method != "terminal/did_output" {
		return
	}
	var p struct{ TerminalID, Data string }
	json.Unmarshal(m.Params, &p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.out[p.TerminalID] == nil {
		w.out[p.TerminalID] = &strings.Builder{}
	}
	w.out[p.TerminalID].WriteString(p.Data)
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *termWatch) output(tid string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.out[tid]; b != nil {
		return b.String()
	}
	return ""
}

// await waits until ok holds, checking it on each notification.
func (w *termWatch) await(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.After(limit)
	for {
		w.mu.Lock()
		ch := w.changed
		w.mu.Unlock()
		if ok() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
	}
}
