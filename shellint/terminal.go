package shellint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Defaults; each can be overridden in Options.
const (
	DefaultCols           = 250
	DefaultRows           = 50
	DefaultHeadBytes      = 64 << 10
	DefaultTailBytes      = 256 << 10
	DefaultReadyTimeout   = 10 * time.Second
	DefaultInterruptGrace = 2 * time.Second
	DefaultTermGrace      = 2 * time.Second
	inputTimeout          = 2 * time.Second
	killGrace             = 2 * time.Second
	secondInterruptGrace  = 500 * time.Millisecond
	closeGrace            = 500 * time.Millisecond
	keptCommands          = 8
	fgSettleTimeout       = 2 * time.Second
	fgForkTimeout         = 250 * time.Millisecond
)

// Options configure one terminal.
type Options struct {
	// ID names the terminal in events, logs and errors ("t1"); the Pool
	// assigns it.
	ID   string
	Name string
	// Shell is "bash", "zsh", "auto" or "" (= bash), or a path to either.
	Shell string
	// Cwd is the starting directory; "" means the process's own.
	Cwd string
	// Env overrides the environment, after the agent-friendly defaults
	// (PAGER=cat, TERM=xterm-256color, ...).
	Env        map[string]string
	Cols, Rows int
	// Mode forces a mode: ModeNoRC skips the user's rc files,
	// ModeFallback skips the interactive shell. "" tries integrated, then
	// norc, then fallback.
	Mode Mode
	// ReadyTimeout bounds how long a shell may take to show its first
	// integrated prompt before the next mode is tried.
	ReadyTimeout time.Duration
	// InterruptGrace is the wait after Ctrl-C, TermGrace after SIGTERM,
	// before escalating.
	InterruptGrace time.Duration
	TermGrace      time.Duration
	// HeadBytes and TailBytes bound the text kept per command.
	HeadBytes, TailBytes int
	// SubscriberBuffer bounds raw bytes queued per slow subscriber.
	SubscriberBuffer int64
	// LineEditing keeps readline (bash) / ZLE (zsh) at the prompt, for
	// people typing into a mirrored terminal. Off by default: the line
	// editor reads and echoes the submitted line byte by byte, roughly
	// doubling per-command latency. Without it the tty's own line editing
	// (erase, kill line) still works.
	LineEditing bool
	// OnEvent, if set, is subscribed before the shell starts, so it sees
	// every byte (Subscribe later only sees what comes after).
	OnEvent func(Event)
	Logger  *slog.Logger

	// testHangNoRC makes the norc attempt hang too, to exercise fallback.
	testHangNoRC bool
}

// RunOptions bound how long Run (or Output) waits. Zero values disable a
// limit; with none set, the call waits for the command to finish or ctx.
type RunOptions struct {
	// Timeout is hard: when it expires the command is interrupted
	// (Ctrl-C, SIGTERM, SIGKILL) and the call returns what it printed,
	// with Reason "timeout".
	Timeout time.Duration
	// NoOutputTimeout is soft: when the command prints nothing for this
	// long, the call returns the output so far with Running set; the
	// command keeps running and can be polled with Output.
	NoOutputTimeout time.Duration
	// Yield is soft: return after this long even if output continues.
	Yield time.Duration
	// Cwd, for Run: change to this directory first (fails the command
	// with cd's error if it does not exist).
	Cwd string
}

// Result is one view of a command: the output not returned by an earlier
// call for the same command, and its state.
type Result struct {
	TerminalID string
	Seq        int
	Command    string
	// Output is cooked text: escape sequences stripped, "\r\n" as "\n".
	Output string
	// TruncatedBytes were dropped from this Output by the per-command cap;
	// the text then contains a "[... N bytes truncated ...]" line.
	TruncatedBytes int64
	// TotalBytes is the command's cooked output size so far.
	TotalBytes int64
	Running    bool
	// ExitCode is set once the command finished: its status, 128+signal
	// when it was killed (130 Ctrl-C, 143 SIGTERM, 137 SIGKILL), or the
	// shell's status when the shell itself exited.
	ExitCode *int
	// Reason says why the call returned: "exited", "shell_exited",
	// "not_run" (the shell exited before it read the command: nothing of
	// it ran, ExitCode is the shell's status), "timeout", "interrupted",
	// "killed", "closed", "no_output_timeout", "yield" or "canceled".
	Reason string
	// Escalation says what ended an interrupted command: "ctrl_c",
	// "sigterm", "sigkill" or "session_killed".
	Escalation string
	Cwd        string
	// AltScreen is set when the command switched to the alternate
	// screen (a full-screen program); its output is not meaningful text.
	AltScreen bool
	Mode      Mode
	Duration  time.Duration
}

// Info is a terminal snapshot for listings.
type Info struct {
	ID, Name  string
	State     State
	Mode      Mode
	Shell     string
	PID       int
	Cwd       string
	Seq       int
	Command   string
	AltScreen bool
	Cols      int
	Rows      int
}

// command is the record of one submitted command.
type command struct {
	seq        int
	text       string
	file       string
	started    bool // its output counts (line submitted, or fallback process started)
	began      bool // the shell has read its whole line (C came), or the fallback process started
	done       bool
	exitCode   int
	reason     string
	escalation string
	cwd        string
	start, end time.Time
	lastOutput time.Time
	out        *outputBuffer
	cook       *cooker
	proc       *ptyProc // fallback only
	delivered  bool     // the final Result was handed out
	typed      bool     // typed as it is, not through the eval line (typed.go)
}

// Terminal is one terminal: a shell on a PTY, or (in fallback mode) a run
// directory from which each command gets its own `bash -c`.
type Terminal struct {
	id, name  string
	opts      Options
	log       *slog.Logger
	shellKind string // "bash" or "zsh"
	shellPath string
	runDir    string
	nonce     string

	writeMu sync.Mutex // one writer at a time, so input is not interleaved

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	state   State
	mode    Mode
	cwd     string
	cols    int
	rows    int
	proc    *ptyProc // the shell (integrated/norc); the current command's process (fallback)
	ready   bool
	scan    markScanner
	mirror  []byte // mirrored bytes not yet handed to subscribers (mirror.go)
	// promptPending: a command ended (D) and the prompt after it (A) has
	// not been read yet.
	promptPending bool
	// typed: the shell runs the typed-mode integration (its D marker ends
	// in "f"); hookLost: the last prompt came without our prompt hook
	// having run, so the next command re-arms it through the eval line;
	// lastEval: the last command went through the eval line.
	typed, hookLost, lastEval bool
	testEvalOnly              bool // tests: every command through the eval line
	seq                       int
	cur                       *command
	cmds                      []*command
	offset                    int64
	subs                      []*subscriber
	// text is the command text (of command textSeq) for the next
	// TextEvent.
	text     []byte
	textSeq  int
	reserved bool
	closed   bool
	status   int // shell's exit status once dead
	closeWG  sync.WaitGroup
}

// Start opens a terminal and waits until its shell is ready (or the
// fallback mode is chosen).
func Start(ctx context.Context, o Options) (*Terminal, error) {
	s, err := newTerminal(o)
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func newTerminal(o Options) (*Terminal, error) {
	if err := platformError(); err != nil {
		return nil, err
	}
	if o.Cols == 0 {
		o.Cols = DefaultCols
	}
	if o.Rows == 0 {
		o.Rows = DefaultRows
	}
	if o.Cols < 0 || o.Cols > 65535 {
		return nil, &InvalidOptionError{Option: "cols", Value: strconv.Itoa(o.Cols), Reason: "must be between 1 and 65535"}
	}
	if o.Rows < 0 || o.Rows > 65535 {
		return nil, &InvalidOptionError{Option: "rows", Value: strconv.Itoa(o.Rows), Reason: "must be between 1 and 65535"}
	}
	if o.HeadBytes == 0 {
		o.HeadBytes = DefaultHeadBytes
	}
	if o.TailBytes == 0 {
		o.TailBytes = DefaultTailBytes
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.InterruptGrace <= 0 {
		o.InterruptGrace = DefaultInterruptGrace
	}
	if o.TermGrace <= 0 {
		o.TermGrace = DefaultTermGrace
	}
	switch o.Mode {
	case "", ModeIntegrated, ModeNoRC, ModeFallback:
	default:
		return nil, &InvalidOptionError{Option: "mode", Value: string(o.Mode), Reason: `use "integrated", "norc" or "fallback"`}
	}
	kind, path, err := resolveShell(o.Shell)
	if err != nil {
		return nil, err
	}
	cwd := o.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, &InvalidOptionError{Option: "cwd", Value: "", Reason: "the current directory is unavailable; pass cwd"}
		}
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, &InvalidOptionError{Option: "cwd", Value: cwd, Reason: "not an existing directory"}
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	runDir, err := os.MkdirTemp("", "oh-bridge-term-")
	if err != nil {
		return nil, fmt.Errorf("create terminal run directory: %w", err)
	}
	// MkdirTemp already uses 0700; be explicit, the command files live here.
	_ = os.Chmod(runDir, 0o700)
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Terminal{
		id:        o.ID,
		name:      o.Name,
		opts:      o,
		log:       log.With("component", "shellint", "terminal", o.ID),
		shellKind: kind,
		shellPath: path,
		runDir:    runDir,
		nonce:     hex.EncodeToString(nb[:]),
		changed:   make(chan struct{}),
		state:     StateStarting,
		cwd:       cwd,
		cols:      o.Cols,
		rows:      o.Rows,
	}
	if o.OnEvent != nil {
		s.subs = append(s.subs, newSubscriber(o.OnEvent, o.SubscriberBuffer))
	}
	return s, nil
}

// start tries the modes in order until one comes up.
func (t *Terminal) start(ctx context.Context) error {
	// The first event names the terminal before any output, so a mirror
	// can be titled before it shows anything.
	t.mu.Lock()
	t.setStateLocked(StateStarting, nil, "")
	t.mu.Unlock()
	modes := []Mode{ModeIntegrated, ModeNoRC, ModeFallback}
	switch t.opts.Mode {
	case ModeNoRC:
		modes = modes[1:]
	case ModeFallback:
		modes = modes[2:]
	}
	for _, m := range modes {
		if m == ModeFallback {
			t.mu.Lock()
			t.mode = ModeFallback
			t.setStateLocked(StateIdle, nil, "")
			t.mu.Unlock()
			t.log.Info("terminal ready", "mode", m, "shell", t.shellPath)
			return nil
		}
		ok, err := t.startShell(ctx, m)
		if err != nil {
			return err
		}
		if ok {
			t.log.Info("terminal ready", "mode", m, "shell", t.shellPath, "pid", t.PID())
			return nil
		}
	}
	return nil
}

// startShell spawns the interactive shell for mode m and waits for its
// first nonce-checked prompt. ok=false means it did not come up in time (or
// died); it has been killed and the next mode should be tried.
func (t *Terminal) startShell(ctx context.Context, m Mode) (ok bool, err error) {
	argv, env, err := t.shellCommand(m)
	if err != nil {
		return false, err
	}
	t.mu.Lock()
	t.mode = m
	t.ready = false
	t.typed, t.hookLost, t.lastEval = false, false, false
	t.scan = markScanner{}
	t.mu.Unlock()
	// Hold mu across the start so that onData, which takes mu, cannot see
	// the first bytes before t.proc says whose they are.
	t.mu.Lock()
	p, err := startProc(argv, env, []byte(t.nonce+"\n"), t.cwd, t.cols, t.rows, t.onData, t.onExit)
	if err != nil {
		t.mu.Unlock()
		return false, &StartError{Shell: t.shellPath, Err: err}
	}
	t.proc = p
	t.mu.Unlock()

	deadline := time.NewTimer(t.opts.ReadyTimeout)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		ready, ch := t.ready, t.changed
		if ready {
			t.setStateLocked(StateIdle, nil, "")
			t.mu.Unlock()
			return true, nil
		}
		t.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-p.exited:
			t.log.Warn("shell exited before its first prompt; trying the next mode", "mode", m, "status", p.status)
		case <-deadline.C:
			t.log.Warn("shell integration did not come up; trying the next mode", "mode", m, "timeout", t.opts.ReadyTimeout)
		case <-ctx.Done():
			t.detach(p)
			return false, ctx.Err()
		}
		t.detach(p)
		return false, nil
	}
}

// detach kills a shell attempt that is being abandoned, without declaring
// the terminal dead.
func (t *Terminal) detach(p *ptyProc) {
	t.mu.Lock()
	if t.proc == p {
		t.proc = nil
	}
	t.mu.Unlock()
	p.terminate(closeGrace)
}

// ID returns the terminal id given in Options.
func (t *Terminal) ID() string { return t.id }

// State returns the current state.
func (t *Terminal) State() State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

// Mode returns the integration mode in use.
func (t *Terminal) Mode() Mode {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode
}

// Cwd returns the shell's working directory as last reported.
func (t *Terminal) Cwd() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cwd
}

// PID returns the shell's process id (in fallback mode, the running
// command's, or 0).
func (t *Terminal) PID() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc == nil {
		return 0
	}
	return t.proc.pid
}

// Info returns a snapshot for listings.
func (t *Terminal) Info() Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.infoLocked()
}

func (t *Terminal) infoLocked() Info {
	in := Info{ID: t.id, Name: t.name, State: t.state, Mode: t.mode, Shell: t.shellKind,
		Cwd: t.cwd, Seq: t.seq, Cols: t.cols, Rows: t.rows}
	if t.proc != nil && t.state != StateDead {
		in.PID = t.proc.pid
	}
	if c := t.cur; c != nil {
		in.Command = c.text
		in.AltScreen = c.cook.altScreen
	}
	return in
}

// Close kills the shell and every process in its session (SIGHUP, then
// SIGKILL), ends a running command with Reason "closed", stops
// subscriptions after delivering the final state, and removes the run
// directory. It is safe to call more than once.
func (t *Terminal) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.closeWG.Wait()
		return nil
	}
	t.closed = true
	t.closeWG.Add(1)
	defer t.closeWG.Done()
	p := t.proc
	if t.cur != nil && t.cur.proc != nil {
		p = t.cur.proc
	}
	t.mu.Unlock()
	if p != nil {
		p.terminate(closeGrace)
	}
	t.mu.Lock()
	if c := t.cur; c != nil && !c.done {
		c.reason = "closed"
		t.finishLocked(c, 129, "closed")
	}
	if t.state != StateDead {
		t.setStateLocked(StateDead, nil, "closed")
	}
	subs := t.subs
	t.subs = nil
	t.mu.Unlock()
	for _, sub := range subs {
		sub.close()
	}
	if err := os.RemoveAll(t.runDir); err != nil {
		return fmt.Errorf("remove terminal run directory %s: %w", t.runDir, err)
	}
	return nil
}

// tryReserve reserves an idle terminal; with cwd set, only one in cwd.
func (t *Terminal) tryReserve(cwd string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The foreground-group check is left to submit, which can wait for
	// prompt hooks to finish.
	if t.state != StateIdle || t.cur != nil || t.reserved || t.closed || (cwd != "" && t.cwd != cwd) {
		return false
	}
	t.reserved = true
	return true
}

func (t *Terminal) releaseReserve() {
	t.mu.Lock()
	t.reserved = false
	t.mu.Unlock()
}

func (t *Terminal) deadAndDelivered() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state != StateDead {
		return false
	}
	for _, c := range t.cmds {
		if c.out.read < c.out.total || !c.delivered {
			return false
		}
	}
	return true
}
