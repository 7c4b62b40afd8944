package shellint

import (
	"context"
	"syscall"
	"time"
)

// Interrupt stops the running command: SIGINT (what Ctrl-C sends),
// SIGINT again, SIGTERM and SIGKILL to the terminal's foreground process
// group, each after a grace period (a command that keeps the shell itself
// in the foreground, a builtin loop, gets the Ctrl-C key after the first,
// once the shell has read its line); if the command still has not
// finished, the whole terminal is killed. Once it has ended, what is left
// of its process groups is killed too. It returns the command's final
// Result (Reason "interrupted").
func (t *Terminal) Interrupt(ctx context.Context) (*Result, error) {
	c, err := t.running()
	if err != nil {
		return nil, err
	}
	return t.interrupt(ctx, c, "interrupted", false)
}

// Kill stops the running command with SIGKILL to its process group right
// away (no Ctrl-C); the terminal stays usable. A command running inside the
// shell itself (a builtin loop) falls back to the Interrupt escalation.
func (t *Terminal) Kill(ctx context.Context) (*Result, error) {
	c, err := t.running()
	if err != nil {
		return nil, err
	}
	return t.interrupt(ctx, c, "killed", true)
}

func (t *Terminal) running() (*command, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		if t.state == StateDead {
			return nil, &DeadError{TerminalID: t.id, ExitCode: t.status}
		}
		return nil, &NotRunningError{TerminalID: t.id}
	}
	return t.cur, nil
}

type escalationStep struct {
	name  string
	apply func(c *command)
	grace time.Duration
}

func (t *Terminal) interrupt(ctx context.Context, c *command, reason string, hard bool) (*Result, error) {
	// Signals go to the process group of the program in the terminal's
	// foreground, never to the shell's: the command may end as the stop
	// begins, and a Ctrl-C that finds the shell back at its prompt makes
	// bash print one more prompt, which the next command takes for its end
	// (exit 130), and zsh drop the next line. The shell itself gets only
	// the second step's Ctrl-C key, when it has run the command's own code
	// for the whole grace. seen gathers the groups found, whose leftovers
	// go once c has ended (endGroups); interrupted, those the first step
	// has sent SIGINT.
	seen, interrupted := map[int]bool{}, map[int]bool{}
	target := func() int {
		pg := t.signalTarget(c)
		if pg > 0 {
			seen[pg] = true
		}
		return pg
	}
	signal := func(sig syscall.Signal) func(*command) {
		return func(*command) {
			if pg := target(); pg > 0 {
				_ = signalGroup(pg, sig)
			}
		}
	}
	// interruptNew sends SIGINT, what Ctrl-C sends, to a program that has
	// taken the terminal since the last look. While the shell itself holds
	// the terminal (a builtin, or between two programs of a list) nothing
	// goes: the next program of the list gets it, and dying of it makes
	// the shell abandon the rest of the list or loop. A program slow to
	// handle its SIGINT keeps its group and gets the whole grace.
	interruptNew := func() {
		if pg := target(); pg > 0 && !interrupted[pg] {
			interrupted[pg] = true
			_ = signalGroup(pg, syscall.SIGINT)
		}
	}
	steps := []escalationStep{
		{"ctrl_c", func(*command) { interruptNew() }, t.opts.InterruptGrace},
		// Ctrl-C again: bash loses a SIGINT that reaches a child between
		// its fork and its exec; this one finds the program. A command
		// that has kept the shell itself in the foreground for the whole
		// grace runs in it (a builtin loop, `read`): it gets the key, as a
		// person would type it, but only once the shell holds the whole
		// line (its C mark). Before, the key would flush a line still in
		// the tty's input queue, and bash, which reads the line and then
		// parses it a character at a time, would drop what it had parsed,
		// print a prompt (a D of 130, taken for the command's end) and go
		// on with the rest: `echo hi; sleep 30` runs as `cho hi; sleep 30`
		// while the next command waits behind it. zsh, there, prints no
		// prompt at all. A shell that has not read the line by then is
		// not typed into: the escalation ends in killing the terminal.
		{"ctrl_c", func(c *command) {
			if pg := target(); pg > 0 {
				_ = signalGroup(pg, syscall.SIGINT)
			} else if t.began(c) {
				t.typeInput(t.procFor(c), []byte{0x03})
			}
		}, secondInterruptGrace},
		{"sigterm", signal(syscall.SIGTERM), t.opts.TermGrace},
		{"sigkill", signal(syscall.SIGKILL), killGrace},
	}
	t.mu.Lock()
	if !c.done {
		c.reason = reason
	}
	t.mu.Unlock()
	// A kill needs a process group other than the shell's; a command that
	// has just started may not have forked its program yet.
	if hard && t.awaitSignalTarget(c, fgForkTimeout, target) > 0 {
		steps = steps[3:]
	}
	for i, st := range steps {
		t.mu.Lock()
		if c.done {
			t.mu.Unlock()
			break
		}
		c.escalation = st.name
		t.mu.Unlock()
		t.log.Info("interrupting command", "seq", c.seq, "step", st.name)
		var look func()
		if i == 0 && !hard {
			look = interruptNew
		}
		st.apply(c)
		if done, err := t.waitDone(ctx, c, st.grace, look); done || err != nil {
			if done {
				t.endGroups(ctx, c, seen)
			}
			return t.softResult(c, reason), err
		}
	}
	t.mu.Lock()
	done := c.done
	if !done {
		c.escalation = "session_killed"
	}
	t.mu.Unlock()
	if done {
		t.endGroups(ctx, c, seen)
	} else {
		t.log.Warn("command survived SIGKILL of its process group; killing the terminal", "seq", c.seq)
		t.kill(c)
	}
	return t.softResult(c, reason), nil
}

// endGroups ends what is left of the process groups a stop found in the
// foreground once their command has ended: a program the command started
// in the background of a shell without job control (`sh -c 'server &
// ...'`) ignores Ctrl-C and stays in the command's group. It returns when
// they are gone, within killGrace and ctx.
func (t *Terminal) endGroups(ctx context.Context, c *command, seen map[int]bool) {
	p := t.procFor(c)
	if p == nil || len(seen) == 0 {
		return
	}
	groups := make([]int, 0, len(seen))
	for pg := range seen {
		groups = append(groups, pg)
	}
	deadline := time.Now().Add(killGrace)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if left := killGroups(p.pid, groups, deadline); left > 0 {
		t.log.Warn("processes of an interrupted command outlived SIGKILL", "seq", c.seq, "left", left)
	}
}

// kill ends the session (or, in fallback mode, the command's process)
// because a command could not be stopped any other way.
func (t *Terminal) kill(c *command) {
	p := t.procFor(c)
	if p != nil {
		p.terminate(closeGrace)
	}
}

func (t *Terminal) procFor(c *command) *ptyProc {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.proc != nil {
		return c.proc
	}
	return t.proc
}

// signalTarget is the process group to signal for c: the terminal's
// foreground group unless that is the interactive shell itself, which must
// survive; in fallback mode the command's own `bash -c` group.
func (t *Terminal) signalTarget(c *command) int {
	p := t.procFor(c)
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

// awaitSignalTarget polls up to d for a process group to signal for c,
// found by target.
func (t *Terminal) awaitSignalTarget(c *command, d time.Duration, target func() int) int {
	deadline := time.Now().Add(d)
	for {
		pg := target()
		t.mu.Lock()
		done := c.done
		t.mu.Unlock()
		if pg > 0 || done || time.Now().After(deadline) {
			return pg
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// began reports whether the shell holds c's whole line.
func (t *Terminal) began(c *command) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return c.began
}

// waitDone waits up to d for c to finish, calling look (if not nil) every
// fgPoll meanwhile.
func (t *Terminal) waitDone(ctx context.Context, c *command, d time.Duration, look func()) (bool, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var poll <-chan time.Time
	if look != nil {
		tick := time.NewTicker(fgPoll)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		t.mu.Lock()
		done, ch := c.done, t.changed
		t.mu.Unlock()
		if done {
			return true, nil
		}
		select {
		case <-ch:
		case <-poll:
			look()
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// fgPoll spaces the first step's looks at the foreground process group.
const fgPoll = 20 * time.Millisecond
