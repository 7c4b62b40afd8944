package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// bin is the oh-bridge binary under test, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	code := rpctest.RunWithBridge(m, ".", &bin)
	stopRealServers()
	os.Exit(code)
}

// repoRoot is the module root, for fixtures and test clients.
func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// requireTool finds an external program. CI must have it; elsewhere a
// missing tool skips the test with the install hint.
func requireTool(t *testing.T, name, hint string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run must install it (%s)", name, hint)
		}
		t.Skipf("%s is not installed (%s)", name, hint)
	}
	return path
}

// nodeClients returns node and test/node, where the external test clients
// live, once module (a path under node_modules) is installed there.
func nodeClients(t *testing.T, module string) (node, dir string) {
	t.Helper()
	node = requireTool(t, "node", "Node.js 18 or newer")
	dir = filepath.Join(repoRoot(t), "test", "node")
	if !isDir(filepath.Join(dir, "node_modules", filepath.FromSlash(module))) {
		msg := "run `npm ci --prefix test/node` first (the Taskfile's test task does)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, dir
}

// bridge is a running oh-bridge process and a client on its stdio.
type bridge struct {
	cmd    *exec.Cmd
	client *rpctest.Client
	stdin  io.WriteCloser
	stderr *logbuf.Buffer
	done   chan error
}

func startBridge(t *testing.T, args ...string) *bridge {
	t.Helper()
	return startBridgeEnv(t, nil, args...)
}

// startBridgeEnv is startBridge with env added to the bridge's
// environment.
func startBridgeEnv(t *testing.T, env []string, args ...string) *bridge {
	t.Helper()
	return startBridgeIn(t, "", env, args...)
}

// startBridgeIn is startBridgeEnv with the bridge's working directory dir
// ("" for the test's).
func startBridgeIn(t *testing.T, dir string, env []string, args ...string) *bridge {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return runBridge(t, cmd)
}

// runBridge starts cmd, an `oh-bridge --stdio` run however the test
// needs (in a network namespace of its own), with a client on its stdio.
func runBridge(t *testing.T, cmd *exec.Cmd) *bridge {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	b := &bridge{cmd: cmd, stdin: stdin, stderr: &logbuf.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- cmd.Wait() }()
	b.client = rpctest.NewProcessClient(stdout, stdin)
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", b.stderr.String())
		}
	})
	return b
}

// wait returns the exit code and how long the process took to end.
func (b *bridge) wait(t *testing.T, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case <-b.done:
		return b.cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(limit):
		t.Fatalf("oh-bridge did not exit within %v", limit)
		return -1, 0
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func fileURI(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

func TestVersion(t *testing.T) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "oh-bridge ") {
		t.Fatalf("--version: %q %v", out, err)
	}
}

func TestBadFlagsExplainThemselves(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workspace", "/no/such/dir"}, "workspace root /no/such/dir (from --workspace) does not exist"},
		{[]string{"--log-level", "loud"}, "use debug, info, warn or error"},
		{[]string{"replay"}, "usage: oh-bridge replay"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %v, output %q; want exit 2 mentioning %q", c.args, err, out, c.want)
		}
	}
}

func TestStdioSession(t *testing.T) {
	flagRoot, folder := t.TempDir(), t.TempDir()
	logFile := filepath.Join(t.TempDir(), "bridge.log")
	b := startBridge(t, "--stdio", "--workspace", flagRoot, "--log-file", logFile, "--log-level", "debug")
	ctx := ctxT(t)
	res, err := b.client.Initialize(ctx, map[string]any{
		"processId":        os.Getpid(),
		"workspaceFolders": []map[string]string{{"uri": fileURI(folder), "name": "f"}},
		"capabilities":     map[string]any{"terminal": map[string]any{"streaming": true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		ServerInfo      struct{ Name, Version string }
		ProtocolVersion int
	}
	json.Unmarshal(res, &init)
	if init.ServerInfo.Name != "oh-bridge" || init.ProtocolVersion != 1 {
		t.Fatalf("initialize result %s", res)
	}
	var info struct {
		Roots []string
		PID   int
	}
	if err := b.client.Call(ctx, "bridge/info", nil, &info); err != nil {
		t.Fatal(err)
	}
	if strings.Join(info.Roots, " ") != flagRoot+" "+folder || info.PID != b.cmd.Process.Pid {
		t.Fatalf("bridge/info: %+v; want roots [%s %s] and pid %d", info, flagRoot, folder, b.cmd.Process.Pid)
	}
	if err := b.client.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	b.client.Notify("exit", nil)
	if code, _ := b.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("exit code %d after shutdown+exit, want 0", code)
	}
	if b.stderr.Len() != 0 {
		t.Errorf("with --log-file, stderr should stay empty; got %q", b.stderr.String())
	}
	logs, _ := os.ReadFile(logFile)
	if !bytes.Contains(logs, []byte("initialized")) {
		t.Errorf("the log file lacks the session: %q", logs)
	}
}

func TestStdinEOFExitsPromptly(t *testing.T) {
	b := startBridge(t, "--workspace", t.TempDir())
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	// A request in flight must not hold the exit up.
	b.client.Start("bridge/wait", map[string]any{"ms": 60000})
	b.stdin.Close()
	code, took := b.wait(t, 5*time.Second)
	if code != 1 {
		t.Errorf("exit code %d on EOF without shutdown, want 1", code)
	}
	if took > 2*time.Second {
		t.Errorf("took %v to exit after stdin closed, want ≤ 2s", took)
	}
}

func TestExitsWhenTheEditorDies(t *testing.T) {
	editor := exec.Command("sleep", "60")
	if err := editor.Start(); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, "--workspace", t.TempDir())
	if _, err := b.client.Initialize(ctxT(t), map[string]any{"processId": editor.Process.Pid, "capabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	editor.Process.Signal(syscall.SIGKILL)
	editor.Wait()
	if code, _ := b.wait(t, 6*time.Second); code != 1 {
		t.Fatalf("exit code %d after the editor died, want 1", code)
	}
}

func TestRecordFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session.jsonl")
	b := startBridge(t, "--workspace", t.TempDir(), "--record", file)
	b.client.Initialize(ctxT(t), nil)
	b.client.Call(ctxT(t), "bridge/info", nil, nil)
	b.client.SendRaw([]byte("{broken"))
	b.client.AwaitNullResponse(ctxT(t))
	b.stdin.Close()
	b.wait(t, 5*time.Second)
	f, _ := os.Open(file)
	defer f.Close()
	records, err := rpc.ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range records {
		var m struct{ Method string }
		json.Unmarshal(r.Msg, &m)
		got = append(got, r.Dir+":"+m.Method)
	}
	want := "in:initialize out: in:initialized in:bridge/info out: in: out:"
	if strings.Join(got, " ") != want {
		t.Fatalf("recorded %q, want %q", strings.Join(got, " "), want)
	}
	if records[len(records)-2].Raw == nil {
		t.Fatal("the malformed message was not recorded raw")
	}
}

// TestReplayFixtures replays every recorded session in fixtures/sessions.
// A directory NAME.workspace beside NAME.jsonl is the session's workspace.
func TestReplayFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "fixtures", "sessions", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no fixtures/sessions/*.jsonl")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			args := []string{"replay", f}
			if ws := strings.TrimSuffix(f, ".jsonl") + ".workspace"; isDir(ws) {
				args = []string{"replay", "--workspace", ws, f}
			}
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("replay matches")) {
				t.Fatalf("replay failed (%v):\n%s", err, out)
			}
		})
	}
}

func TestReplayReportsADifference(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "fixtures", "sessions", "lifecycle.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(src, []byte(`"name":"oh-bridge"`), []byte(`"name":"not-the-bridge"`), 1)
	if bytes.Equal(src, tampered) {
		t.Fatal("fixture lacks the serverInfo name")
	}
	file := filepath.Join(t.TempDir(), "tampered.jsonl")
	os.WriteFile(file, tampered, 0o644)
	out, err := exec.Command(bin, "replay", file).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("replay of a tampered session: %v, want exit 1\n%s", err, out)
	}
	for _, want := range []string{"replay differs: 1 of", "response 1", `-       "name": "not-the-bridge"`, `+       "name": "oh-bridge"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestVSCodeJSONRPCClient drives the binary with vscode-jsonrpc, the
// library the VS Code extension uses (test/node).
func TestVSCodeJSONRPCClient(t *testing.T) {
	node, dir := nodeClients(t, "vscode-jsonrpc")
	runClient(t, exec.Command(node, filepath.Join(dir, "lifecycle.cjs"), bin, t.TempDir(), t.TempDir()))
}

// TestNeovimClient drives the binary from headless Neovim through
// vim.lsp.rpc, as docs/editors.md shows.
func TestNeovimClient(t *testing.T) {
	nvim := requireTool(t, "nvim", "apt-get install neovim")
	cmd := exec.Command(nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", "luafile "+filepath.Join(repoRoot(t), "test", "nvim", "lifecycle.lua"))
	cmd.Env = append(os.Environ(), "OH_BRIDGE="+bin, "OH_WORKSPACE="+t.TempDir())
	runClient(t, cmd)
}

// runClient runs an external test client that prints "N passed, N failed".
func runClient(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	runClientFor(t, cmd, 60*time.Second)
}

// agentTimeout bounds one real agent's test script (two runs of the
// agent, about 30 s together here).
const agentTimeout = 4 * time.Minute

// runClientFor is runClient with its own time limit.
func runClientFor(t *testing.T, cmd *exec.Cmd, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	env := cmd.Env
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(" passed, 0 failed")) {
		t.Fatalf("%s: %v\n%s", filepath.Base(cmd.Path), err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		t.Log(sc.Text())
	}
}

// sockets lists the open sockets of a process.
func sockets(t *testing.T, pid int) []string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			out = append(out, target)
		}
	}
	return out
}

// TestNoNetworkUntilAsked checks that the bridge opens no socket of any
// kind until the client calls openhands/connect.
func TestNoNetworkUntilAsked(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x\n"), 0o644)
	b := startBridge(t, "--workspace", ws)
	ctx := ctxT(t)
	if _, err := b.client.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		method string
		params any
	}{
		{"bridge/info", nil},
		{"fs/read_text_file", map[string]any{"path": "a.txt"}},
		{"fs/list_directory", map[string]any{"path": "."}},
		{"openhands/status", nil},
		{"openhands/execute_action", map[string]any{"action": map[string]any{"action": "read", "args": map[string]any{"path": filepath.Join(ws, "a.txt")}}}},
	} {
		if err := b.client.Call(ctx, call.method, call.params, nil); err != nil {
			t.Fatalf("%s: %v", call.method, err)
		}
	}
	if s := sockets(t, b.cmd.Process.Pid); len(s) != 0 {
		t.Fatalf("the bridge holds sockets before openhands/connect: %v", s)
	}
}
