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
func (b *Shell) Execute(ctx context.Context, req Request) (*Record, error) {
	if err := b.acquire(ctx); err != nil {
		return nil, err
	}
	defer b.release()
	res, err := b.execute(ctx, req)
	if err != nil && ctx.Err() != nil {
		b.stopAbandoned()
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
func (b *Shell) acquire(ctx context.Context) error {
	select {
	case b.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		b.mu.Lock()
		ch := b.interrupting
		b.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			b.release()
			return ctx.Err()
		}
	}
}

func (b *Shell) release() { <-b.turn }

// stopAbandoned stops the command of a request whose caller gave up,
// holding the turn, within StopTimeout.
func (b *Shell) stopAbandoned() {
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.StopTimeout)
	defer cancel()
	b.stop(ctx)
}

// Interrupt stops the running command, if any (Ctrl-C, then signals), and
// forgets it: the next request starts afresh, as after OpenHands'
// conversation interrupt. It does not wait for the request in progress,
// which then answers the command's end; a request that arrives meanwhile
// waits for the interrupt to end.
func (b *Shell) Interrupt(ctx context.Context) { b.stop(ctx) }

// stop interrupts the running command once: a stop already under way (the
// other of Interrupt and an abandoned request's) is waited for, not
// repeated, so no second Ctrl-C reaches a shell that is past the command.
func (b *Shell) stop(ctx context.Context) {
	b.mu.Lock()
	if ch := b.interrupting; ch != nil {
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return
	}
	done := make(chan struct{})
	b.interrupting = done
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.interrupting = nil
		b.mu.Unlock()
		close(done)
	}()
	b.stopCommand(ctx)
}

// stopCommand interrupts the terminal's running command and marks the
// shell idle. Whether Ctrl-C sufficed or the escalation ended in killing
// the terminal, nothing of the command is left to report.
func (b *Shell) stopCommand(ctx context.Context) {
	if s := b.Terminal(); s != nil && s.State() == shellint.StateRunning {
		_, _ = s.Interrupt(ctx)
	}
	b.mu.Lock()
	b.status, b.shown = statusCompleted, false
	b.mu.Unlock()
}

// snapshot is the state a request starts from.
type snapshot struct {
	running bool
	seq     int
	shown   bool
}

func (b *Shell) snapshot() snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return snapshot{running: b.status == statusNoChange || b.status == statusHardTimeout, seq: b.seq, shown: b.shown}
}

// execute is one request, holding the turn.
func (b *Shell) execute(ctx context.Context, req Request) (*Record, error) {
	cmd := req.Command
	st := b.snapshot()
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
	if s := b.Terminal(); st.running && s != nil {
		// The terminal the command runs in, even dead: its end is still
		// there to report.
		info := s.Info()
		if info.State == shellint.StateRunning && info.Seq == st.seq {
			if cmd != "" && !req.IsInput {
				return b.notExecuted(ctx, s, st, cmd)
			}
			if cmd != "" {
				if err := s.SendInput(ctx, req.Keys); err != nil {
					return nil, err
				}
			}
			res, err := s.Output(ctx, st.seq, waitOptions(req))
			return b.observe(ctx, req, res, err)
		}
		if cmd == "" || req.IsInput {
			// The command finished since the last result: report its end.
			// (OpenHands would type is_input text at the prompt.)
			res, err := s.Output(ctx, st.seq, shellint.RunOptions{})
			return b.observe(ctx, Request{}, res, err)
		}
	}
	if IsSpecialKey(cmd) {
		// A control key with nothing running goes to the prompt.
		return b.keyAtPrompt(cmd), nil
	}
	return b.run(ctx, req)
}

// run runs a new command. A shell found dead is replaced first; one that
// dies before it reads the command (shellint answers *DeadError: nothing
// of it ran) is replaced and the command runs in the new one. Either way
// the result says the shell was restarted.
func (b *Shell) run(ctx context.Context, req Request) (*Record, error) {
	s, restarted, err := b.session()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up while the shell started: nothing to stop.
		return nil, err
	}
	res, err := s.Run(ctx, req.Command, waitOptions(req))
	var dead *shellint.DeadError
	if errors.As(err, &dead) && !restarted {
		if s, restarted, err = b.session(); err != nil {
			return nil, err
		}
		res, err = s.Run(ctx, req.Command, waitOptions(req))
	}
	b.mu.Lock()
	if res != nil {
		b.seq = res.Seq
	}
	b.shown = false
	b.mu.Unlock()
	r, err := b.observe(ctx, req, res, err)
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
func (b *Shell) notExecuted(ctx context.Context, s *shellint.Terminal, st snapshot, cmd string) (*Record, error) {
	res, err := s.Output(ctx, st.seq, shellint.RunOptions{Yield: time.Nanosecond})
	if err != nil && res == nil {
		return nil, err
	}
	r := &Record{Outcome: NotExecuted, TerminalID: res.TerminalID, Command: cmd, Output: commandOutput(paneText(res.Output), cmd), Continued: st.shown}
	b.mu.Lock()
	b.shown = true
	b.mu.Unlock()
	return r, nil
}

// observe turns a shellint result into the outcome bash.py reports for it.
// A wait that ctx ended answers its error: Execute stops the command.
func (b *Shell) observe(ctx context.Context, req Request, res *shellint.Result, err error) (*Record, error) {
	if err != nil && (res == nil || ctx.Err() != nil) {
		return nil, err
	}
	if res.Reason == "not_run" {
		// A poll found that the shell died before it read the command
		// (Run itself answers this as an error): nothing of it ran.
		b.mu.Lock()
		b.status, b.shown = statusNone, false
		b.mu.Unlock()
		return nil, &shellint.DeadError{TerminalID: res.TerminalID, ExitCode: *res.ExitCode}
	}
	out := commandOutput(paneText(res.Output), req.Command)
	b.mu.Lock()
	defer b.mu.Unlock()
	if res.Cwd != "" {
		b.dir = res.Cwd
	}
	if !res.Running {
		code := -1
		if res.ExitCode != nil {
			code = *res.ExitCode
		}
		b.status, b.shown = statusCompleted, false
		return &Record{Outcome: Completed, TerminalID: res.TerminalID, Command: req.Command, Output: out, ExitCode: code, Cwd: res.Cwd}, nil
	}
	r := &Record{TerminalID: res.TerminalID, Command: req.Command, Output: out, Continued: b.shown}
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
func (b *Shell) keyAtPrompt(cmd string) *Record {
	code, out := 0, ""
	if strings.ToUpper(string([]rune(cmd)[2])) == "C" {
		code, out = 130, "^C"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cwd := b.dir
	if cwd == "" {
		cwd = b.opts.Dir
	}
	b.status, b.shown = statusCompleted, false
	id := ""
	if b.sess != nil {
		id = b.sess.ID()
	}
	return &Record{Outcome: Completed, TerminalID: id, Command: cmd, Output: out, ExitCode: code, Cwd: cwd}
}
