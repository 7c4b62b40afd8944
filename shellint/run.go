package shellint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Run submits command and waits as o allows. It runs at the shell's top
// level, typed as it is or through eval (scripts.go), so every piece of
// state a person's shell keeps between commands persists to later ones.
// Multi-line text, heredocs and syntax errors behave as in a script: the
// shell never waits at a continuation prompt.
//
// The returned Result holds the output (only what this terminal has not
// returned before for this command) and, once finished, the exit code. If
// ctx ends first, Run returns the partial Result with Reason "canceled"
// together with ctx.Err(); the command keeps running.
//
// If the shell exits before it reads the command (a program left the
// terminal unable to read a line, the shell was killed), nothing of the
// command ran: Run returns a *DeadError, as for a terminal already dead.
func (s *Terminal) Run(ctx context.Context, command string, o RunOptions) (*Result, error) {
	c, err := s.submit(command, o.Cwd, false)
	if err != nil {
		return nil, err
	}
	r, err := s.await(ctx, c, o)
	if err == nil && r.Reason == "not_run" {
		return nil, &DeadError{TerminalID: s.id, ExitCode: *r.ExitCode}
	}
	return r, err
}

func (s *Terminal) submit(text, cwd string, reserved bool) (*command, error) {
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
		lo := lineOpts{shell: s.shellKind, seq: c.seq, text: runText, typed: s.typed, prevEval: s.lastEval}
		if s.typed && !s.hookLost && cwd == "" && !s.testEvalOnly && typable(text, s.lastEval) {
			line = text + "\r"
			c.file, c.typed = "", true
		} else if line = submitLine(lo); len(line) <= maxInlineLine {
			c.file = ""
		} else {
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
	// The line discipline the shell started with comes back if a program
	// changed it, and input nobody read goes (line_unix.go). The tty
	// would echo the line as it takes it; the person watching the mirror
	// sees the command text instead (mirror.go). ECHO comes back on with
	// the next input sent to the terminal (SendInput): turning it on any
	// earlier could race the line discipline still taking this line.
	if err := shell.prepareLine(); err != nil {
		s.log.Debug("could not prepare the terminal for a line", "error", err)
	}
	if err := s.writeLine(shell, c.seq, []byte(line)); err != nil {
		// A shell that exited has ended the command "not_run" by now
		// (writeLine waits for that); one that does not take input may
		// still read the line later: the command is left running so it
		// can be polled or interrupted.
		return nil, err
	}
	return c, nil
}

func (s *Terminal) checkSubmitLocked(reserved bool) error {
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

func (s *Terminal) startFallback(c *command) error {
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
	c.started, c.began = true, true
	p, err := startProc([]string{bash, "--noprofile", "--norc", "-c", script}, env, nil, cwd, cols, rows,
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
func (s *Terminal) Output(ctx context.Context, seq int, o RunOptions) (*Result, error) {
	s.mu.Lock()
	c := s.findLocked(seq)
	s.mu.Unlock()
	if c == nil {
		return nil, &UnknownCommandError{TerminalID: s.id, Seq: seq}
	}
	return s.await(ctx, c, o)
}

func (s *Terminal) findLocked(seq int) *command {
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

func (s *Terminal) await(ctx context.Context, c *command, o RunOptions) (*Result, error) {
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

func (s *Terminal) softResult(c *command, reason string) *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resultLocked(c, reason)
}

// resultLocked takes the unread output. reason is for a command still
// running; a finished one reports its own.
func (s *Terminal) resultLocked(c *command, reason string) *Result {
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
