package shellint

import (
	"context"
	"syscall"
	"time"
)

// Interrupt stops the running command: Ctrl-C, then SIGTERM and SIGKILL to
// the terminal's foreground process group, each after a grace period; if
// the command still has not finished, the whole terminal is killed. It
// returns the command's final Result (Reason "interrupted").
func (s *Terminal) Interrupt(ctx context.Context) (*Result, error) {
	c, err := s.running()
	if err != nil {
		return nil, err
	}
	return s.interrupt(ctx, c, "interrupted", false)
}

// Kill stops the running command with SIGKILL to its process group right
// away (no Ctrl-C); the terminal stays usable. A command running inside the
// shell itself (a builtin loop) falls back to the Interrupt escalation.
func (s *Terminal) Kill(ctx context.Context) (*Result, error) {
	c, err := s.running()
	if err != nil {
		return nil, err
	}
	return s.interrupt(ctx, c, "killed", true)
}

func (s *Terminal) running() (*command, error) {
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

func (s *Terminal) interrupt(ctx context.Context, c *command, reason string, hard bool) (*Result, error) {
	ctrlC := func(c *command) { s.typeInput(s.procFor(c), []byte{0x03}) }
	steps := []escalationStep{
		{"ctrl_c", ctrlC, s.opts.InterruptGrace},
		// A Ctrl-C that reached the shell between two commands of a list
		// (`a; sleep 60; b`) is lost: bash goes on with the next. A second
		// one finds that next command in the foreground, and the shell
		// then abandons the rest of the list, where SIGTERM to the job
		// would let it run on. It goes as soon as the next command takes
		// the terminal (ctrlCLost), else after the grace period.
		{"ctrl_c", ctrlC, secondInterruptGrace},
		{"sigterm", func(c *command) { s.signalCommand(c, syscall.SIGTERM) }, s.opts.TermGrace},
		{"sigkill", func(c *command) { s.signalCommand(c, syscall.SIGKILL) }, killGrace},
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
		steps = steps[3:]
	}
	for i, st := range steps {
		s.mu.Lock()
		if c.done {
			s.mu.Unlock()
			break
		}
		c.escalation = st.name
		s.mu.Unlock()
		s.log.Info("interrupting command", "seq", c.seq, "step", st.name)
		var lost func() bool
		if i == 0 && !hard {
			lost = s.ctrlCLost(c)
		}
		st.apply(c)
		if done, err := s.waitDone(ctx, c, st.grace, lost); done || err != nil {
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
func (s *Terminal) kill(c *command) {
	p := s.procFor(c)
	if p != nil {
		p.terminate(closeGrace)
	}
}

func (s *Terminal) procFor(c *command) *ptyProc {
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
func (s *Terminal) signalTarget(c *command) int {
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

func (s *Terminal) signalCommand(c *command, sig syscall.Signal) {
	if pg := s.signalTarget(c); pg > 0 {
		_ = signalGroup(pg, sig)
	}
}

// awaitSignalTarget polls up to d for a process group to signal for c.
func (s *Terminal) awaitSignalTarget(c *command, d time.Duration) int {
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
func (s *Terminal) waitStarted(ctx context.Context, c *command, d time.Duration) error {
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

// waitDone waits up to d for c to finish, or until lost (if not nil)
// says the step missed: then it returns at once, for the next step.
func (s *Terminal) waitDone(ctx context.Context, c *command, d time.Duration, lost func() bool) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	var poll <-chan time.Time
	if lost != nil {
		tick := time.NewTicker(lostPoll)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		s.mu.Lock()
		done, ch := c.done, s.changed
		s.mu.Unlock()
		if done {
			return true, nil
		}
		select {
		case <-ch:
		case <-poll:
			if lost() {
				s.log.Debug("the Ctrl-C missed: the next command of the list started", "seq", c.seq)
				return false, nil
			}
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// lostPoll spaces the checks of whether a Ctrl-C missed.
const lostPoll = 20 * time.Millisecond

// ctrlCLost is called just before the first Ctrl-C. The function it
// returns says whether that Ctrl-C missed its command: a shell without a
// line editor sometimes goes on with a loop or list when the Ctrl-C comes
// as one command hands over to the next (plain bash --noediting does it
// too, about 1 time in 15). Only the shell starts process groups, so a
// foreground group other than the one the Ctrl-C found (and not the
// shell's) is the next command of the list: the second Ctrl-C then goes
// at once instead of after the grace period. A program slow to handle
// its Ctrl-C keeps its group and gets the whole grace.
func (s *Terminal) ctrlCLost(c *command) func() bool {
	s.mu.Lock()
	fallback := c.proc != nil
	s.mu.Unlock()
	if fallback {
		return nil // the command's bash -c is its own group
	}
	before := s.signalTarget(c)
	return func() bool {
		now := s.signalTarget(c)
		return now > 0 && now != before
	}
}
