package shellint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
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
	// "timeout", "interrupted", "killed", "closed", "no_output_timeout",
	// "yield" or "canceled".
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

// Session is one terminal: a shell on a PTY, or (in fallback mode) a run
// directory from which each command gets its own `bash -c`.
type Session struct {
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
	reserved                  bool
	closed                    bool
	status                    int // shell's exit status once dead
	closeWG                   sync.WaitGroup
}

// Start opens a terminal and waits until its shell is ready (or the
// fallback mode is chosen).
func Start(ctx context.Context, o Options) (*Session, error) {
	s, err := newSession(o)
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func newSession(o Options) (*Session, error) {
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
	s := &Session{
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

func resolveShell(name string) (kind, path string, err error) {
	switch name {
	case "", "auto", "bash":
		kind = "bash"
	case "zsh":
		kind = "zsh"
	default:
		base := filepath.Base(name)
		switch {
		case strings.HasPrefix(base, "bash"):
			kind = "bash"
		case strings.HasPrefix(base, "zsh"):
			kind = "zsh"
		default:
			return "", "", &InvalidOptionError{Option: "shell", Value: name, Reason: `only bash and zsh are supported; use "bash", "zsh" or "auto"`}
		}
		if filepath.IsAbs(name) {
			if st, err := os.Stat(name); err != nil || st.IsDir() {
				return "", "", &ShellNotFoundError{Shell: name}
			}
			return kind, name, nil
		}
	}
	if name == "" || name == "auto" {
		name = kind
	}
	path, err = exec.LookPath(name)
	if err != nil {
		return "", "", &ShellNotFoundError{Shell: name}
	}
	return kind, path, nil
}

// start tries the modes in order until one comes up.
func (s *Session) start(ctx context.Context) error {
	// The first event names the terminal before any output, so a mirror
	// can be titled before it shows anything.
	s.mu.Lock()
	s.setStateLocked(StateStarting, nil, "")
	s.mu.Unlock()
	modes := []Mode{ModeIntegrated, ModeNoRC, ModeFallback}
	switch s.opts.Mode {
	case ModeNoRC:
		modes = modes[1:]
	case ModeFallback:
		modes = modes[2:]
	}
	for _, m := range modes {
		if m == ModeFallback {
			s.mu.Lock()
			s.mode = ModeFallback
			s.setStateLocked(StateIdle, nil, "")
			s.mu.Unlock()
			s.log.Info("terminal ready", "mode", m, "shell", s.shellPath)
			return nil
		}
		ok, err := s.startShell(ctx, m)
		if err != nil {
			return err
		}
		if ok {
			s.log.Info("terminal ready", "mode", m, "shell", s.shellPath, "pid", s.PID())
			return nil
		}
	}
	return nil
}

// startShell spawns the interactive shell for mode m and waits for its
// first nonce-checked prompt. ok=false means it did not come up in time (or
// died); it has been killed and the next mode should be tried.
func (s *Session) startShell(ctx context.Context, m Mode) (ok bool, err error) {
	argv, env, err := s.shellCommand(m)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	s.mode = m
	s.ready = false
	s.typed, s.hookLost, s.lastEval = false, false, false
	s.scan = markScanner{}
	s.mu.Unlock()
	// Hold mu across the start so that onData, which takes mu, cannot see
	// the first bytes before s.proc says whose they are.
	s.mu.Lock()
	p, err := startProc(argv, env, s.cwd, s.cols, s.rows, s.onData, s.onExit)
	if err != nil {
		s.mu.Unlock()
		return false, &StartError{Shell: s.shellPath, Err: err}
	}
	s.proc = p
	s.mu.Unlock()

	deadline := time.NewTimer(s.opts.ReadyTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ready, ch := s.ready, s.changed
		if ready {
			s.setStateLocked(StateIdle, nil, "")
			s.mu.Unlock()
			return true, nil
		}
		s.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-p.exited:
			s.log.Warn("shell exited before its first prompt; trying the next mode", "mode", m, "status", p.status)
		case <-deadline.C:
			s.log.Warn("shell integration did not come up; trying the next mode", "mode", m, "timeout", s.opts.ReadyTimeout)
		case <-ctx.Done():
			s.detach(p)
			return false, ctx.Err()
		}
		s.detach(p)
		return false, nil
	}
}

// detach kills a shell attempt that is being abandoned, without declaring
// the session dead.
func (s *Session) detach(p *ptyProc) {
	s.mu.Lock()
	if s.proc == p {
		s.proc = nil
	}
	s.mu.Unlock()
	p.terminate(closeGrace)
}

func (s *Session) shellCommand(m Mode) (argv, env []string, err error) {
	env = s.baseEnv()
	env = append(env, "BR_NONCE="+s.nonce, "BR_DIR="+s.runDir)
	if s.opts.LineEditing {
		env = append(env, "BR_EDITING=1")
	}
	if m == ModeNoRC {
		env = append(env, "BR_NORC=1")
	}
	switch s.shellKind {
	case "bash":
		script := bashIntegration
		if m == ModeNoRC && s.opts.testHangNoRC {
			script = "sleep 1000\n" + script
		}
		rc := filepath.Join(s.runDir, "bashrc")
		if err := os.WriteFile(rc, []byte(script), 0o600); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		return []string{s.shellPath, "--noprofile", "--rcfile", rc, "-i"}, env, nil
	default:
		zdot := filepath.Join(s.runDir, "zdot")
		if err := os.MkdirAll(zdot, 0o700); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		zenv := zshEnvIntegration
		if m == ModeNoRC && s.opts.testHangNoRC {
			zenv = "sleep 1000\n" + zenv
		}
		if err := os.WriteFile(filepath.Join(zdot, ".zshenv"), []byte(zenv), 0o600); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		if err := os.WriteFile(filepath.Join(zdot, ".zshrc"), []byte(zshRcIntegration), 0o600); err != nil {
			return nil, nil, fmt.Errorf("write shell integration: %w", err)
		}
		userZdot, set := s.lookupEnv("ZDOTDIR")
		if set {
			env = append(env, "BR_USER_ZDOTDIR="+userZdot)
		}
		env = append(env, "ZDOTDIR="+zdot)
		return []string{s.shellPath, "-i"}, env, nil
	}
}

func (s *Session) lookupEnv(k string) (string, bool) {
	if v, ok := s.opts.Env[k]; ok {
		return v, true
	}
	return os.LookupEnv(k)
}

// agentEnv makes programs behave for a reader that cannot page, answer
// prompts or wait for buffered output.
var agentEnv = [][2]string{
	{"TERM", "xterm-256color"},
	{"PAGER", "cat"},
	{"GIT_PAGER", "cat"},
	{"MANPAGER", "cat"},
	{"LESS", "-FRX"},
	{"GIT_TERMINAL_PROMPT", "0"},
	{"DEBIAN_FRONTEND", "noninteractive"},
	{"PYTHONUNBUFFERED", "1"},
}

// baseEnv is the process environment minus what would confuse the
// integration, plus agentEnv, plus the caller's overrides.
func (s *Session) baseEnv() []string {
	drop := map[string]bool{
		"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true,
		"COLUMNS": true, "LINES": true, "ZDOTDIR": true,
		"BR_NONCE": true, "BR_NORC": true, "BR_DIR": true, "BR_EDITING": true, "BR_USER_ZDOTDIR": true,
	}
	for _, kv := range agentEnv {
		drop[kv[0]] = true
	}
	for k := range s.opts.Env {
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] && !strings.HasPrefix(k, "__br_") {
			env = append(env, kv)
		}
	}
	for _, kv := range agentEnv {
		if _, ok := s.opts.Env[kv[0]]; !ok {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	for k, v := range s.opts.Env {
		if k == "ZDOTDIR" {
			continue // handed to the zsh integration separately
		}
		env = append(env, k+"="+v)
	}
	return env
}

// ---- reader side (called from ptyProc goroutines) ----

func (s *Session) onData(p *ptyProc, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p != s.proc && (s.cur == nil || s.cur.proc != p) {
		return // an abandoned startup attempt
	}
	if s.mode == ModeFallback {
		s.mirrorTextLocked(b)
		s.flushMirrorLocked()
		s.commandTextLocked(b)
		return
	}
	s.scan.feed(b, s.onTextLocked, s.onMarkLocked)
	s.flushMirrorLocked()
}

func (s *Session) onTextLocked(b []byte) {
	s.mirrorTextLocked(b)
	s.commandTextLocked(b)
}

func (s *Session) commandTextLocked(b []byte) {
	c := s.cur
	if c == nil || !c.started || c.done {
		return // prompt, echo of the submit line, job notices
	}
	c.lastOutput = time.Now()
	c.out.write(c.cook.cook(b))
}

func (s *Session) onMarkLocked(m mark) {
	if !s.markIsOurs(m) {
		s.onTextLocked(m.raw)
		return
	}
	if m.code == "D" {
		s.onEndLocked(m)
		return
	}
	s.mirrorMarkLocked(m)
	switch m.code {
	case "A":
		if !s.ready {
			s.ready = true
			s.broadcastLocked()
		}
		if s.promptPending {
			// The prompt that follows the last D: the shell now reads.
			s.promptPending = false
			s.broadcastLocked()
		} else if c := s.cur; c != nil && !c.done && c.proc == nil {
			// A new prompt and no D: the shell never ran the line (Ctrl-C
			// at the prompt flushed it, or the machinery was removed).
			s.finishLocked(c, 130, "exited")
		}
	case "P":
		k, v, _ := strings.Cut(strings.Join(m.args[:len(m.args)-1], ";"), "=")
		if k == "Cwd" {
			s.cwd = decodeMarkValue(v)
		}
	case "C":
		if c := s.cur; c != nil && !c.started && m.args[1] == strconv.Itoa(c.seq) {
			c.started = true
		}
	}
}

// onEndLocked handles D;<exit>;<nonce>;<tag>. The classic integration
// prints D only after one of our lines, tagged with its seq. The typed one
// prints it with every prompt (PS1), tagged "f" and whether our hook ran:
// there the first D after a line is submitted ends that command, since the
// shell prints no prompt between reading a line and finishing it. Only a
// D that ends a command is mirrored: VS Code would take the others for
// commands of their own.
func (s *Session) onEndLocked(m mark) {
	c := s.cur
	if tag := m.args[2]; strings.HasPrefix(tag, "f") {
		s.typed = true
		s.hookLost = tag != "f10"
		if c == nil || c.done || c.proc != nil {
			return
		}
	} else if c == nil || tag != strconv.Itoa(c.seq) {
		return
	}
	s.mirrorMarkLocked(m)
	ec, err := strconv.Atoi(m.args[0])
	if err != nil {
		ec = -1
	}
	s.finishLocked(c, ec, "exited")
	s.promptPending = true
}

// markIsOurs checks the nonce (and shape); anything else, including a
// command printing a look-alike, is plain output.
func (s *Session) markIsOurs(m mark) bool {
	switch m.code {
	case "A":
		return len(m.args) == 1 && m.args[0] == s.nonce
	case "C":
		return len(m.args) == 2 && m.args[0] == s.nonce
	case "D":
		return len(m.args) == 3 && m.args[1] == s.nonce
	case "P":
		return len(m.args) >= 2 && m.args[len(m.args)-1] == s.nonce
	}
	return false
}

func (s *Session) onExit(p *ptyProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == ModeFallback {
		c := s.cur
		if c == nil || c.proc != p {
			return
		}
		if b, err := os.ReadFile(filepath.Join(s.runDir, "cwd")); err == nil {
			if d := strings.TrimRight(string(b), "\n"); d != "" {
				s.cwd = d
			}
		}
		s.finishLocked(c, p.status, "exited")
		return
	}
	if p != s.proc {
		return
	}
	s.status = p.status
	if c := s.cur; c != nil && !c.done {
		reason := "shell_exited"
		if s.closed {
			reason = "closed"
		}
		s.finishLocked(c, p.status, reason)
	}
	s.setStateLocked(StateDead, nil, "shell exited")
	s.log.Info("shell exited", "status", p.status)
}

func (s *Session) finishLocked(c *command, exitCode int, reason string) {
	c.out.write(c.cook.flush())
	c.done = true
	c.exitCode = exitCode
	if c.reason == "" {
		c.reason = reason
	}
	c.end = time.Now()
	c.cwd = s.cwd
	if c.file != "" {
		os.Remove(c.file)
	}
	if s.cur == c {
		s.cur = nil
	}
	if s.state == StateRunning {
		s.setStateLocked(StateIdle, c, c.reason)
	} else {
		s.broadcastLocked()
	}
}

// ---- events ----

func (s *Session) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Session) setStateLocked(st State, c *command, reason string) {
	s.flushMirrorLocked()
	s.state = st
	ev := &StateEvent{State: st, Name: s.name, Mode: s.mode, Cwd: s.cwd, Reason: reason}
	if c != nil {
		ev.Seq, ev.Command, ev.AltScreen = c.seq, c.text, c.cook.altSeen
		if c.done {
			ec := c.exitCode
			ev.ExitCode = &ec
		}
	}
	if st == StateDead {
		ec := s.status
		ev.ExitCode = &ec
	}
	for _, sub := range s.subs {
		sub.push(Event{TerminalID: s.id, State: ev})
	}
	s.broadcastLocked()
}

// Subscribe delivers this terminal's raw output and state changes to fn,
// in order, on a goroutine of its own; fn may block without stalling the
// terminal (a subscriber that falls more than Options.SubscriberBuffer bytes
// behind loses output, reported as OutputEvent.Lost). Delivery starts with
// the next byte read. The returned func cancels the subscription.
func (s *Session) Subscribe(fn func(Event)) (cancel func()) {
	sub := newSubscriber(fn, s.opts.SubscriberBuffer)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sub.close()
		return func() {}
	}
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		for i, x := range s.subs {
			if x == sub {
				s.subs = append(s.subs[:i:i], s.subs[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		sub.cancel()
	}
}

// ---- commands ----

// Run submits command and waits as o allows. Multi-line text, heredocs and
// syntax errors behave as in a script: the shell sources the text from a
// private file, so it never waits at a continuation prompt. cd and exported
// variables persist to later commands.
//
// The returned Result holds the output (only what this terminal has not
// returned before for this command) and, once finished, the exit code. If
// ctx ends first, Run returns the partial Result with Reason "canceled"
// together with ctx.Err(); the command keeps running.
func (s *Session) Run(ctx context.Context, command string, o RunOptions) (*Result, error) {
	c, err := s.submit(command, o.Cwd, false)
	if err != nil {
		return nil, err
	}
	return s.await(ctx, c, o)
}

func (s *Session) submit(text, cwd string, reserved bool) (*command, error) {
	// Prompt hooks (a user's PROMPT_COMMAND/precmd) run jobs after the
	// end marker, so the foreground group can briefly differ from the
	// shell; only a group that stays is someone else's program.
	deadline := time.Now().Add(fgSettleTimeout)
	for {
		s.mu.Lock()
		if s.promptPending && time.Now().Before(deadline) {
			// D came, its prompt not yet: a line sent now could be taken
			// for one the prompt flushed. They share a write; this wait is
			// for the rare read that splits them.
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
			case <-time.After(time.Until(deadline)):
			}
			continue
		}
		err := s.checkSubmitLocked(reserved)
		if err == nil {
			break
		}
		s.mu.Unlock()
		var busy *BusyError
		if !errors.As(err, &busy) || busy.foreground == 0 || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.seq++
	c := &command{
		seq:   s.seq,
		text:  text,
		start: time.Now(),
		out:   newOutputBuffer(s.opts.HeadBytes, s.opts.TailBytes),
		cook:  newCooker(),
		file:  filepath.Join(s.runDir, "c"+strconv.Itoa(s.seq)),
	}
	runText := text
	if cwd != "" {
		runText = cdPrefixed(cwd, text)
	}
	var line string
	if s.mode != ModeFallback {
		lo := lineOpts{shell: s.shellKind, seq: c.seq, text: runText, editing: s.opts.LineEditing, typed: s.typed, prevEval: s.lastEval}
		switch {
		case s.typed && !s.hookLost && cwd == "" && !s.testEvalOnly && typable(text, s.lastEval):
			line = text + "\r"
			c.file, c.typed = "", true
		case len(submitLine(lo)) <= maxInlineLine:
			line = submitLine(lo)
			c.file = ""
		default:
			lo.text, lo.file = "", c.file
			line = submitLine(lo)
		}
		s.lastEval = !c.typed
	}
	if c.file != "" {
		body := runText
		if !strings.HasSuffix(body, "\n") && s.mode == ModeFallback {
			body += "\n"
		}
		if err := os.WriteFile(c.file, []byte(body), 0o600); err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("write command file in %s: %w", s.runDir, err)
		}
	}
	s.cur = c
	s.reserved = false
	s.cmds = append(s.cmds, c)
	if len(s.cmds) > keptCommands {
		s.cmds = s.cmds[1:]
	}
	s.setStateLocked(StateRunning, c, "")
	if s.mode != ModeFallback {
		// Everything the shell prints from now on is the command's: the
		// line itself is not echoed. The mirror shows it as typed, before
		// any of its output can arrive.
		// A line editor echoes the line itself; then C marks the start.
		c.started = !s.opts.LineEditing
		s.mirrorCommandLocked(c)
		s.flushMirrorLocked()
	}
	mode, shell := s.mode, s.proc
	s.mu.Unlock()

	if mode == ModeFallback {
		if err := s.startFallback(c); err != nil {
			return nil, err
		}
		return c, nil
	}
	// The tty would echo the line as it takes it; the person watching the
	// mirror sees the command text instead (mirror.go). ECHO comes back on
	// with the next input sent to the terminal (SendInput): turning it on
	// any earlier could race the line discipline still taking this line.
	if err := shell.setEcho(false); err != nil {
		s.log.Debug("could not turn terminal echo off", "error", err)
	}
	if err := s.writeInput(shell, []byte(line)); err != nil {
		// The shell may still read the line later; leave the command
		// running so it can be polled or interrupted.
		return nil, err
	}
	return c, nil
}

func (s *Session) checkSubmitLocked(reserved bool) error {
	switch {
	case s.closed || s.state == StateDead:
		return &DeadError{TerminalID: s.id, ExitCode: s.status}
	case s.cur != nil:
		return &BusyError{TerminalID: s.id, Seq: s.cur.seq, Command: s.cur.text}
	case s.state == StateStarting:
		return &BusyError{TerminalID: s.id}
	case s.reserved && !reserved:
		return &BusyError{TerminalID: s.id}
	}
	if s.mode != ModeFallback && s.proc != nil {
		// Idle by the markers, but someone else (a program started
		// outside our protocol) may own the terminal.
		if fg := s.proc.fgPgid(); fg > 0 && fg != s.proc.pid {
			return &BusyError{TerminalID: s.id, Command: fmt.Sprintf("(foreground process group %d)", fg), foreground: fg}
		}
	}
	return nil
}

func (s *Session) startFallback(c *command) error {
	s.mu.Lock()
	cwd, cols, rows := s.cwd, s.cols, s.rows
	s.mu.Unlock()
	script := fmt.Sprintf(fallbackScript,
		shellQuote(filepath.Join(s.runDir, "env")), shellQuote(cwd),
		shellQuote(c.file), shellQuote(filepath.Join(s.runDir, "cwd")))
	bash, err := exec.LookPath("bash")
	if err != nil {
		bash = s.shellPath
	}
	env := s.baseEnv()
	// Hold mu across the start: a quick command's output (or exit) reaches
	// onData/onExit, which take mu, only once c.proc says whose it is;
	// before, it was dropped as an abandoned process's.
	s.mu.Lock()
	c.started = true
	p, err := startProc([]string{bash, "--noprofile", "--norc", "-c", script}, env, cwd, cols, rows,
		s.onData, s.onExit)
	if err == nil {
		c.proc = p
		s.proc = p
		s.mu.Unlock()
		return nil
	}
	s.finishLocked(c, 127, "exited")
	s.mu.Unlock()
	return &StartError{Shell: bash, Err: err}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Output returns the output of command seq (0 = the current or last one)
// that was not returned before, waiting as o allows (o.Timeout interrupts
// the command). For a finished command it returns at once.
func (s *Session) Output(ctx context.Context, seq int, o RunOptions) (*Result, error) {
	s.mu.Lock()
	c := s.findLocked(seq)
	s.mu.Unlock()
	if c == nil {
		return nil, &UnknownCommandError{TerminalID: s.id, Seq: seq}
	}
	return s.await(ctx, c, o)
}

func (s *Session) findLocked(seq int) *command {
	if seq == 0 {
		if s.cur != nil {
			return s.cur
		}
		if len(s.cmds) > 0 {
			return s.cmds[len(s.cmds)-1]
		}
		return nil
	}
	for _, c := range s.cmds {
		if c.seq == seq {
			return c
		}
	}
	return nil
}

func (s *Session) await(ctx context.Context, c *command, o RunOptions) (*Result, error) {
	callStart := time.Now()
	var hardC, yieldC <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		hardC = t.C
	}
	if o.Yield > 0 {
		t := time.NewTimer(o.Yield)
		defer t.Stop()
		yieldC = t.C
	}
	for {
		s.mu.Lock()
		if c.done {
			r := s.resultLocked(c, "")
			s.mu.Unlock()
			return r, nil
		}
		ch := s.changed
		last := c.lastOutput
		if last.Before(callStart) {
			last = callStart
		}
		var noOutC <-chan time.Time
		var noOut *time.Timer
		if o.NoOutputTimeout > 0 {
			d := time.Until(last.Add(o.NoOutputTimeout))
			if d <= 0 {
				r := s.resultLocked(c, "no_output_timeout")
				s.mu.Unlock()
				return r, nil
			}
			noOut = time.NewTimer(d)
			noOutC = noOut.C
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-noOutC:
		case <-yieldC:
			return s.softResult(c, "yield"), nil
		case <-hardC:
			if noOut != nil {
				noOut.Stop()
			}
			return s.interrupt(ctx, c, "timeout", false)
		case <-ctx.Done():
			return s.softResult(c, "canceled"), ctx.Err()
		}
		if noOut != nil {
			noOut.Stop()
		}
	}
}

func (s *Session) softResult(c *command, reason string) *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resultLocked(c, reason)
}

// resultLocked takes the unread output. reason is for a command still
// running; a finished one reports its own.
func (s *Session) resultLocked(c *command, reason string) *Result {
	text, dropped := c.out.readNew(c.done)
	r := &Result{
		TerminalID:     s.id,
		Seq:            c.seq,
		Command:        c.text,
		Output:         text,
		TruncatedBytes: dropped,
		TotalBytes:     c.out.total,
		Running:        !c.done,
		Reason:         reason,
		Cwd:            s.cwd,
		AltScreen:      c.cook.altSeen,
		Mode:           s.mode,
		Duration:       time.Since(c.start),
	}
	if c.done {
		ec := c.exitCode
		r.ExitCode = &ec
		r.Reason = c.reason
		r.Escalation = c.escalation
		r.Cwd = c.cwd
		r.Duration = c.end.Sub(c.start)
		c.delivered = true
	}
	return r
}

// Interrupt stops the running command: Ctrl-C, then SIGTERM and SIGKILL to
// the terminal's foreground process group, each after a grace period; if
// the command still has not finished, the whole terminal is killed. It
// returns the command's final Result (Reason "interrupted").
func (s *Session) Interrupt(ctx context.Context) (*Result, error) {
	c, err := s.running()
	if err != nil {
		return nil, err
	}
	return s.interrupt(ctx, c, "interrupted", false)
}

// Kill stops the running command with SIGKILL to its process group right
// away (no Ctrl-C); the terminal stays usable. A command running inside the
// shell itself (a builtin loop) falls back to the Interrupt escalation.
func (s *Session) Kill(ctx context.Context) (*Result, error) {
	c, err := s.running()
	if err != nil {
		return nil, err
	}
	return s.interrupt(ctx, c, "killed", true)
}

func (s *Session) running() (*command, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		if s.state == StateDead {
			return nil, &DeadError{TerminalID: s.id, ExitCode: s.status}
		}
		return nil, &NotRunningError{TerminalID: s.id}
	}
	return s.cur, nil
}

type escalationStep struct {
	name  string
	apply func(c *command)
	grace time.Duration
}

func (s *Session) interrupt(ctx context.Context, c *command, reason string, hard bool) (*Result, error) {
	steps := []escalationStep{
		{"ctrl_c", func(c *command) { s.typeInput(s.procFor(c), []byte{0x03}) }, s.opts.InterruptGrace},
		{"sigterm", func(c *command) { s.signalCommand(c, unix.SIGTERM) }, s.opts.TermGrace},
		{"sigkill", func(c *command) { s.signalCommand(c, unix.SIGKILL) }, killGrace},
	}
	s.mu.Lock()
	if !c.done {
		c.reason = reason
	}
	s.mu.Unlock()
	// A command the shell has not picked up yet (a slow prompt hook, a
	// loaded machine) is still a line in the tty's input queue: Ctrl-C now
	// would flush it, the command would never start nor end, and the
	// escalation would end in killing the terminal. Let it start first.
	if err := s.waitStarted(ctx, c, s.opts.InterruptGrace); err != nil {
		return s.softResult(c, reason), err
	}
	// A kill needs a process group other than the shell's; a command that
	// has just started may not have forked its program yet.
	if hard && s.awaitSignalTarget(c, fgForkTimeout) > 0 {
		steps = steps[2:]
	}
	for _, st := range steps {
		s.mu.Lock()
		if c.done {
			s.mu.Unlock()
			break
		}
		c.escalation = st.name
		s.mu.Unlock()
		s.log.Info("interrupting command", "seq", c.seq, "step", st.name)
		st.apply(c)
		if done, err := s.waitDone(ctx, c, st.grace); done || err != nil {
			r := s.softResult(c, reason)
			return r, err
		}
	}
	s.mu.Lock()
	done := c.done
	if !done {
		c.escalation = "session_killed"
	}
	s.mu.Unlock()
	if !done {
		s.log.Warn("command survived SIGKILL of its process group; killing the terminal", "seq", c.seq)
		s.kill(c)
	}
	return s.softResult(c, reason), nil
}

// kill ends the session (or, in fallback mode, the command's process)
// because a command could not be stopped any other way.
func (s *Session) kill(c *command) {
	p := s.procFor(c)
	if p != nil {
		p.terminate(closeGrace)
	}
}

func (s *Session) procFor(c *command) *ptyProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.proc != nil {
		return c.proc
	}
	return s.proc
}

// signalTarget is the process group to signal for c: the terminal's
// foreground group unless that is the interactive shell itself, which must
// survive; in fallback mode the command's own `bash -c` group.
func (s *Session) signalTarget(c *command) int {
	p := s.procFor(c)
	if p == nil {
		return 0
	}
	if c.proc != nil {
		return p.pid
	}
	fg := p.fgPgid()
	if fg <= 0 || fg == p.pid {
		return 0
	}
	return fg
}

func (s *Session) signalCommand(c *command, sig unix.Signal) {
	if pg := s.signalTarget(c); pg > 0 {
		_ = unix.Kill(-pg, sig)
	}
}

// awaitSignalTarget polls up to d for a process group to signal for c.
func (s *Session) awaitSignalTarget(c *command, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		pg := s.signalTarget(c)
		s.mu.Lock()
		done := c.done
		s.mu.Unlock()
		if pg > 0 || done || time.Now().After(deadline) {
			return pg
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStarted waits up to d for the shell to start c (or for c to end).
func (s *Session) waitStarted(ctx context.Context, c *command, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		started, ch := c.started || c.done, s.changed
		s.mu.Unlock()
		if started {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitDone waits up to d for c to finish.
func (s *Session) waitDone(ctx context.Context, c *command, d time.Duration) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		done, ch := c.done, s.changed
		s.mu.Unlock()
		if done {
			return true, nil
		}
		select {
		case <-ch:
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// SendInput writes raw bytes (keystrokes, "\x03", "\x04", a line ending in
// "\r") to the terminal, i.e. to whatever program reads it.
func (s *Session) SendInput(ctx context.Context, data []byte) error {
	s.mu.Lock()
	if s.closed || s.state == StateDead {
		s.mu.Unlock()
		return &DeadError{TerminalID: s.id, ExitCode: s.status}
	}
	p := s.proc
	if s.mode == ModeFallback {
		p = nil
		if s.cur != nil {
			p = s.cur.proc
		}
	}
	s.mu.Unlock()
	if p == nil {
		return &NotRunningError{TerminalID: s.id}
	}
	return s.typeInput(p, data)
}

// typeInput writes keystrokes with the terminal's echo on, as a person's
// typing is (the echo is off only while the shell takes a submitted line).
func (s *Session) typeInput(p *ptyProc, data []byte) error {
	if p != nil && s.Mode() != ModeFallback {
		if err := p.setEcho(true); err != nil {
			s.log.Debug("could not turn terminal echo on", "error", err)
		}
	}
	return s.writeInput(p, data)
}

func (s *Session) writeInput(p *ptyProc, data []byte) error {
	if p == nil {
		return &NotRunningError{TerminalID: s.id}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := p.write(data, inputTimeout)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &InputBlockedError{TerminalID: s.id, Written: n}
	}
	if err != nil {
		return &DeadError{TerminalID: s.id, ExitCode: s.status}
	}
	return nil
}

// Resize changes the terminal's window size.
func (s *Session) Resize(cols, rows int) error {
	if cols <= 0 || cols > 65535 || rows <= 0 || rows > 65535 {
		return &InvalidOptionError{Option: "size", Value: fmt.Sprintf("%dx%d", cols, rows), Reason: "cols and rows must be between 1 and 65535"}
	}
	s.mu.Lock()
	s.cols, s.rows = cols, rows
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		return p.setSize(cols, rows)
	}
	return nil
}

// ID returns the terminal id given in Options.
func (s *Session) ID() string { return s.id }

// State returns the current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Mode returns the integration mode in use.
func (s *Session) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// Cwd returns the shell's working directory as last reported.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// PID returns the shell's process id (in fallback mode, the running
// command's, or 0).
func (s *Session) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// Info returns a snapshot for listings.
func (s *Session) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.infoLocked()
}

func (s *Session) infoLocked() Info {
	in := Info{ID: s.id, Name: s.name, State: s.state, Mode: s.mode, Shell: s.shellKind,
		Cwd: s.cwd, Seq: s.seq, Cols: s.cols, Rows: s.rows}
	if s.proc != nil && s.state != StateDead {
		in.PID = s.proc.pid
	}
	if c := s.cur; c != nil {
		in.Command = c.text
		in.AltScreen = c.cook.altScreen
	}
	return in
}

// Close kills the shell and every process in its session (SIGHUP, then
// SIGKILL), ends a running command with Reason "closed", stops
// subscriptions after delivering the final state, and removes the run
// directory. It is safe to call more than once.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.closeWG.Wait()
		return nil
	}
	s.closed = true
	s.closeWG.Add(1)
	defer s.closeWG.Done()
	p := s.proc
	if s.cur != nil && s.cur.proc != nil {
		p = s.cur.proc
	}
	s.mu.Unlock()
	if p != nil {
		p.terminate(closeGrace)
	}
	s.mu.Lock()
	if c := s.cur; c != nil && !c.done {
		c.reason = "closed"
		s.finishLocked(c, 129, "closed")
	}
	if s.state != StateDead {
		s.setStateLocked(StateDead, nil, "closed")
	}
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	for _, sub := range subs {
		sub.close()
	}
	if err := os.RemoveAll(s.runDir); err != nil {
		return fmt.Errorf("remove terminal run directory %s: %w", s.runDir, err)
	}
	return nil
}

// tryReserve reserves an idle terminal; with cwd set, only one in cwd.
func (s *Session) tryReserve(cwd string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The foreground-group check is left to submit, which can wait for
	// prompt hooks to finish.
	if s.state != StateIdle || s.cur != nil || s.reserved || s.closed || (cwd != "" && s.cwd != cwd) {
		return false
	}
	s.reserved = true
	return true
}

func (s *Session) releaseReserve() {
	s.mu.Lock()
	s.reserved = false
	s.mu.Unlock()
}

func (s *Session) deadAndDelivered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateDead {
		return false
	}
	for _, c := range s.cmds {
		if c.out.read < c.out.total || !c.delivered {
			return false
		}
	}
	return true
}
