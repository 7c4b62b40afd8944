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
func (t *Terminal) Run(ctx context.Context, command string, o RunOptions) (*Result, error) {
	c, err := t.submit(command, o.Cwd, false)
	if err != nil {
		return nil, err
	}
	r, err := t.await(ctx, c, o)
	if err == nil && r.Reason == "not_run" {
		return nil, &DeadError{TerminalID: t.id, ExitCode: *r.ExitCode}
	}
	return r, err
}

func (t *Terminal) submit(text, cwd string, reserved bool) (*command, error) {
	// Prompt hooks (a user's PROMPT_COMMAND/precmd) run jobs after the
	// end marker, so the foreground group can briefly differ from the
	// shell; only a group that stays is someone else's program.
	deadline := time.Now().Add(fgSettleTimeout)
	for {
		t.mu.Lock()
		if t.promptPending && time.Now().Before(deadline) {
			// D came, its prompt not yet: a line sent now could be taken
			// for one the prompt flushed. They share a write; this wait is
			// for the rare read that splits them.
			ch := t.changed
			t.mu.Unlock()
			select {
			case <-ch:
			case <-time.After(time.Until(deadline)):
			}
			continue
		}
		err := t.checkSubmitLocked(reserved)
		if err == nil {
			break
		}
		t.mu.Unlock()
		var busy *BusyError
		if !errors.As(err, &busy) || busy.foreground == 0 || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.seq++
	c := &command{
		seq:   t.seq,
		text:  text,
		start: time.Now(),
		out:   newOutputBuffer(t.opts.HeadBytes, t.opts.TailBytes),
		cook:  newCooker(),
		file:  filepath.Join(t.runDir, "c"+strconv.Itoa(t.seq)),
	}
	runText := text
	if cwd != "" {
		runText = cdPrefixed(cwd, text)
	}
	var line string
	if t.mode != ModeFallback {
		lo := lineOpts{shell: t.shellKind, seq: c.seq, text: runText, typed: t.typed, prevEval: t.lastEval}
		if t.typed && !t.hookLost && cwd == "" && !t.testEvalOnly && typable(text, t.lastEval) {
			line = text + "\r"
			c.file, c.typed = "", true
		} else if line = submitLine(lo); len(line) <= maxInlineLine {
			c.file = ""
		} else {
			lo.text, lo.file = "", c.file
			line = submitLine(lo)
		}
		t.lastEval = !c.typed
	}
	if c.file != "" {
		body := runText
		if !strings.HasSuffix(body, "\n") && t.mode == ModeFallback {
			body += "\n"
		}
		if err := os.WriteFile(c.file, []byte(body), 0o600); err != nil {
			t.mu.Unlock()
			return nil, fmt.Errorf("write command file in %s: %w", t.runDir, err)
		}
	}
	t.cur = c
	t.reserved = false
	t.cmds = append(t.cmds, c)
	if len(t.cmds) > keptCommands {
		t.cmds = t.cmds[1:]
	}
	t.setStateLocked(StateRunning, c, "")
	if t.mode != ModeFallback {
		// Everything the shell prints from now on is the command's: the
		// line itself is not echoed. The mirror shows it as typed, before
		// any of its output can arrive.
		// A line editor echoes the line itself; then C marks the start.
		c.started = !t.opts.LineEditing
		t.mirrorCommandLocked(c)
		t.flushMirrorLocked()
	}
	mode, shell := t.mode, t.proc
	t.mu.Unlock()

	if mode == ModeFallback {
		if err := t.startFallback(c); err != nil {
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
		t.log.Debug("could not prepare the terminal for a line", "error", err)
	}
	if err := t.writeLine(shell, c.seq, []byte(line)); err != nil {
		// A shell that exited has ended the command "not_run" by now
		// (writeLine waits for that); one that does not take input may
		// still read the line later: the command is left running so it
		// can be polled or interrupted.
		return nil, err
	}
	return c, nil
}

func (t *Terminal) checkSubmitLocked(reserved bool) error {
	switch {
	case t.closed || t.state == StateDead:
		return &DeadError{TerminalID: t.id, ExitCode: t.status}
	case t.cur != nil:
		return &BusyError{TerminalID: t.id, Seq: t.cur.seq, Command: t.cur.text}
	case t.state == StateStarting:
		return &BusyError{TerminalID: t.id}
	case t.reserved && !reserved:
		return &BusyError{TerminalID: t.id}
	}
	if t.mode != ModeFallback && t.proc != nil {
		// Idle by the markers, but someone else (a program started
		// outside our protocol) may own the terminal.
		if fg := t.proc.fgPgid(); fg > 0 && fg != t.proc.pid {
			return &BusyError{TerminalID: t.id, Command: fmt.Sprintf("(foreground process group %d)", fg), foreground: fg}
		}
	}
	return nil
}

func (t *Terminal) startFallback(c *command) error {
	t.mu.Lock()
	cwd, cols, rows := t.cwd, t.cols, t.rows
	t.mu.Unlock()
	script := fmt.Sprintf(fallbackScript,
		shellQuote(filepath.Join(t.runDir, "env")), shellQuote(cwd),
		shellQuote(c.file), shellQuote(filepath.Join(t.runDir, "cwd")))
	bash, err := exec.LookPath("bash")
	if err != nil {
		bash = t.shellPath
	}
	env := t.baseEnv()
	// Hold mu across the start: a quick command's output (or exit) reaches
	// onData/onExit, which take mu, only once c.proc says whose it is;
	// before, it was dropped as an abandoned process's.
	t.mu.Lock()
	c.started, c.began = true, true
	p, err := startProc([]string{bash, "--noprofile", "--norc", "-c", script}, env, nil, cwd, cols, rows,
		t.onData, t.onExit)
	if err == nil {
		c.proc = p
		t.proc = p
		t.mu.Unlock()
		return nil
	}
	t.finishLocked(c, 127, "exited")
	t.mu.Unlock()
	return &StartError{Shell: bash, Err: err}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Output returns the output of command seq (0 = the current or last one)
// that was not returned before, waiting as o allows (o.Timeout interrupts
// the command). For a finished command it returns at once.
func (t *Terminal) Output(ctx context.Context, seq int, o RunOptions) (*Result, error) {
	t.mu.Lock()
	c := t.findLocked(seq)
	t.mu.Unlock()
	if c == nil {
		return nil, &UnknownCommandError{TerminalID: t.id, Seq: seq}
	}
	return t.await(ctx, c, o)
}

func (t *Terminal) findLocked(seq int) *command {
	if seq == 0 {
		if t.cur != nil {
			return t.cur
		}
		if len(t.cmds) > 0 {
			return t.cmds[len(t.cmds)-1]
		}
		return nil
	}
	for _, c := range t.cmds {
		if c.seq == seq {
			return c
		}
	}
	return nil
}

func (t *Terminal) await(ctx context.Context, c *command, o RunOptions) (*Result, error) {
	callStart := time.Now()
	var hardC, yieldC <-chan time.Time
	if o.Timeout > 0 {
		hard := time.NewTimer(o.Timeout)
		defer hard.Stop()
		hardC = hard.C
	}
	if o.Yield > 0 {
		yield := time.NewTimer(o.Yield)
		defer yield.Stop()
		yieldC = yield.C
	}
	for {
		t.mu.Lock()
		if c.done {
			r := t.resultLocked(c, "")
			t.mu.Unlock()
			return r, nil
		}
		ch := t.changed
		last := c.lastOutput
		if last.Before(callStart) {
			last = callStart
		}
		var noOutC <-chan time.Time
		var noOut *time.Timer
		if o.NoOutputTimeout > 0 {
			d := time.Until(last.Add(o.NoOutputTimeout))
			if d <= 0 {
				r := t.resultLocked(c, "no_output_timeout")
				t.mu.Unlock()
				return r, nil
			}
			noOut = time.NewTimer(d)
			noOutC = noOut.C
		}
		t.mu.Unlock()
		select {
		case <-ch:
		case <-noOutC:
		case <-yieldC:
			return t.softResult(c, "yield"), nil
		case <-hardC:
			if noOut != nil {
				noOut.Stop()
			}
			return t.interrupt(ctx, c, "timeout", false)
		case <-ctx.Done():
			return t.softResult(c, "canceled"), ctx.Err()
		}
		if noOut != nil {
			noOut.Stop()
		}
	}
}

func (t *Terminal) softResult(c *command, reason string) *Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.resultLocked(c, reason)
}

// resultLocked takes the unread output. reason is for a command still
// running; a finished one reports its own.
func (t *Terminal) resultLocked(c *command, reason string) *Result {
	text, dropped := c.out.readNew(c.done)
	r := &Result{
		TerminalID:     t.id,
		Seq:            c.seq,
		Command:        c.text,
		Output:         text,
		TruncatedBytes: dropped,
		TotalBytes:     c.out.total,
		Running:        !c.done,
		Reason:         reason,
		Cwd:            t.cwd,
		AltScreen:      c.cook.altSeen,
		Mode:           t.mode,
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
