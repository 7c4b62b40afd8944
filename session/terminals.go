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
// through these methods, never through package shellint. The types are the
// session's own, converted from shellint's at this boundary, so a face
// renders them without importing the package that runs the shells, and a
// change in shellint shows here first.

// TerminalState is a terminal's state.
type TerminalState string

const (
	TerminalStarting TerminalState = "starting"
	TerminalIdle     TerminalState = "idle" // its command ended; ready for the next
	TerminalRunning  TerminalState = "running"
	TerminalDead     TerminalState = "dead" // its shell exited
)

// ShellMode says how much of a terminal's shell integration works:
// "integrated" (markers, the person's rc file loaded), "norc" (markers, rc
// skipped because it broke startup) or "fallback" (one `bash -c` per
// command; cwd and exported variables carry over, functions and aliases
// do not).
type ShellMode string

const (
	ShellIntegrated ShellMode = "integrated"
	ShellNoRC       ShellMode = "norc"
	ShellFallback   ShellMode = "fallback"
)

// TerminalInfo describes a terminal.
type TerminalInfo struct {
	ID, Name  string
	State     TerminalState
	Mode      ShellMode
	Shell     string
	PID       int
	Cwd       string
	Seq       int // the current or last command's sequence number
	Command   string
	AltScreen bool
	Cols      int
	Rows      int
}

// TerminalOpen says how to open a terminal: cwd (inside the roots), shell
// ("bash", "zsh", "auto" or a path to either), name, environment and size.
type TerminalOpen struct {
	Cwd, Shell, Name string
	Env              map[string]string
	Cols, Rows       int
}

// TerminalEvent is one entry of a terminal's live stream: exactly one of
// Output, Text and State is set, in the order they happened.
type TerminalEvent struct {
	TerminalID string
	Output     *TerminalOutput
	Text       *TerminalText
	State      *TerminalStateEvent
}

// TerminalOutput is raw output (escape sequences and integration markers
// included) at Offset of the terminal's stream. Lost > 0 means that many
// bytes right before Offset were dropped because the receiver fell behind;
// Data may then be empty.
type TerminalOutput struct {
	Offset int64
	Data   []byte
	Lost   int64
}

// TerminalText is a command's text, parsed out of the stream once: escape
// sequences stripped, "\r\n" folded to "\n". It follows the
// TerminalOutput that carried the same bytes.
type TerminalText struct {
	Seq  int // the command's sequence number
	Text string
	Lost int64
}

// TerminalStateEvent is a terminal's change of state; Seq and ExitCode
// are the command's that started or finished (ExitCode nil unless one
// finished).
type TerminalStateEvent struct {
	State     TerminalState
	Name      string // the terminal's name, to title a mirror early
	Mode      ShellMode
	Seq       int
	Command   string
	ExitCode  *int
	Cwd       string
	AltScreen bool
	Reason    string
}

// CommandResult is one view of a command: the output not returned before,
// whether it still runs, its exit code.
type CommandResult struct {
	TerminalID string
	Seq        int
	Command    string
	// Output is cooked text: escape sequences stripped, "\r\n" as "\n".
	Output string
	// TruncatedBytes were dropped from this Output by the per-command cap.
	TruncatedBytes int64
	// TotalBytes is the command's cooked output size so far.
	TotalBytes int64
	Running    bool
	// ExitCode is set once the command finished: its status, 128+signal
	// when it was killed, or the shell's status when the shell exited.
	ExitCode *int
	// Reason says why the call returned: "exited", "shell_exited",
	// "not_run", "timeout", "interrupted", "killed", "closed",
	// "no_output_timeout", "yield" or "canceled".
	Reason string
	// Escalation says what ended an interrupted command: "ctrl_c",
	// "sigterm", "sigkill" or "session_killed".
	Escalation string
	Cwd        string
	// AltScreen is set when the command switched to the alternate screen
	// (a full-screen program); its output is not meaningful text.
	AltScreen bool
	Mode      ShellMode
	Duration  time.Duration
}

func infoOf(in shellint.Info) TerminalInfo {
	return TerminalInfo{ID: in.ID, Name: in.Name, State: TerminalState(in.State), Mode: ShellMode(in.Mode),
		Shell: in.Shell, PID: in.PID, Cwd: in.Cwd, Seq: in.Seq, Command: in.Command, AltScreen: in.AltScreen,
		Cols: in.Cols, Rows: in.Rows}
}

func resultOf(r *shellint.Result) *CommandResult {
	if r == nil {
		return nil
	}
	return &CommandResult{TerminalID: r.TerminalID, Seq: r.Seq, Command: r.Command, Output: r.Output,
		TruncatedBytes: r.TruncatedBytes, TotalBytes: r.TotalBytes, Running: r.Running, ExitCode: r.ExitCode,
		Reason: r.Reason, Escalation: r.Escalation, Cwd: r.Cwd, AltScreen: r.AltScreen, Mode: ShellMode(r.Mode),
		Duration: r.Duration}
}

// eventOf converts a terminal event. Output and text, the bulk of the
// stream, share shellint's memory (their fields are the same); a state
// change, rare, is copied.
func eventOf(ev shellint.Event) TerminalEvent {
	out := TerminalEvent{TerminalID: ev.TerminalID,
		Output: (*TerminalOutput)(ev.Output), Text: (*TerminalText)(ev.Text)}
	if st := ev.State; st != nil {
		out.State = &TerminalStateEvent{State: TerminalState(st.State), Name: st.Name, Mode: ShellMode(st.Mode),
			Seq: st.Seq, Command: st.Command, ExitCode: st.ExitCode, Cwd: st.Cwd, AltScreen: st.AltScreen, Reason: st.Reason}
	}
	return out
}

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
	t, err := s.pool.Open(ctx, shellint.OpenOptions(o))
	if err != nil {
		return TerminalInfo{}, err
	}
	return infoOf(t.Info()), nil
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
	return s.unread.settle(resultOf(res), err)
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
	return s.unread.settle(resultOf(res), err)
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
	return infoOf(t.Info()), nil
}

// InterruptTerminal stops a terminal's running command (Ctrl-C, then
// harder) and answers its result.
func (s *Session) InterruptTerminal(ctx context.Context, terminalID string) (*CommandResult, error) {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return nil, err
	}
	res, err := t.Interrupt(ctx)
	return s.unread.settle(resultOf(res), err)
}

// KillTerminal kills a terminal's running command at once.
func (s *Session) KillTerminal(ctx context.Context, terminalID string) (*CommandResult, error) {
	t, err := s.pool.Get(terminalID)
	if err != nil {
		return nil, err
	}
	res, err := t.Kill(ctx)
	return s.unread.settle(resultOf(res), err)
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
func (s *Session) Terminals() []TerminalInfo {
	list := s.pool.List()
	if list == nil {
		return nil
	}
	out := make([]TerminalInfo, len(list))
	for i, in := range list {
		out[i] = infoOf(in)
	}
	return out
}

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
