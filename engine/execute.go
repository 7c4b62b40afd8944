package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/shellint"
)

// Execute runs one request, after the request before it and after any
// interrupt in progress. It returns an error for a shell that cannot start
// or take input (the caller words it as the tool's error) and for ctx
// ending first. When ctx ends while a command runs, the caller has given
// up on it: the command is stopped (SIGINT, then SIGTERM and SIGKILL to its
// process group, each after a grace period, and what is left of the group
// killed) before the next request runs, so no request is refused because
// of a command nobody waits for.
func (s *Shell) Execute(ctx context.Context, req Request) (*Record, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	res, err := s.execute(ctx, req)
	if err != nil && ctx.Err() != nil {
		s.stopAbandoned()
	}
	if res != nil {
		if res.Outcome != Completed {
			res.ExitCode = -1
		}
		res.Output, res.Truncated = req.Truncation.Cut(res.Output)
	}
	return res, err
}

// acquire takes the turn, then waits for an interrupt in progress.
func (s *Shell) acquire(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		s.mu.Lock()
		ch := s.interrupting
		s.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			s.release()
			return ctx.Err()
		}
	}
}

func (s *Shell) release() { <-s.turn }

// stopAbandoned stops the command of a request whose caller gave up,
// holding the turn, within StopTimeout.
func (s *Shell) stopAbandoned() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StopTimeout)
	defer cancel()
	s.stop(ctx)
}

// Interrupt stops the running command, if any (Ctrl-C, then signals), and
// forgets it: the next request starts afresh, as after OpenHands'
// conversation interrupt. It does not wait for the request in progress,
// which then answers the command's end; a request that arrives meanwhile
// waits for the interrupt to end.
func (s *Shell) Interrupt(ctx context.Context) { s.stop(ctx) }

// stop interrupts the running command once: a stop already under way (the
// other of Interrupt and an abandoned request's) is waited for, not
// repeated, so no second Ctrl-C reaches a shell that is past the command.
func (s *Shell) stop(ctx context.Context) {
	s.mu.Lock()
	if ch := s.interrupting; ch != nil {
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return
	}
	done := make(chan struct{})
	s.interrupting = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.interrupting = nil
		s.mu.Unlock()
		close(done)
	}()
	s.stopCommand(ctx)
}

// stopCommand interrupts the terminal's running command and marks the
// shell idle. Whether Ctrl-C sufficed or the escalation ended in killing
// the terminal, nothing of the command is left to report.
func (s *Shell) stopCommand(ctx context.Context) {
	if term := s.Terminal(); term != nil && term.State() == shellint.StateRunning {
		_, _ = term.Interrupt(ctx)
	}
	s.mu.Lock()
	s.status, s.shown = statusCompleted, false
	s.mu.Unlock()
}

// snapshot is the state a request starts from.
type snapshot struct {
	running bool
	seq     int
	shown   bool
}

func (s *Shell) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshot{running: s.status == statusNoChange || s.status == statusHardTimeout, seq: s.seq, shown: s.shown}
}

// execute is one request, holding the turn.
func (s *Shell) execute(ctx context.Context, req Request) (*Record, error) {
	cmd := req.Command
	st := s.snapshot()
	if !st.running {
		if cmd == "" {
			return &Record{Outcome: NoPreviousLogs}, nil
		}
		if req.IsInput {
			return &Record{Outcome: NoPreviousInput, Command: cmd}, nil
		}
	}
	if parts := SplitCommands(cmd); len(parts) > 1 {
		return &Record{Outcome: MultipleCommands, Command: cmd, Commands: parts}, nil
	}
	if term := s.Terminal(); st.running && term != nil {
		// The terminal the command runs in, even dead: its end is still
		// there to report.
		info := term.Info()
		if info.State == shellint.StateRunning && info.Seq == st.seq {
			if cmd != "" && !req.IsInput {
				return s.notExecuted(ctx, term, st, cmd)
			}
			if cmd != "" {
				if err := term.SendInput(ctx, req.Keys); err != nil {
					return nil, err
				}
			}
			res, err := term.Output(ctx, st.seq, waitOptions(req))
			return s.observe(ctx, req, res, err)
		}
		if cmd == "" || req.IsInput {
			// The command finished since the last result: report its end.
			// (OpenHands would type is_input text at the prompt.)
			res, err := term.Output(ctx, st.seq, shellint.RunOptions{})
			return s.observe(ctx, Request{}, res, err)
		}
	}
	if IsSpecialKey(cmd) {
		// A control key with nothing running goes to the prompt.
		return s.keyAtPrompt(cmd), nil
	}
	return s.run(ctx, req)
}

// run runs a new command. A shell found dead is replaced first; one that
// dies before it reads the command (shellint answers *DeadError: nothing
// of it ran) is replaced and the command runs in the new one. Either way
// the result says the shell was restarted.
func (s *Shell) run(ctx context.Context, req Request) (*Record, error) {
	term, restarted, err := s.liveTerminal()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up while the shell started: nothing to stop.
		return nil, err
	}
	res, err := term.Run(ctx, req.Command, waitOptions(req))
	var dead *shellint.DeadError
	if errors.As(err, &dead) && !restarted {
		if term, restarted, err = s.liveTerminal(); err != nil {
			return nil, err
		}
		res, err = term.Run(ctx, req.Command, waitOptions(req))
	}
	s.mu.Lock()
	if res != nil {
		s.seq = res.Seq
	}
	s.shown = false
	s.mu.Unlock()
	r, err := s.observe(ctx, req, res, err)
	if r != nil {
		r.ShellRestarted = restarted
	}
	return r, err
}

func waitOptions(req Request) shellint.RunOptions {
	// OpenHands' hard timeout does not stop the command: it yields.
	return shellint.RunOptions{NoOutputTimeout: req.NoOutputTimeout, Yield: req.Timeout}
}

// notExecuted answers a new command sent while one still runs.
func (s *Shell) notExecuted(ctx context.Context, term *shellint.Terminal, st snapshot, cmd string) (*Record, error) {
	res, err := term.Output(ctx, st.seq, shellint.RunOptions{Yield: time.Nanosecond})
	if err != nil && res == nil {
		return nil, err
	}
	r := &Record{Outcome: NotExecuted, TerminalID: res.TerminalID, Command: cmd, Output: commandOutput(paneText(res.Output), cmd), Continued: st.shown}
	s.mu.Lock()
	s.shown = true
	s.mu.Unlock()
	return r, nil
}

// observe turns a shellint result into the outcome bash.py reports for it.
// A wait that ctx ended answers its error: Execute stops the command.
func (s *Shell) observe(ctx context.Context, req Request, res *shellint.Result, err error) (*Record, error) {
	if err != nil && (res == nil || ctx.Err() != nil) {
		return nil, err
	}
	if res.Reason == "not_run" {
		// A poll found that the shell died before it read the command
		// (Run itself answers this as an error): nothing of it ran.
		s.mu.Lock()
		s.status, s.shown = statusNone, false
		s.mu.Unlock()
		return nil, &shellint.DeadError{TerminalID: res.TerminalID, ExitCode: *res.ExitCode}
	}
	out := commandOutput(paneText(res.Output), req.Command)
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.Cwd != "" {
		s.dir = res.Cwd
	}
	if !res.Running {
		code := -1
		if res.ExitCode != nil {
			code = *res.ExitCode
		}
		s.status, s.shown = statusCompleted, false
		return &Record{Outcome: Completed, TerminalID: res.TerminalID, Command: req.Command, Output: out, ExitCode: code, Cwd: res.Cwd}, nil
	}
	r := &Record{TerminalID: res.TerminalID, Command: req.Command, Output: out, Continued: s.shown}
	if res.Reason == "yield" && req.Timeout > 0 {
		r.Outcome, s.status = HardTimeout, statusHardTimeout
	} else {
		r.Outcome, s.status = NoChange, statusNoChange
	}
	s.shown = true
	return r, nil
}

// keyAtPrompt answers a control key sent when no command runs: the prompt
// echoes ^C and sets $? to 130 for C-c; other keys are not sent (C-d would
// end the shell).
func (s *Shell) keyAtPrompt(cmd string) *Record {
	code, out := 0, ""
	if strings.ToUpper(string([]rune(cmd)[2])) == "C" {
		code, out = 130, "^C"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cwd := s.dir
	if cwd == "" {
		cwd = s.opts.Dir
	}
	s.status, s.shown = statusCompleted, false
	id := ""
	if s.term != nil {
		id = s.term.ID()
	}
	return &Record{Outcome: Completed, TerminalID: id, Command: cmd, Output: out, ExitCode: code, Cwd: cwd}
}
