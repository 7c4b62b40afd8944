//go:build linux

package localserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"
	"github.com/oh-bridge/oh-bridge/localserver"
)

// fakeAgentServer puts an `agent-server` on a PATH of its own: the
// stand-in behind a wrapper that reads the arguments and the key the way
// the real script does (--host, --port, OH_SESSION_API_KEYS_0).
func fakeAgentServer(t *testing.T) string {
	t.Helper()
	if err := agentservertest.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/bash
host=127.0.0.1 port=8000
while [ $# -gt 0 ]; do case "$1" in --host) host=$2; shift 2;; --port) port=$2; shift 2;; *) shift;; esac; done
echo "state=$OH_PERSISTENCE_DIR secret=$(printf %%s "$OH_SECRET_KEY" | sha256sum | cut -c1-16)"
exec %q %q --host "$host" --port "$port" --session-api-key "$OH_SESSION_API_KEYS_0"
`, agentservertest.SystemPython, agentservertest.Script())
	if err := os.WriteFile(filepath.Join(dir, "agent-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func lookIn(dir string) localserver.LookPath {
	return func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
}

// listensOnLoopbackOnly says whether the only socket listening on port
// is bound to 127.0.0.1 (/proc/net/tcp; addresses are little-endian hex).
func listensOnLoopbackOnly(t *testing.T, port int) bool {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var binds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" { // LISTEN
			continue
		}
		if strings.HasSuffix(fields[1], fmt.Sprintf(":%04X", port)) {
			binds = append(binds, fields[1])
		}
	}
	return len(binds) == 1 && strings.HasPrefix(binds[0], "0100007F:")
}

// TestStartAndStop: the installed agent-server is the first way; started,
// it answers on 127.0.0.1 only with a fresh key it refuses to go without,
// and Stop leaves no process.
func TestStartAndStop(t *testing.T) {
	dir := fakeAgentServer(t)
	ways := localserver.Ways(lookIn(dir), nil)
	if len(ways) != 1 || ways[0].Kind != "installed" || ways[0].Program != filepath.Join(dir, "agent-server") {
		t.Fatalf("ways: %+v", ways)
	}
	if cmd := strings.Join(ways[0].Command(18123), " "); cmd != filepath.Join(dir, "agent-server")+" --host 127.0.0.1 --port 18123" {
		t.Errorf("the command shown: %s", cmd)
	}
	log := &syncWriter{b: &strings.Builder{}}
	state := t.TempDir()
	s, err := localserver.Start(ctxT(t), ways[0], localserver.StartOptions{Dir: t.TempDir(), Log: log, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.Source != localserver.FromStarted || s.Version == "" || len(s.SessionAPIKey) < 32 || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("started %+v", s.Found)
	}
	var port int
	fmt.Sscanf(s.URL, "http://127.0.0.1:%d", &port)
	if !listensOnLoopbackOnly(t, port) {
		t.Errorf("the server on port %d listens beyond 127.0.0.1", port)
	}
	if _, err := localserver.Probe(ctxT(t), nil, s.URL, ""); !errors.As(err, new(*agentserver.APIKeyError)) {
		t.Errorf("without the key: %v; want it refused", err)
	}
	if _, err := localserver.Probe(ctxT(t), nil, s.URL, s.SessionAPIKey); err != nil {
		t.Errorf("with the key: %v", err)
	}
	// Its state is kept apart from ~/.openhands, under a secret made once.
	fi, err := os.Stat(filepath.Join(state, "secret-key.txt"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the secret key file: %v, %v", fi, err)
	}
	first := stateLine(t, log.String())
	if !strings.HasPrefix(first, "state="+state+" secret=") || strings.HasSuffix(first, "secret=e3b0c44298fc1c14") {
		t.Errorf("the server's state: %q", first)
	}
	pid := s.PID()
	s.Stop()
	select {
	case <-s.Done():
	default:
		t.Fatal("Stop returned before the server ended")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server's process %d is still there after Stop: %v", pid, err)
	}
	// The next start has a new session key and the same secret.
	again := &syncWriter{b: &strings.Builder{}}
	s2, err := localserver.Start(ctxT(t), ways[0], localserver.StartOptions{Dir: t.TempDir(), Log: again, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if second := stateLine(t, again.String()); second != first || s2.SessionAPIKey == s.SessionAPIKey {
		t.Errorf("a second start: state %q (first %q); the session key must be new", second, first)
	}
}

func stateLine(t *testing.T, log string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "state=") {
			return l
		}
	}
	t.Fatalf("the server's output has no state line: %q", log)
	return ""
}

// TestStartFailureSaysWhy: a server that exits before it answers is a
// StartError with its last output.
func TestStartFailureSaysWhy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent-server"), []byte("#!/bin/sh\necho 'No module named openhands.agent_server' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ways := localserver.Ways(lookIn(dir), nil)
	_, err := localserver.Start(ctxT(t), ways[0], localserver.StartOptions{Dir: dir})
	var se *localserver.StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "it exited (exit status 3) before it answered") ||
		!strings.Contains(err.Error(), "No module named openhands.agent_server") || se.Kind() != "server_start_failed" {
		t.Fatalf("got %v", err)
	}
	// Cancelled while it starts: stopped, and said so.
	ctx, cancel := context.WithCancel(context.Background())
	if err := os.WriteFile(filepath.Join(dir, "agent-server"), []byte("#!/bin/sh\necho starting\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := &syncWriter{b: &strings.Builder{}, wrote: make(chan struct{}, 1)}
	go func() { <-log.wrote; cancel() }()
	_, err = localserver.Start(ctx, ways[0], localserver.StartOptions{Dir: dir, Log: log})
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "the start was cancelled") {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestWaysOrder: installed, then uvx, then Docker, each with its command.
func TestWaysOrder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"python3", "uvx", "docker"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ways := localserver.Ways(lookIn(dir), func(string) bool { return true })
	var kinds []string
	for _, w := range ways {
		kinds = append(kinds, w.Kind+": "+strings.Join(w.Command(9), " "))
	}
	want := []string{
		"installed: " + dir + "/python3 -I -m openhands.agent_server --host 127.0.0.1 --port 9",
		"uvx: " + dir + "/uvx --from openhands-agent-server==" + localserver.AgentServerVersion + " --with openhands-sdk==" + localserver.AgentServerVersion +
			" --with openhands-tools==" + localserver.AgentServerVersion + " --with openhands-workspace==" + localserver.AgentServerVersion + " agent-server --host 127.0.0.1 --port 9",
		"docker: " + dir + "/docker run --rm --network host -e OH_SESSION_API_KEYS_0 ghcr.io/openhands/agent-server:" + localserver.AgentServerVersion + "-python --host 127.0.0.1 --port 9",
	}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ways:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
	if got := localserver.Ways(lookIn(dir), func(string) bool { return false }); got[0].Kind != "uvx" {
		t.Errorf("python3 without the module: %+v", got[0])
	}
}

// TestSafeLookPath: a program is never taken from a relative entry of PATH
// (the current directory's) nor from one inside a workspace root, nor
// through a link into one.
func TestSafeLookPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{filepath.Join(root, "bin"), filepath.Join(root, "node_modules", ".bin"), outside} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "agent-server"), []byte("#!/bin/sh\n"), 0o755)
	}
	linked := t.TempDir()
	os.Symlink(filepath.Join(root, "bin", "agent-server"), filepath.Join(linked, "uvx"))
	t.Chdir(root)
	t.Setenv("PATH", strings.Join([]string{"", ".", "bin", filepath.Join(root, "node_modules", ".bin"), linked, outside}, string(os.PathListSeparator)))
	look := localserver.SafeLookPath([]string{root})
	got, err := look("agent-server")
	if err != nil || got != filepath.Join(outside, "agent-server") {
		t.Errorf("agent-server: %q, %v; want the one outside the workspace, %s", got, err, outside)
	}
	if got, err := look("uvx"); err == nil {
		t.Errorf("uvx, a link into the workspace, was found: %s", got)
	}
	t.Setenv("PATH", "bin:.")
	if got, err := localserver.SafeLookPath(nil)("agent-server"); err == nil {
		t.Errorf("a relative PATH entry gave %s", got)
	}
}

// TestPlantedModuleRunsNothing: an openhands package planted in the
// bridge's working directory (a cloned repository) is neither imported
// nor run when the bridge asks whether python has the agent-server.
func TestPlantedModuleRunsNothing(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	shellplant.Run(t, ws, "mkdir -p openhands/agent_server && printf 'open(%q, \"w\").write(\"ran\")\\n' "+marker+" > openhands/__init__.py && : > openhands/agent_server/__init__.py")
	t.Chdir(ws)
	t.Setenv("PYTHONPATH", ws)
	if localserver.PythonHasAgentServer(py) {
		t.Error("the planted openhands.agent_server was taken for the real one")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted openhands/__init__.py ran")
	}
}

// syncWriter is a log the server writes while the test reads it.
type syncWriter struct {
	mu    sync.Mutex
	b     *strings.Builder
	wrote chan struct{}
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.b.Write(p)
	w.mu.Unlock()
	if w.wrote != nil {
		select {
		case w.wrote <- struct{}{}:
		default:
		}
	}
	return n, err
}
