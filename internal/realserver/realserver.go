// Package realserver starts the real OpenHands agent-server for tests, in
// the spirit of net/http/httptest: the one `task openhands` installs from
// the hashed lock files in test/openhands (one Python environment per lock
// under ~/.cache/oh-bridge/openhands/<lock>-<hash>/).
//
// Each server runs on 127.0.0.1 in a fresh directory of its own: its cwd
// (where it keeps its conversations, workspace/conversations), HOME,
// OH_PERSISTENCE_DIR and its configuration file, with no .env (browser-use
// reads one from the cwd), a clean environment, and nothing that reaches
// past loopback: LiteLLM's model cost map is read from the package, the
// browser-use telemetry is off, the tools are not preloaded (no Chromium)
// and there is no VS Code server.
package realserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// The lock files in test/openhands, by name.
const (
	// Latest is openhands-agent-server 1.58.2 with its SDK and tools.
	Latest = "agent-server-1.58"
	// Canvas is 1.49.1, the version Agent Canvas 1.20.0 starts.
	Canvas = "agent-server-1.49"
	// CLI is the OpenHands CLI 1.16.0 (openhands-sdk 1.21.0).
	CLI = "cli-1.16"
)

// InstallCommand installs every lock's environment.
const InstallCommand = "go run github.com/go-task/task/v3/cmd/task@v3.53.1 openhands"

// marker is the file install.sh writes last into a finished environment.
const marker = ".oh-bridge-complete"

// StartTimeout bounds how long a server may take to answer /ready: a cold
// start imports some 370 packages, which takes 10 to 40 s on a busy
// two-core machine.
const StartTimeout = 3 * time.Minute

// LockDir is the repository's test/openhands.
func LockDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "test", "openhands")
}

// CacheDir is where install.sh builds the environments:
// OH_BRIDGE_OPENHANDS_CACHE, else ~/.cache/oh-bridge/openhands of the
// user's home in the password database, since test binaries move HOME
// (internal/testhome).
func CacheDir() (string, error) {
	if dir := os.Getenv("OH_BRIDGE_OPENHANDS_CACHE"); dir != "" {
		return dir, nil
	}
	home := ""
	if u, err := user.Current(); err == nil {
		home = u.HomeDir
	}
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("cannot find the home directory that holds ~/.cache/oh-bridge/openhands: %w; set OH_BRIDGE_OPENHANDS_CACHE", err)
		}
	}
	return filepath.Join(home, ".cache", "oh-bridge", "openhands"), nil
}

// NotInstalledError says a lock's environment is not there (yet).
type NotInstalledError struct {
	Lock, Dir string
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("the real OpenHands %s is not installed (no finished environment at %s): run `%s`", e.Lock, e.Dir, InstallCommand)
}

// Kind is the error's kind.
func (e *NotInstalledError) Kind() string { return "not_installed" }

// Venv is the finished environment of the lock file test/openhands/<lock>.txt.
func Venv(lock string) (string, error) {
	data, err := os.ReadFile(filepath.Join(LockDir(), lock+".txt"))
	if err != nil {
		return "", fmt.Errorf("no lock file for %q: %w", lock, err)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	dir := filepath.Join(cache, lock+"-"+hex.EncodeToString(sum[:])[:16])
	if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
		return "", &NotInstalledError{Lock: lock, Dir: dir}
	}
	return dir, nil
}

// Python is the lock environment's interpreter.
func Python(venv string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(venv, "Scripts", "python.exe")
	}
	return filepath.Join(venv, "bin", "python")
}

// Need returns the lock's environment, or ends the test: it fails in CI
// (CI=true), where `task test` installs it first, and is skipped
// elsewhere, saying what to run.
func Need(t testing.TB, lock string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the real agent-server is started on Linux and macOS only")
	}
	venv, err := Venv(lock)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return venv
}

// Options configure a server.
type Options struct {
	// Dir is its own directory: cwd, HOME, persistence, configuration.
	// "" makes a fresh one, removed by Stop.
	Dir string
	// Key is the session API key; "" makes a random one.
	Key string
	// Env are more KEY=VALUE settings (OH_CONVERSATIONS_PATH=…,
	// OH_WEBHOOKS_0_BASE_URL=…); they win over the defaults.
	Env []string
	// Port is the port to listen on; 0 picks a free one. A server started
	// again in the same Dir on the same Port is the same server to its
	// clients, restarted.
	Port int
	// Command makes the server's command (exec.Command when nil): a
	// test wraps it to run it in a network namespace of its own, where
	// Dial reaches it (and Port must be given: no free port is known
	// there).
	Command func(name string, args ...string) *exec.Cmd
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Server is a running agent-server.
type Server struct {
	URL string
	Key string
	// Dir is its cwd; Home and Persistence are beneath it.
	Dir, Home, Persistence string
	// Startup is how long it took from start to answering /ready.
	Startup time.Duration

	cmd    *exec.Cmd
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	log    logbuf.Buffer
	exited chan struct{}
	ownDir bool
	tmux   string
}

// ConversationsDir is where the server keeps its conversations: its
// config's conversations_path, "workspace/conversations" relative to its
// cwd unless OH_CONVERSATIONS_PATH moves it.
func (s *Server) ConversationsDir() string {
	for _, kv := range s.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "OH_CONVERSATIONS_PATH="); ok {
			if filepath.IsAbs(v) {
				return v
			}
			return filepath.Join(s.Dir, v)
		}
	}
	return filepath.Join(s.Dir, "workspace", "conversations")
}

// Log is what the server printed (stdout and stderr).
func (s *Server) Log() string { return s.log.String() }

// Start runs the server of the lock until the test ends, or skips or
// fails the test as Need does when it is not installed. A failing test
// prints the server's log.
func Start(t testing.TB, lock string, o Options) *Server {
	t.Helper()
	venv := Need(t, lock)
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	s, err := Launch(venv, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s started in %v", lock, s.Startup.Round(time.Millisecond))
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("the agent-server's log:\n%s", s.Log())
		}
	})
	return s
}

// Launch runs the agent-server of the environment venv and waits until it
// answers /ready; Stop ends it.
func Launch(venv string, o Options) (*Server, error) {
	var lastErr error
	// A free port can be taken between choosing it and the server binding
	// it: then it is tried again, on another.
	for range 3 {
		s, err := launch(venv, o)
		if err == nil || o.Port != 0 || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(venv string, o Options) (*Server, error) {
	s := &Server{Key: o.Key, Dir: o.Dir, exited: make(chan struct{})}
	if s.Dir == "" {
		dir, err := os.MkdirTemp("", "oh-agent-server-")
		if err != nil {
			return nil, err
		}
		s.Dir, s.ownDir = dir, true
	}
	if s.Key == "" {
		s.Key = random()
	}
	s.Home = filepath.Join(s.Dir, "home")
	s.Persistence = filepath.Join(s.Dir, "persistence")
	config := filepath.Join(s.Dir, "agent_server_config.json")
	for _, d := range []string{s.Home, s.Persistence} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	cfg, _ := json.Marshal(map[string]any{"preload_tools": false, "enable_vscode": false})
	if err := os.WriteFile(config, cfg, 0o600); err != nil {
		return nil, err
	}
	// tmux's socket path must stay short (104 bytes on macOS); the server
	// falls back to its own under /tmp when it is not.
	tmux, err := os.MkdirTemp("", "oh-tmux-")
	if err != nil {
		return nil, err
	}
	s.tmux = tmux
	port := o.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	command := exec.Command
	if o.Command != nil {
		command = o.Command
	}
	s.cmd = command(Python(venv), "-I", "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	s.dial = o.Dial
	s.cmd.Dir = s.Dir
	s.cmd.Env = append(environment(), "HOME="+s.Home,
		"OH_SESSION_API_KEYS_0="+s.Key,
		"OH_SECRET_KEY="+random(),
		"OH_PERSISTENCE_DIR="+s.Persistence,
		"OPENHANDS_AGENT_SERVER_CONFIG_PATH="+config,
		"TMUX_TMPDIR="+tmux,
		"LITELLM_LOCAL_MODEL_COST_MAP=True",
		"ANONYMIZED_TELEMETRY=false",
		"OH_PRELOAD_TOOLS=false",
		"OH_ENABLE_VSCODE=false",
		"OPENHANDS_SUPPRESS_BANNER=1",
		// The log's lines are not wrapped to a terminal's width.
		"COLUMNS=200",
	)
	s.cmd.Env = append(s.cmd.Env, o.Env...)
	s.cmd.Stdout = &s.log
	s.cmd.Stderr = &s.log
	ownGroup(s.cmd)
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("cannot start the agent-server %s: %w", s.cmd.Path, err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	if err := s.awaitReady(start.Add(StartTimeout)); err != nil {
		s.Stop()
		return nil, err
	}
	s.Startup = time.Since(start)
	return s, nil
}

// environment is what the server keeps of the test's environment: where
// its programs are, and the locale. Nothing else: no OH_*, LMNR_*, OTEL_*
// or LLM keys of the developer's reach it.
func environment() []string {
	var env []string
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// awaitReady polls /ready until it answers 200, the process ends, or the
// deadline passes.
func (s *Server) awaitReady(deadline time.Time) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	if s.dial != nil {
		hc.Transport = &http.Transport{DialContext: s.dial}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := hc.Get(s.URL + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the agent-server (%s) ended before it was ready: %v; its log:\n%s", strings.Join(s.cmd.Args, " "), s.cmd.ProcessState, tail(s.Log()))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the agent-server (%s) did not answer GET /ready within %v; its log:\n%s", strings.Join(s.cmd.Args, " "), StartTimeout, tail(s.Log()))
		}
	}
}

// Stop ends the server and what it started in its process group: SIGTERM,
// and SIGKILL after 10 s.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		select {
		case <-s.exited:
		default:
			signalGroup(s.cmd, false)
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				signalGroup(s.cmd, true)
				<-s.exited
			}
		}
	}
	s.cleanup()
}

// Kill ends the server at once, as a crash does: SIGKILL to its process
// group. Stop still removes what it made.
func (s *Server) Kill() {
	if s.cmd.Process != nil {
		signalGroup(s.cmd, true)
		<-s.exited
	}
}

func (s *Server) cleanup() {
	if s.tmux != "" {
		os.RemoveAll(s.tmux)
	}
	if s.ownDir {
		os.RemoveAll(s.Dir)
	}
}

// Exited is closed when the server's process has ended.
func (s *Server) Exited() <-chan struct{} { return s.exited }

func freePort() (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func random() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tail is the end of a log, for an error message.
func tail(log string) string {
	const max = 8000
	if len(log) > max {
		return "…" + log[len(log)-max:]
	}
	if log == "" {
		return "(nothing)"
	}
	return log
}
