package localserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

// AgentServerVersion is the agent-server the bridge starts through uvx or
// Docker: the one Agent Canvas 1.20.0 pins (config/defaults.json
// "versions.agentServer"), which the bridge's tests follow.
const AgentServerVersion = "1.49.1"

// Way is one way of starting an agent-server on this machine.
type Way struct {
	// Kind is "installed", "uvx" or "docker".
	Kind string
	// Program and Args start it, before the host and port arguments.
	Program string
	Args    []string
	// Source says where the command comes from, for the docs and the log.
	Source string
}

// Command is the way's command line for a port, as the person is shown
// it (the session key goes in the environment, never here).
func (w Way) Command(port int) []string {
	out := append([]string{w.Program}, w.Args...)
	return append(out, w.hostPort(port)...)
}

func (w Way) hostPort(port int) []string {
	return []string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}
}

// Describe names the way in words, for a question to the person.
func (w Way) Describe() string {
	switch w.Kind {
	case "installed":
		return "the installed OpenHands agent-server (" + w.Program + ")"
	case "uvx":
		return "OpenHands' agent-server " + AgentServerVersion + " from PyPI, through uvx"
	default:
		return "OpenHands' agent-server image " + AgentServerVersion + " in Docker"
	}
}

// LookPath finds a program.
type LookPath func(string) (string, error)

// SafeLookPath finds a program on PATH as exec.LookPath does, but never in
// a relative entry of PATH ("", ".", "bin": they name the current
// directory's files) nor in one inside a workspace root (a project's
// node_modules/.bin or bin put on PATH by the person's shell): a program
// found there is the workspace's, and a cloned repository could carry an
// `agent-server` or a `uvx` of its own.
func SafeLookPath(roots []string) LookPath {
	return func(name string) (string, error) {
		for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
			if !filepath.IsAbs(dir) || insideAny(dir, roots) {
				continue
			}
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				if insideAny(p, roots) { // a link into the workspace
					continue
				}
				return p, nil
			}
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
}

// insideAny says whether path, its links resolved, is one of roots or
// under one.
func insideAny(path string, roots []string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = filepath.Clean(path)
	}
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			rr = filepath.Clean(r)
		}
		if rel, err := filepath.Rel(rr, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Ways lists how an agent-server can be started here, best first: an
// installed one (the openhands-agent-server package's `agent-server`
// script, or its module under python3), then uvx with the package, then
// Docker with OpenHands' image. look finds the programs (SafeLookPath(nil)
// when nil). Python runs isolated (-I: neither the current directory nor
// PYTHON* variables reach its module path), so an `openhands/` package in
// a workspace cannot stand in for the real one. Sources:
// openhands-agent-server pyproject.toml [project.scripts] agent-server;
// __main__.py (--host, --port, default 8000); agent-canvas 1.20.0
// scripts/dev-safe.mjs (the uvx command); config/defaults.json
// (images.agentServer).
func Ways(look LookPath, pythonHasModule func(python string) bool) []Way {
	if look == nil {
		look = SafeLookPath(nil)
	}
	var ways []Way
	for _, name := range []string{"agent-server", "openhands-agent-server"} {
		if p, err := look(name); err == nil {
			ways = append(ways, Way{Kind: "installed", Program: p, Source: "openhands-agent-server's console script"})
			break
		}
	}
	if len(ways) == 0 {
		if py, err := look("python3"); err == nil && pythonHasModule != nil && pythonHasModule(py) {
			ways = append(ways, Way{Kind: "installed", Program: py, Args: []string{"-I", "-m", "openhands.agent_server"}, Source: "python -I -m openhands.agent_server"})
		}
	}
	if p, err := look("uvx"); err == nil {
		v := AgentServerVersion
		ways = append(ways, Way{Kind: "uvx", Program: p, Args: []string{
			"--from", "openhands-agent-server==" + v,
			"--with", "openhands-sdk==" + v, "--with", "openhands-tools==" + v, "--with", "openhands-workspace==" + v,
			"agent-server",
		}, Source: "Agent Canvas's launcher (scripts/dev-safe.mjs)"})
	}
	if p, err := look("docker"); err == nil {
		// Host networking: the agent in the container reaches the
		// bridge's MCP endpoint on 127.0.0.1, and the server listens on
		// the host's loopback only.
		ways = append(ways, Way{Kind: "docker", Program: p, Args: []string{
			"run", "--rm", "--network", "host", "-e", "OH_SESSION_API_KEYS_0",
			"ghcr.io/openhands/agent-server:" + AgentServerVersion + "-python",
		}, Source: "OpenHands' agent-server image (ghcr.io/openhands/agent-server)"})
	}
	return ways
}

// WaysHere are how a server can be started for a workspace with these
// roots: the programs on PATH, never one in the workspace (SafeLookPath),
// and a Python only if the agent-server imports in it. Every face asks
// this.
func WaysHere(roots []string) []Way {
	return Ways(SafeLookPath(roots), PythonHasAgentServer)
}

// PythonHasAgentServer says whether python can import
// openhands.agent_server: run isolated (-I) from the root directory, so
// that no module of the bridge's working directory or of a workspace is
// imported, or run, in its place.
func PythonHasAgentServer(python string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-c", "import openhands.agent_server")
	cmd.Dir = string(filepath.Separator)
	return cmd.Run() == nil
}

// StartOptions say how to start a server.
type StartOptions struct {
	// Port to listen on; 0 picks a free one.
	Port int
	// Dir is the server's working directory; the state directory when
	// "". Never a workspace root: the agent-server reads its config file,
	// and browser-use a .env, relative to it, and uvx a uv.toml there.
	Dir string
	// Log receives the server's output.
	Log io.Writer
	// StateDir keeps what the server stores (its settings, secrets and
	// conversations: OH_PERSISTENCE_DIR) and the secret key they are
	// encrypted with; StateDir() when "".
	StateDir string
	// Timeout bounds the start (uvx may first download the package);
	// StartTimeout when zero.
	Timeout time.Duration
	// Trust checks each connection to the server (nil: the person's and
	// root's sockets only).
	Trust *Trust
}

// StartTimeout is how long a start may take: uvx fetches the package and
// its dependencies on first use.
const StartTimeout = 5 * time.Minute

// Server is an agent-server the bridge started. It stops when Stop is
// called, and with the bridge, however the bridge ends: it runs under a
// supervisor that ends it, with what it started, when the bridge dies
// (supervise.go; docs/platforms.md says what each platform reaches:
// Windows has no supervisor yet).
type Server struct {
	Found
	Way  Way
	proc serverProcess
	done chan struct{}
	err  error // how the process ended, once done is closed

	stopOnce sync.Once
}

// StartError is a start that failed: what was run, and its last output.
type StartError struct {
	Way    Way
	Reason string
	Tail   string
}

func (e *StartError) Error() string {
	s := fmt.Sprintf("could not start %s: %s", e.Way.Describe(), e.Reason)
	if e.Tail != "" {
		s += "; its last output: " + e.Tail
	}
	return s
}

// Kind is "server_start_failed".
func (e *StartError) Kind() string { return "server_start_failed" }

// Start starts an agent-server the way given, on 127.0.0.1 only, with a
// fresh session key, and waits until it answers as an agent-server should.
func Start(ctx context.Context, w Way, o StartOptions) (*Server, error) {
	if o.Timeout == 0 {
		o.Timeout = StartTimeout
	}
	port := o.Port
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, &StartError{Way: w, Reason: "no free port on 127.0.0.1: " + err.Error()}
		}
		port = p
	}
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	state, env, err := stateEnv(o.StateDir)
	if err != nil {
		return nil, &StartError{Way: w, Reason: err.Error()}
	}
	if o.Dir == "" {
		o.Dir = state
	}
	args := append(append([]string{}, w.Args...), w.hostPort(port)...)
	cmd := exec.Command(w.Program, args...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "OH_SESSION_API_KEYS_0="+key)
	if w.Kind != "docker" {
		cmd.Env = append(cmd.Env, env...)
	}
	tail := &tailBuffer{max: 4096}
	var out io.Writer = tail
	if o.Log != nil {
		out = io.MultiWriter(o.Log, tail)
	}
	cmd.Stdout, cmd.Stderr = out, out
	proc, err := launch(cmd)
	if err != nil {
		return nil, &StartError{Way: w, Reason: err.Error()}
	}
	s := &Server{Way: w, proc: proc, done: make(chan struct{})}
	s.Found = Found{URL: "http://127.0.0.1:" + strconv.Itoa(port), SessionAPIKey: key, Source: FromStarted, KeySource: "the key the bridge made for it"}
	go func() { s.err = proc.wait(); close(s.done) }()

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	hc := o.Trust.HTTPClient(ProbeTimeout)
	// A starting server is asked until it answers: it says nothing else
	// when it is ready. Its key goes only to the process it started: the
	// port was free when picked, and another program may have taken it
	// before the server listened.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		listening, err := s.ownsPort(port)
		if err != nil {
			s.Stop()
			return nil, &StartError{Way: w, Reason: err.Error(), Tail: tail.String()}
		}
		if listening {
			v, err := Probe(ctx, hc, s.URL, key)
			if err == nil {
				s.Version = v
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, &StartError{Way: w, Reason: "it exited (" + exitWords(s.err) + ") before it answered", Tail: tail.String()}
		case <-ctx.Done():
			s.Stop()
			reason := "it did not answer within " + o.Timeout.String()
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				reason = "the start was cancelled"
			}
			return nil, &StartError{Way: w, Reason: reason, Tail: tail.String()}
		case <-tick.C:
		}
	}
}

// ownsPort says whether the server the bridge started is what listens on
// port: a descendant of the bridge's process (uvx's Python child, the
// server itself), or for Docker, a process of the person's or root's
// (the container's, which the Docker daemon starts). False with no error
// while nothing listens yet; an error when something else took the port.
func (s *Server) ownsPort(port int) (bool, error) {
	o, listening, err := sockowner.Listening(netip.MustParseAddr("127.0.0.1"), port)
	o = o.Resolve()
	switch {
	case err != nil:
		return true, nil // this system cannot tell: the probe's answer decides
	case !listening:
		return false, nil
	case o.PID > 0 && sockowner.DescendsFrom(o.PID, os.Getpid()):
		return true, nil
	case s.Way.Kind == "docker" && o.IsPersonOrRoot():
		return true, nil
	}
	return false, fmt.Errorf("port %d, picked free for it, was taken before it listened by %s: nothing was sent there; start it again", port, o.Describe())
}

// PID is the server's process id (its process group's), not its
// supervisor's.
func (s *Server) PID() int { return s.proc.pid() }

// Done is closed when the server's process, and what it started, have
// ended.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stop ends the server: SIGTERM to its process group, then SIGKILL to
// what is left of its tree once the server has ended (under a
// supervisor) or 5 s later. It returns once the server has ended.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { s.proc.stop(s.done) })
}

func exitWords(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func newKey() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
}

// StateDir is where a server the bridge starts keeps its state:
// $XDG_DATA_HOME/oh-bridge/agent-server (~/.local/share/... by default).
// Not ~/.openhands: that is Agent Canvas's and the CLI's, whose
// settings.json holds keys encrypted with their own secret, which a server
// with another secret could neither read nor must overwrite.
func StateDir() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "oh-bridge", "agent-server"), nil
}

// stateEnv is the environment that keeps a started server's state in
// dir: OH_PERSISTENCE_DIR, and OH_SECRET_KEY from a key made once and kept
// there (0600). Without a lasting secret the server would encrypt with its
// session key, new at each start, and could not read what it stored
// before: a reopened conversation's LLM key among it.
func stateEnv(dir string) (string, []string, error) {
	if dir == "" {
		d, err := StateDir()
		if err != nil {
			return "", nil, fmt.Errorf("no directory for the server's state: %w", err)
		}
		dir = d
	}
	if err := ownfile.Dir(dir, "the started agent-server's state directory"); err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "secret-key.txt")
	secret, err := readSecret(path)
	if errors.Is(err, os.ErrNotExist) {
		secret, err = newKey()
		if err == nil {
			err = ownfile.Create(path, []byte(secret+"\n"), "the started agent-server's state directory")
		}
		if errors.Is(err, os.ErrExist) {
			// Another bridge made it meanwhile: use theirs.
			secret, err = readSecret(path)
		}
	}
	if err != nil {
		return "", nil, err
	}
	// Everything the server keeps goes under dir, named in full: its
	// defaults are relative to its working directory (workspace/...).
	env := []string{
		"OH_PERSISTENCE_DIR=" + dir, "OH_SECRET_KEY=" + secret,
		"OH_CONVERSATIONS_PATH=" + filepath.Join(dir, "conversations"),
		"OH_BASH_EVENTS_DIR=" + filepath.Join(dir, "bash_events"),
		"OPENHANDS_AGENT_SERVER_CONFIG_PATH=" + filepath.Join(dir, "agent_server_config.json"),
	}
	// And it reaches nothing beyond this machine on its own: the bridge
	// opens no connection the person did not ask for, nor does a server
	// it starts. These are defaults: the person's environment wins.
	for _, kv := range quietServer {
		if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
			env = append(env, kv)
		}
	}
	return dir, env, nil
}

// quietServer turns off what an agent-server would fetch or send at start
// with nothing asked of it (docs/openhands-local.md, section E): LiteLLM's
// model cost map from GitHub, browser-use's telemetry, the tools' preload
// (Chromium) and the VS Code server, which an agent with only the bridge's
// tools never uses.
var quietServer = []string{
	"LITELLM_LOCAL_MODEL_COST_MAP=True",
	"ANONYMIZED_TELEMETRY=false",
	"OH_PRELOAD_TOOLS=false",
	"OH_ENABLE_VSCODE=false",
	"OPENHANDS_SUPPRESS_BANNER=1",
}

// readSecret reads the state directory's secret key: the bridge's own
// file (0600, the person's, not a link), holding one key of the shape the
// bridge makes.
func readSecret(path string) (string, error) {
	data, err := ownfile.Read(path, ownfile.Options{What: "the started agent-server's secret key", Limit: keyFileLimit})
	if err != nil {
		return "", err
	}
	secret := strings.TrimSpace(string(data))
	if !keyShape.MatchString(secret) {
		return "", &ownfile.UnsafeError{Path: path, What: "the started agent-server's secret key", Why: "is not a key the bridge made (48 hex digits)",
			Fix: "remove it: the bridge makes a new one, and what the server stored with the old one must be set again"}
	}
	return secret, nil
}

// keyShape is the shape of the keys newKey makes.
var keyShape = regexp.MustCompile(`^[0-9a-f]{48}$`)
