package ohactions

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/shellint"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// DefaultNoChangeTimeout is OpenHands' soft timeout: a command that prints
// nothing new for this long returns with exit code -1 and keeps running.
const DefaultNoChangeTimeout = 10 * time.Second

// Options configure a Runtime.
type Options struct {
	// FS is the workspace the file actions act on (required). Its first
	// root is the agent shell's starting directory.
	FS *workspace.FS
	// Editor runs OHEditor commands; nil makes one with
	// RequireAbsolutePaths, as OpenHands requires.
	Editor *editor.Editor
	// NoChangeTimeout is the soft timeout; 0 means NO_CHANGE_TIMEOUT_SECONDS
	// or DefaultNoChangeTimeout (engine.NoChangeTimeout).
	NoChangeTimeout time.Duration
	// ShellMode forces a shellint mode for the agent shell: "" loads the
	// user's ~/.bashrc as OpenHands' interactive tmux bash does;
	// shellint.ModeNoRC skips it.
	ShellMode shellint.Mode
	// Env is added to the agent shell's environment (after shellint's
	// agent defaults such as PAGER=cat).
	Env map[string]string
	// Python is the interpreter for run_ipython; "" looks up python3.
	Python string
	// OnShellEvent, when set, receives the agent shell's raw output and
	// state changes (terminal id "oh-agent"), so an editor can show the
	// agent's commands live. One-off static shells are not streamed.
	OnShellEvent func(shellint.Event)
	Logger       *slog.Logger
}

// Runtime executes OpenHands actions for one agent. Actions run one at a
// time, in arrival order, as under action_execution_server's asyncio.Lock.
// Shells are started lazily: New costs nothing.
type Runtime struct {
	opts   Options
	log    *slog.Logger
	fs     *workspace.FS
	ed     *editor.Editor
	root   string
	ident  identity
	turn   chan struct{} // one action at a time
	closed chan struct{}

	idMu   sync.Mutex
	nextID int64

	bash *engine.Shell // guarded by turn
	pyMu sync.Mutex
	py   *pythonSession
}

func (r *Runtime) isClosed() bool {
	select {
	case <-r.closed:
		return true
	default:
		return false
	}
}

// identity is what bash.py reads from its PS1 prompt besides the exit code
// and working directory.
type identity struct {
	username, hostname, python string
}

// New returns a runtime over opts.FS. It starts no process.
func New(opts Options) (*Runtime, error) {
	if opts.FS == nil {
		return nil, errors.New("ohactions: Options.FS is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.NoChangeTimeout <= 0 {
		opts.NoChangeTimeout = engine.NoChangeTimeout(DefaultNoChangeTimeout)
	}
	ed := opts.Editor
	if ed == nil {
		ed = editor.New(opts.FS, editor.Options{RequireAbsolutePaths: true})
	}
	r := &Runtime{
		opts:   opts,
		log:    opts.Logger.With("component", "ohactions"),
		fs:     opts.FS,
		ed:     ed,
		root:   opts.FS.Roots().First(),
		ident:  lookupIdentity(opts.Env),
		turn:   make(chan struct{}, 1),
		closed: make(chan struct{}),
	}
	r.bash = engine.New(engine.Options{
		Dir:    r.root,
		Start:  func(dir string) (*shellint.Terminal, error) { return r.startShell(dir, "oh-agent", true) },
		Closed: r.closed,
	})
	return r, nil
}

// lookupIdentity gives the values of PS1's \u, \h and `which python`.
// py_interpreter_path is looked up once on the agent shell's starting PATH
// (see docs/openhands-compat.md).
func lookupIdentity(env map[string]string) identity {
	var id identity
	if u, err := user.Current(); err == nil {
		id.username = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		id.hostname, _, _ = strings.Cut(h, ".")
	}
	id.python = engine.LookupPython(env)
	return id
}

// Execute runs one action (the JSON of an OpenHands action dict) and
// returns its observation. Failures of the action itself are observations
// (ErrorObservation, "ERROR:\n..." contents), as in OpenHands; an error is
// returned only for an action that cannot be decoded (*ActionError), a
// closed runtime, or ctx ending. When ctx ends while a command runs, the
// caller has given up on it: the engine stops the command (Ctrl-C, then
// signals) before the next action runs.
func (r *Runtime) Execute(ctx context.Context, raw json.RawMessage) (*Observation, error) {
	a, err := ParseAction(raw)
	if err != nil {
		return nil, err
	}
	select {
	case r.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.closed:
		return nil, errClosed
	}
	defer func() { <-r.turn }()
	select {
	case <-r.closed:
		return nil, errClosed
	default:
	}
	obs, err := r.dispatch(ctx, a)
	if err != nil {
		var ae *argError
		if !errors.As(err, &ae) {
			return nil, err
		}
		obs = errorObservation(ae.Error())
	}
	return r.stamp(a, obs), nil
}

// errClosed reports an action sent after Close.
var errClosed = &engine.ClosedError{}

// Executed are the action types this runtime executes; Answered are the
// ones OpenHands answers without executing (AgentThinkObservation or
// NullObservation).
var (
	Executed = []string{"run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive", "call_tool_mcp"}
	Answered = []string{"think", "finish", "message", "system", "reject", "delegate", "recall", "change_agent_state",
		"condensation", "condensation_request", "task_tracking", "loop_recovery", "null", "start", "pause", "resume",
		"stop", "push", "send_pr"}
)

func (r *Runtime) dispatch(ctx context.Context, a *Action) (*Observation, error) {
	if cs, _ := a.str("confirmation_state", ""); cs == "awaiting_confirmation" {
		return nullObservation(), nil
	}
	switch a.Type {
	case "run":
		return r.run(ctx, a)
	case "run_ipython":
		return r.runIPython(ctx, a)
	case "read":
		return r.read(ctx, a)
	case "write":
		return r.write(ctx, a)
	case "edit":
		return r.edit(ctx, a)
	case "browse", "browse_interactive":
		return errorObservation("Browser functionality is not supported or disabled. " +
			"This runtime has no browser: fetch pages with the `run` action instead, e.g. `curl -sL <url>`."), nil
	case "call_tool_mcp":
		return errorObservation("MCP tools are not available in this runtime (oh-bridge). " +
			"Use the `run` action to run the tool's command instead."), nil
	case "think":
		return thinkObservation(), nil
	}
	for _, t := range Answered {
		if a.Type == t {
			return nullObservation(), nil
		}
	}
	return errorObservation("Unsupported action type '" + a.Type + "'. This runtime executes: " +
		strings.Join(Executed, ", ") + "; and acknowledges: " + strings.Join(Answered, ", ") + "."), nil
}

// Close stops the agent shell and the Python session, killing whatever
// they run. It waits for a running action to notice and is safe to call
// more than once.
func (r *Runtime) Close() error {
	select {
	case <-r.closed:
		return nil
	default:
		close(r.closed)
	}
	r.bash.Close()
	r.pyMu.Lock()
	py := r.py
	r.pyMu.Unlock()
	if py != nil {
		py.close()
	}
	return nil
}

// cwd is the agent shell's working directory (bash.py's self.cwd).
func (r *Runtime) cwd() string {
	if d := r.bash.Cwd(); d != "" {
		return d
	}
	return r.root
}

// startShell opens a bash for the agent (or a one-off static command).
func (r *Runtime) startShell(cwd, id string, stream bool) (*shellint.Terminal, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := shellint.Options{
		ID:     id,
		Name:   "OpenHands agent",
		Shell:  "bash",
		Cwd:    cwd,
		Env:    r.opts.Env,
		Cols:   1000, // tmux's pane in OpenHands is 1000x1000
		Rows:   1000,
		Mode:   r.opts.ShellMode,
		Logger: r.opts.Logger,
	}
	if stream {
		o.OnEvent = r.opts.OnShellEvent
	}
	return shellint.Start(ctx, o)
}

func lookPython(p string) (string, error) {
	if p == "" {
		p = "python3"
	}
	return exec.LookPath(p)
}
