package session

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/shellint"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// The terminals the person and agents open by id: faces reach them only
// through these methods, never through package shellint. The vocabulary is
// shellint's, named here so a face can render it without importing the
// package that runs the shells.
type (
	// TerminalInfo describes a terminal.
	TerminalInfo = shellint.Info
	// TerminalOpen says how to open a terminal: cwd (inside the roots),
	// shell, name, environment and size.
	TerminalOpen = shellint.OpenOptions
	// TerminalState is starting, idle, running or dead.
	TerminalState = shellint.State
	// TerminalEvent is a terminal's raw output, a command's text, or a
	// change of its state.
	TerminalEvent = shellint.Event
	// TerminalOutput is raw output at an offset of a terminal's stream.
	TerminalOutput = shellint.OutputEvent
	// TerminalText is a command's text, parsed out of the stream once.
	TerminalText = shellint.TextEvent
	// TerminalStateEvent is a terminal's change of state.
	TerminalStateEvent = shellint.StateEvent
	// CommandResult is one view of a command: the output not returned
	// before, whether it still runs, its exit code.
	CommandResult = shellint.Result
)

// TerminalDead is the state of a terminal whose shell has exited;
// TerminalIdle that of one whose command ended.
const (
	TerminalDead = shellint.StateDead
	TerminalIdle = shellint.StateIdle
)

// Run is one command for a terminal of the pool.
type Run struct {
	// TerminalID picks the terminal; "" takes an idle one or opens one.
	TerminalID string
	Command    string
	// Cwd, when set, is where the command runs (inside the roots).
	Cwd string
	// Timeout ends the command (Ctrl-C, then harder); NoOutputTimeout
	// returns while it keeps running once it printed nothing for so long.
	Timeout, NoOutputTimeout time.Duration
}

// unreadOutput keeps the output a cancelled wait had already taken from
// a command, so the next result for that command still carries it.
type unreadOutput struct {
	mu    sync.Mutex
	byCmd map[commandKey]*CommandResult
}

type commandKey struct {
	terminalID string
	seq        int
}

// OpenTerminal opens a terminal in the pool.
func (s *Session) OpenTerminal(ctx context.Context, o TerminalOpen) (TerminalInfo, error) {
	cwd, err := s.dir(o.Cwd)
	if err != nil {
		return TerminalInfo{}, err
	}
	o.Cwd = cwd
	t, err := s.pool.Open(ctx, o)
	if err != nil {
		return TerminalInfo{}, err
	}
	return t.Info(), nil
}

// RunCommand runs a command in a terminal of the pool and waits for its
// end, a timeout, or ctx. When ctx ends first the command goes on, and the
// output this call took comes with the next CommandOutput.
func (s *Session) RunCommand(ctx context.Context, r Run) (*CommandResult, error) {
	cwd, err := s.dir(r.Cwd)
	if err != nil {
		return nil, err
	}
	res, err := s.pool.Run(ctx, shellint.RunRequest{
		TerminalID: r.TerminalID,
		Command:    r.Command,
		Open:       shellint.OpenOptions{Cwd: cwd},
		Options:    shellint.RunOptions{Timeout: r.Timeout, NoOutputTimeout: r.NoOutputTimeout},
	})
	return s.unread.settle(res, err)
}

// CommandOutput returns a command's output since the last result (seq 0:
// the current or last command), waiting up to wait while it runs.
func (s *Session) CommandOutput(ctx context.Context, terminalID string, seq int, wait time.Duration) (*CommandResult, error) {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return nil, err
	}
	// Yield returns after wait even while output continues; a finished
	// command returns at once. With no wait the poll answers immediately.
	res, err := t.Output(ctx, seq, shellint.RunOptions{Yield: max(wait, time.Nanosecond)})
	return s.unread.settle(res, err)
}

// SendInput types data into a terminal.
func (s *Session) SendInput(ctx context.Context, terminalID string, data []byte) (TerminalInfo, error) {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return TerminalInfo{}, err
	}
	if err := t.SendInput(ctx, data); err != nil {
		return TerminalInfo{}, err
	}
	return t.Info(), nil
}

// InterruptTerminal stops a terminal's running command (Ctrl-C, then
// harder) and answers its result.
func (s *Session) InterruptTerminal(ctx context.Context, terminalID string) (*CommandResult, error) {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return nil, err
	}
	return s.unread.settle(t.Interrupt(ctx))
}

// KillTerminal kills a terminal's running command at once.
func (s *Session) KillTerminal(ctx context.Context, terminalID string) (*CommandResult, error) {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return nil, err
	}
	return s.unread.settle(t.Kill(ctx))
}

// ResizeTerminal sets a terminal's size.
func (s *Session) ResizeTerminal(terminalID string, cols, rows int) error {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return err
	}
	return t.Resize(cols, rows)
}

// CloseTerminal ends a terminal and whatever it runs.
func (s *Session) CloseTerminal(terminalID string) error {
	if err := s.pool.CloseTerminal(terminalID); err != nil {
		return err
	}
	s.unread.forget(terminalID)
	return nil
}

// Terminals describes the pool's terminals.
func (s *Session) Terminals() []TerminalInfo { return s.pool.List() }

// dir resolves a cwd inside the roots (relative to the first root) and
// checks that it is a directory; "" is the terminal's default.
func (s *Session) dir(cwd string) (string, error) {
	if cwd == "" {
		return "", nil
	}
	p, err := s.roots.Resolve(cwd)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", &workspace.NotFoundError{Path: p, Hint: "create it first or pass an existing directory as cwd"}
	}
	if !fi.IsDir() {
		return "", &workspace.NotDirectoryError{Path: p}
	}
	return p, nil
}

// settle passes a result on, prepending output an earlier cancelled call
// left for the same command; a failed call with a result (cancelled while
// waiting) keeps that result's output for the next one.
func (u *unreadOutput) settle(r *CommandResult, err error) (*CommandResult, error) {
	if err != nil {
		if r != nil {
			u.keep(r)
		}
		return nil, err
	}
	u.mu.Lock()
	k := commandKey{r.TerminalID, r.Seq}
	if prev := u.byCmd[k]; prev != nil {
		r.Output = prev.Output + r.Output
		r.TruncatedBytes += prev.TruncatedBytes
		delete(u.byCmd, k)
	}
	u.mu.Unlock()
	return r, nil
}

// keep stores the output a cancelled call took from a command.
func (u *unreadOutput) keep(r *CommandResult) {
	if r.Output == "" && r.TruncatedBytes == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byCmd == nil {
		u.byCmd = map[commandKey]*CommandResult{}
	}
	k := commandKey{r.TerminalID, r.Seq}
	if prev := u.byCmd[k]; prev != nil {
		r.Output = prev.Output + r.Output
		r.TruncatedBytes += prev.TruncatedBytes
	}
	u.byCmd[k] = r
	// A terminal remembers its last few commands only; so do we.
	for old := range u.byCmd {
		if old.terminalID == r.TerminalID && old.seq < r.Seq-16 {
			delete(u.byCmd, old)
		}
	}
}

func (u *unreadOutput) forget(terminalID string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k := range u.byCmd {
		if k.terminalID == terminalID {
			delete(u.byCmd, k)
		}
	}
}
