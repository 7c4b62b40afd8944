package ohtools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/shellint"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// ToolboxOptions configure an Agent.
type ToolboxOptions struct {
	// FS is the workspace (required); its first root is where the
	// terminal starts and what file_editor's description names.
	FS *workspace.FS
	// Editor is the session's editor, whose undo history the agent shares;
	// nil gives the agent a history of its own.
	Editor *editor.Editor
	// TerminalID and TerminalName identify the agent's terminal in events
	// ("mcp-1", "OpenHands agent").
	TerminalID   string
	TerminalName string
	// OnTerminalEvent, if set, receives the terminal's raw output and state
	// changes, for a person to watch.
	OnTerminalEvent func(shellint.Event)
	// NoChangeTimeout is the soft timeout; 0 means NO_CHANGE_TIMEOUT_SECONDS
	// from the environment, else DefaultNoChangeTimeout.
	NoChangeTimeout time.Duration
	// MaxWait bounds how long one terminal call waits (0: as long as the
	// command's own timeouts say). A call that reaches it returns as after
	// a hard timeout of that length; the command keeps running.
	MaxWait time.Duration
	// ShellMode and Env are passed to the terminal (see shellint.Options).
	ShellMode shellint.Mode
	Env       map[string]string
	Logger    *slog.Logger
	// ShowFile shows the file at the absolute path path to the person, in
	// an editor tab, at line (from 1; 0 for none); nil when there is no
	// editor to show it in. The path is inside the workspace by then.
	ShowFile func(ctx context.Context, path string, line int) error
}

// Toolbox is one agent's tools, as one OpenHands conversation has them: its
// own terminal and task list, and the workspace's files. Calls may come
// concurrently: terminal calls run one at a time, file edits are
// serialized per file.
type Toolbox struct {
	opts   ToolboxOptions
	editor *editor.Editor
	term   *terminal
	tasks  taskTracker
	closed chan struct{}
	once   sync.Once

	// progress is the reporter of the terminal call in progress, if any.
	progress atomic.Pointer[progressReporter]
}

// NewToolbox returns an agent's tools. It starts no process: the terminal
// starts with the first command.
func NewToolbox(o ToolboxOptions) (*Toolbox, error) {
	if o.FS == nil {
		return nil, errors.New("ohtools: AgentOptions.FS is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TerminalID == "" {
		o.TerminalID = "oh-terminal"
	}
	if o.TerminalName == "" {
		o.TerminalName = "OpenHands agent"
	}
	if o.NoChangeTimeout <= 0 {
		o.NoChangeTimeout = engine.NoChangeTimeout(DefaultNoChangeTimeout)
	}
	ed := o.Editor
	if ed == nil {
		ed = editor.New(o.FS, editor.Options{})
	}
	a := &Toolbox{opts: o, editor: ed.With(editor.Options{Dialect: editor.FileEditor}), closed: make(chan struct{})}
	a.term = &terminal{
		noChange: o.NoChangeTimeout,
		maxWait:  o.MaxWait,
		python:   engine.LookupPython(o.Env),
		id:       o.TerminalID,
		shell: engine.New(engine.Options{
			Dir:    o.FS.Roots().First(),
			Start:  a.startTerminal,
			Closed: a.closed,
		}),
	}
	return a, nil
}

// startTerminal opens the agent's shell, streamed to OnTerminalEvent.
func (t *Toolbox) startTerminal(dir string) (*shellint.Terminal, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return shellint.Start(ctx, shellint.Options{
		ID:      t.opts.TerminalID,
		Name:    t.opts.TerminalName,
		Shell:   "bash",
		Cwd:     dir,
		Env:     t.opts.Env,
		Cols:    256, // TMUX_SESSION_WIDTH x TMUX_SESSION_HEIGHT
		Rows:    200,
		Mode:    t.opts.ShellMode,
		OnEvent: t.shellEvent,
		Logger:  t.opts.Logger,
	})
}

func (t *Toolbox) shellEvent(ev shellint.Event) {
	if t.opts.OnTerminalEvent != nil {
		t.opts.OnTerminalEvent(ev)
	}
	if r := t.progress.Load(); r != nil && ev.Text != nil {
		r.output(ev.Text.Text)
	}
}

// TerminalID is the id of the agent's terminal in events.
func (t *Toolbox) TerminalID() string { return t.opts.TerminalID }

// Progress is a report on a call still running.
type Progress struct {
	Elapsed time.Duration
	Message string // the last line the command printed
}

// Call is one tool call, its arguments checked, and what it would do.
type Call struct {
	Tool string
	// Args are the arguments parsed into the tool's type (*TerminalArgs,
	// *FileEditorArgs, ...): every reader takes them from here.
	Args   Args
	Action Action
	// Card is what the call's card shows before it runs; its Kind is the
	// tool's.
	Card     Card
	CardKind CardKind

	tool *Tool
}

// Action is what a call would do, for asking the user first.
type Action struct {
	// Kind is ACP's tool kind: "execute", "read", "edit" or "think".
	Kind  string
	Title string
	// NeedsPermission is false for calls that change nothing outside the
	// agent (task_tracker).
	NeedsPermission bool
}

// Parse checks a call's arguments against the tool's schema, as the
// agent's own validation would. The error is an *ArgumentError, or an
// *UnknownToolError.
func Parse(name string, arguments json.RawMessage) (*Call, error) {
	t, ok := Lookup(name)
	if !ok {
		return nil, &UnknownToolError{Name: name}
	}
	args, err := t.parse(arguments)
	if err != nil {
		return nil, err
	}
	return &Call{Tool: name, Args: args, Action: args.Action(), Card: args.Card(), CardKind: t.Card, tool: t}, nil
}

// Call parses and runs one tool call; see Run.
func (t *Toolbox) Call(ctx context.Context, name string, arguments json.RawMessage, progress func(Progress)) (*Observation, error) {
	c, err := Parse(name, arguments)
	if err != nil {
		return nil, err
	}
	return t.Run(ctx, c, progress)
}

// Run runs a parsed call. progress, if not nil, is called while a
// terminal command runs: when it prints (at most four times a second) and
// once a second otherwise. The tool's own failures are observations with
// IsError; the error is ctx's, or the agent's being closed. When ctx ends
// while a command runs, the engine stops the command before the terminal
// takes another call, as OpenHands does when a conversation is
// interrupted.
func (t *Toolbox) Run(ctx context.Context, c *Call, progress func(Progress)) (*Observation, error) {
	select {
	case <-t.closed:
		return nil, errors.New("the agent's tools are closed")
	default:
	}
	if c.tool == nil {
		return nil, &UnknownToolError{Name: c.Tool}
	}
	return c.tool.run(ctx, t, c.Args, progress)
}

// Interrupt stops the running command, if any (Ctrl-C, then signals).
func (t *Toolbox) Interrupt(ctx context.Context) {
	t.term.shell.Interrupt(ctx)
}

// Close ends the agent's terminal and whatever it runs.
func (t *Toolbox) Close() {
	t.once.Do(func() {
		close(t.closed)
		t.term.shell.Close()
	})
}

// progressReporter turns a running command's output into Progress calls.
type progressReporter struct {
	fn    func(Progress)
	start time.Time

	// sendMu is held while fn runs, so reports arrive in order and none
	// arrives after stop returns.
	sendMu sync.Mutex

	mu   sync.Mutex
	last string    // the last complete, non-blank line
	part string    // the line being printed
	sent time.Time // when the last report went out
	done bool
}

const (
	progressMinInterval = 250 * time.Millisecond
	progressHeartbeat   = time.Second
)

func (t *Toolbox) reportProgress(fn func(Progress)) (stop func()) {
	r := &progressReporter{fn: fn, start: time.Now()}
	r.sent = r.start
	t.progress.Store(r)
	tick := time.NewTicker(progressHeartbeat)
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				r.report(false)
			}
		}
	}()
	return func() {
		t.progress.CompareAndSwap(r, nil)
		tick.Stop()
		close(quit)
		r.sendMu.Lock()
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
		r.sendMu.Unlock()
	}
}

// output takes the command's text, as the terminal parsed it out of the
// stream (the prompt and the shell's marks are not in it); the last
// printed line is kept for the message.
func (r *progressReporter) output(text string) {
	r.mu.Lock()
	for _, c := range strings.SplitAfter(text, "\n") {
		if strings.HasSuffix(c, "\n") {
			if line := pytext.Strip(r.part + c); line != "" {
				r.last = line
			}
			r.part = ""
			continue
		}
		if i := strings.LastIndexByte(c, '\r'); i >= 0 { // a progress bar redraws its line
			r.part, c = "", c[i+1:]
		}
		r.part += c
	}
	r.mu.Unlock()
	r.report(true)
}

// report sends a Progress unless one went out too recently: output is
// reported at most every 250 ms, and the heartbeat only after a second of
// quiet, so that elapsed times always grow.
func (r *progressReporter) report(onOutput bool) {
	if onOutput {
		// The terminal's event goroutine also feeds the person's mirror:
		// never make it wait for a slow progress receiver.
		if !r.sendMu.TryLock() {
			return
		}
	} else {
		r.sendMu.Lock()
	}
	defer r.sendMu.Unlock()
	r.mu.Lock()
	now := time.Now()
	wait := progressHeartbeat
	if onOutput {
		wait = progressMinInterval
	}
	if r.done || now.Sub(r.sent) < wait {
		r.mu.Unlock()
		return
	}
	r.sent = now
	msg := r.last
	if p := pytext.Strip(r.part); p != "" {
		msg = p
	}
	r.mu.Unlock()
	r.fn(Progress{Elapsed: now.Sub(r.start), Message: pytext.Head(msg, 200)})
}
