package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/shellint"
)

// Shell is an agent's persistent shell with the control flow OpenHands'
// bash sessions share, V0's bash.py and V1's TerminalSession alike: one
// command at a time; a soft timeout (no new output) or a hard one that
// returns while the command keeps running; an empty command that polls the
// running command; input and control keys sent to it; and a new command
// refused while another runs. What an outcome is called in words is the
// caller's business: package ohactions' run action (V0) and package ohtools'
// terminal tool (V1) word them differently.
//
// A Shell runs one request at a time; the caller serializes them.
type Shell struct {
	opts Options

	mu   sync.Mutex
	sess *shellint.Terminal
	dir  string // last reported cwd

	seq    int    // the command the status refers to
	status status // prev_status
	shown  bool   // prev_output != '': an observation of the running command was returned
	carry  string // output read but not yet returned (a cancelled wait)
}

// Options configure a Shell.
type Options struct {
	// Dir is the starting directory of the first shell.
	Dir string
	// Start starts a terminal in dir; it is called for the first command
	// and again after the shell exited.
	Start func(dir string) (*shellint.Terminal, error)
	// Closed, when closed, makes a shell that finished starting too late
	// close at once.
	Closed <-chan struct{}
}

// New returns a Shell; it starts no process until the first command.
func New(o Options) *Shell { return &Shell{opts: o} }

// status is bash.py's prev_status.
type status int

const (
	statusNone status = iota
	statusCompleted
	statusNoChange
	statusHardTimeout
)

// Request is one command, poll or input.
type Request struct {
	// Command is the stripped command text: "" polls the running command,
	// "C-c" and the like are control keys.
	Command string
	// IsInput sends Keys to the running command instead of running Command.
	IsInput bool
	// Keys are the bytes an IsInput request types ("text\r", or the bytes of
	// a key); the dialects name keys differently.
	Keys []byte
	// NoOutputTimeout is the soft timeout: return, with the command still
	// running, once it printed nothing new for this long. 0 waits.
	NoOutputTimeout time.Duration
	// Timeout is the hard timeout: return after this long, the command
	// still running. 0 waits.
	Timeout time.Duration
}

// Outcome says what became of a request.
type Outcome int

const (
	// Completed: the command (or a control key at the prompt) finished.
	Completed Outcome = iota
	// NoChange: the soft timeout passed; the command still runs.
	NoChange
	// HardTimeout: the hard timeout passed; the command still runs.
	HardTimeout
	// NotExecuted: a new command came while another ran; it was not run.
	NotExecuted
	// NoPreviousLogs: an empty command, with nothing running to poll.
	NoPreviousLogs
	// NoPreviousInput: input, with nothing running to receive it.
	NoPreviousInput
	// MultipleCommands: the text holds more than one top-level command.
	MultipleCommands
)

// Result is the outcome of a request and the output that goes with it.
type Result struct {
	Outcome Outcome
	// Command is the command the observation reports: the request's, or ""
	// when an input or poll found the command already finished.
	Command string
	// Output is what the command printed since the last result, as a
	// terminal pane shows it, with the echo of typed input removed and
	// surrounding whitespace stripped.
	Output string
	// Continued is set when an earlier result already showed part of this
	// command's output (OpenHands then prefixes "[Below is the output of the
	// previous command.]").
	Continued bool
	// ExitCode and Cwd are set for Completed.
	ExitCode int
	Cwd      string
	// Commands are the parts of a MultipleCommands text.
	Commands []string
}

// Cwd is the shell's working directory as last reported ("" before the
// first command).
func (b *Shell) Cwd() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dir
}

// Terminal returns the live terminal, or nil.
func (b *Shell) Terminal() *shellint.Terminal {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sess
}

// Close ends the shell and whatever it runs.
func (b *Shell) Close() {
	b.mu.Lock()
	s := b.sess
	b.sess = nil
	b.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// Reset closes the shell; the next command starts a fresh one in the
// original directory, with nothing carried over.
func (b *Shell) Reset() {
	b.Close()
	b.mu.Lock()
	b.dir = ""
	b.mu.Unlock()
	b.status, b.shown, b.carry, b.seq = statusNone, false, "", 0
}

// Interrupt sends Ctrl-C to the running command, if any, and forgets it:
// the next request starts afresh, as after OpenHands' conversation
// interrupt.
func (b *Shell) Interrupt(ctx context.Context) {
	if s := b.Terminal(); s != nil && s.State() == shellint.StateRunning {
		// Whether Ctrl-C sufficed or the escalation ended in a kill,
		// nothing of the command is left to report.
		_, _ = s.Interrupt(ctx)
	}
	b.status, b.shown, b.carry = statusCompleted, false, ""
}

// session returns the live terminal, starting one if needed (the first
// command, or after the shell exited).
func (b *Shell) session() (*shellint.Terminal, error) {
	b.mu.Lock()
	s := b.sess
	dir := b.dir
	b.mu.Unlock()
	if s != nil && s.State() != shellint.StateDead {
		return s, nil
	}
	if s != nil {
		s.Close()
	}
	if dir == "" {
		dir = b.opts.Dir
	}
	s, err := b.opts.Start(dir)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	select {
	case <-b.opts.Closed:
		b.mu.Unlock()
		s.Close()
		return nil, &ClosedError{}
	default:
	}
	b.sess = s
	b.dir = s.Cwd()
	b.mu.Unlock()
	b.status, b.shown, b.carry = statusNone, false, ""
	return s, nil
}

func (b *Shell) running() bool {
	return b.status == statusNoChange || b.status == statusHardTimeout
}

// Execute runs one request. It returns an error for a shell that cannot
// start or take input (the caller words it as the tool's error) and for
// ctx ending while a command runs; then the command keeps running, its
// output so far is kept for the next result, and an empty command polls it.
func (b *Shell) Execute(ctx context.Context, req Request) (*Result, error) {
	cmd := req.Command
	if !b.running() {
		if cmd == "" {
			return &Result{Outcome: NoPreviousLogs}, nil
		}
		if req.IsInput {
			return &Result{Outcome: NoPreviousInput, Command: cmd}, nil
		}
	}
	if parts := SplitCommands(cmd); len(parts) > 1 {
		return &Result{Outcome: MultipleCommands, Command: cmd, Commands: parts}, nil
	}
	if b.running() {
		s, err := b.session()
		if err != nil {
			return nil, err
		}
		info := s.Info()
		if info.State == shellint.StateRunning && info.Seq == b.seq {
			if cmd != "" && !req.IsInput {
				return b.notExecuted(ctx, s, cmd)
			}
			if cmd != "" {
				if err := s.SendInput(ctx, req.Keys); err != nil {
					return nil, err
				}
			}
			res, err := s.Output(ctx, b.seq, b.waitOptions(req))
			return b.observe(ctx, req, res, err)
		}
		if cmd == "" || req.IsInput {
			// The command finished since the last result: report its end.
			// (OpenHands would type is_input text at the prompt.)
			res, err := s.Output(ctx, b.seq, shellint.RunOptions{})
			return b.observe(ctx, Request{}, res, err)
		}
	}
	if IsSpecialKey(cmd) {
		// A control key with nothing running goes to the prompt.
		return b.keyAtPrompt(cmd), nil
	}
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	res, err := s.Run(ctx, cmd, b.waitOptions(req))
	if res != nil {
		b.seq = res.Seq
	}
	b.shown, b.carry = false, ""
	return b.observe(ctx, req, res, err)
}

func (b *Shell) waitOptions(req Request) shellint.RunOptions {
	// OpenHands' hard timeout does not stop the command: it yields.
	return shellint.RunOptions{NoOutputTimeout: req.NoOutputTimeout, Yield: req.Timeout}
}

// notExecuted answers a new command sent while one still runs.
func (b *Shell) notExecuted(ctx context.Context, s *shellint.Terminal, cmd string) (*Result, error) {
	res, err := s.Output(ctx, b.seq, shellint.RunOptions{Yield: time.Nanosecond})
	if err != nil && res == nil {
		return nil, err
	}
	r := &Result{Outcome: NotExecuted, Command: cmd, Output: commandOutput(b.take(res), cmd), Continued: b.shown}
	b.shown = true
	return r, nil
}

// take returns the carried output plus what res adds, as the pane shows it.
func (b *Shell) take(res *shellint.Result) string {
	text := b.carry
	b.carry = ""
	if res != nil {
		text += res.Output
	}
	return paneText(text)
}

// observe turns a shellint result into the outcome bash.py reports for it.
func (b *Shell) observe(ctx context.Context, req Request, res *shellint.Result, err error) (*Result, error) {
	if err != nil {
		if res != nil && ctx.Err() != nil {
			// Cancelled: the command keeps running; keep its output for
			// the next result and let an empty command poll it.
			b.carry += res.Output
			if res.Running && !b.running() {
				b.status = statusNoChange
			}
			return nil, err
		}
		if res == nil {
			return nil, err
		}
	}
	cwd := res.Cwd
	if cwd != "" {
		b.mu.Lock()
		b.dir = cwd
		b.mu.Unlock()
	}
	out := commandOutput(b.take(res), req.Command)
	if !res.Running {
		code := -1
		if res.ExitCode != nil {
			code = *res.ExitCode
		}
		b.status, b.shown = statusCompleted, false
		return &Result{Outcome: Completed, Command: req.Command, Output: out, ExitCode: code, Cwd: cwd}, nil
	}
	r := &Result{Command: req.Command, Output: out, Continued: b.shown}
	if res.Reason == "yield" && req.Timeout > 0 {
		r.Outcome, b.status = HardTimeout, statusHardTimeout
	} else {
		r.Outcome, b.status = NoChange, statusNoChange
	}
	b.shown = true
	return r, nil
}

// keyAtPrompt answers a control key sent when no command runs: the prompt
// echoes ^C and sets $? to 130 for C-c; other keys are not sent (C-d would
// end the shell).
func (b *Shell) keyAtPrompt(cmd string) *Result {
	code, out := 0, ""
	if strings.ToUpper(string([]rune(cmd)[2])) == "C" {
		code, out = 130, "^C"
	}
	cwd := b.Cwd()
	if cwd == "" {
		cwd = b.opts.Dir
	}
	b.status, b.shown = statusCompleted, false
	return &Result{Outcome: Completed, Command: cmd, Output: out, ExitCode: code, Cwd: cwd}
}

// IsSpecialKey is bash.py's _is_special_key: "C-" and one more character.
func IsSpecialKey(cmd string) bool {
	return strings.HasPrefix(cmd, "C-") && len([]rune(cmd)) == 3
}

// ControlByte is the byte a terminal sends for Ctrl plus key.
func ControlByte(key rune) []byte {
	switch {
	case key >= 'a' && key <= 'z':
		return []byte{byte(key - 'a' + 1)}
	case key >= '@' && key <= '_': // A-Z, @ [ \ ] ^ _
		return []byte{byte(key - '@')}
	case key == '?':
		return []byte{0x7f}
	case key == ' ' || key == '2':
		return []byte{0}
	}
	return []byte(string(key))
}

// ClosedError reports a command sent after the shell's owner closed it.
type ClosedError struct{}

func (*ClosedError) Error() string { return "the agent's shell is closed" }

// Kind returns "runtime_closed".
func (*ClosedError) Kind() string { return "runtime_closed" }
