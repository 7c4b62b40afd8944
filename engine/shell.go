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
// A Shell runs one request at a time, in arrival order; a request whose
// caller gives up (its ctx ends) while its command runs stops that command
// before the next request runs. The package doc has the states.
type Shell struct {
	opts Options
	// turn is held by the request running and by the stop of an abandoned
	// command, so a request never finds the command a cancelled one left.
	turn chan struct{}

	mu   sync.Mutex // guards everything below
	term *shellint.Terminal
	dir  string // last reported cwd
	// interrupting is closed when the interrupt in progress ends (nil
	// while none runs): a request waits for it before it looks at the
	// terminal.
	interrupting chan struct{}

	seq    int    // the command the status refers to
	status status // prev_status
	shown  bool   // prev_output != '': an observation of the running command was returned
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
	// StopTimeout bounds the stop of a command whose caller gave up
	// (DefaultStopTimeout).
	StopTimeout time.Duration
}

// New returns a Shell; it starts no process until the first command.
func New(o Options) *Shell {
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	return &Shell{opts: o, turn: make(chan struct{}, 1)}
}

// DefaultStopTimeout bounds stopping a command whose caller gave up:
// shellint's escalation (SIGINT, 2 s, SIGINT, 0.5 s, SIGTERM to the
// foreground process group, 2 s, SIGKILL, 2 s, then the whole terminal)
// fits in it.
const DefaultStopTimeout = 10 * time.Second

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
	// Truncation cuts an Output too long for the agent; the zero value
	// keeps it whole.
	Truncation Truncation
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

// Record is the one account of a request and its command that every face
// renders: V1's terminal tool words it for the agent (MCP's text), V0's
// run action as an observation, and a conversation's command card shows
// its Output as the agent received it, once the call is over.
type Record struct {
	Outcome Outcome
	// TerminalID is the terminal the command ran in ("" when none ran).
	TerminalID string
	// Command is the command the record reports: the request's, or ""
	// when an input or poll found the command already finished.
	Command string
	// Output is what the command printed since the last record, as a
	// terminal pane shows it, with the echo of typed input removed and
	// surrounding whitespace stripped, cut by the request's Truncation.
	Output string
	// Truncated says the Output was cut.
	Truncated bool
	// Continued is set when an earlier record already showed part of this
	// command's output (OpenHands then prefixes "[Below is the output of the
	// previous command.]").
	Continued bool
	// ExitCode is the command's, for Completed; -1 otherwise. Cwd is set
	// for Completed.
	ExitCode int
	Cwd      string
	// Commands are the parts of a MultipleCommands text.
	Commands []string
	// ShellRestarted is set when the shell had exited (a command ended
	// it, or it read end-of-input at its prompt) and this request ran in
	// a new one, started in the last working directory: variables,
	// functions and jobs of the old one are gone. A command the dying
	// shell never read is among those run again in the new shell.
	ShellRestarted bool
}

// Running says the record's command had not ended when it was made: a
// timeout returned, or a new command was refused because of it.
func (r *Record) Running() bool {
	return r.Outcome == NoChange || r.Outcome == HardTimeout || r.Outcome == NotExecuted
}

// Cwd is the shell's working directory as last reported ("" before the
// first command).
func (s *Shell) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Terminal returns the live terminal, or nil.
func (s *Shell) Terminal() *shellint.Terminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term
}

// Close ends the shell and whatever it runs.
func (s *Shell) Close() {
	s.mu.Lock()
	term := s.term
	s.term = nil
	s.mu.Unlock()
	if term != nil {
		term.Close()
	}
}

// Reset closes the shell; the next command starts a fresh one in the
// original directory, with nothing carried over. It waits for the request
// running, if any.
func (s *Shell) Reset(ctx context.Context) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	s.Close()
	s.mu.Lock()
	s.dir = ""
	s.status, s.shown, s.seq = statusNone, false, 0
	s.mu.Unlock()
	return nil
}

// liveTerminal returns the live terminal, starting one if needed (the first
// command, or after the shell exited: then restarted is set).
func (s *Shell) liveTerminal() (term *shellint.Terminal, restarted bool, err error) {
	s.mu.Lock()
	term = s.term
	dir := s.dir
	s.mu.Unlock()
	if term != nil && term.State() != shellint.StateDead {
		return term, false, nil
	}
	if term != nil {
		term.Close()
		restarted = true
	}
	if dir == "" {
		dir = s.opts.Dir
	}
	term, err = s.opts.Start(dir)
	if err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	select {
	case <-s.opts.Closed:
		s.mu.Unlock()
		term.Close()
		return nil, false, &ClosedError{}
	default:
	}
	s.term = term
	s.dir = term.Cwd()
	s.status, s.shown = statusNone, false
	s.mu.Unlock()
	return term, restarted, nil
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
