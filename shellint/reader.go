package shellint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The reader side, called from ptyProc goroutines: each chunk the PTY
// gives goes to onData, which scans markers, cooks command output, mirrors
// the stream and moves the terminal between states.

func (s *Terminal) onData(p *ptyProc, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p != s.proc && (s.cur == nil || s.cur.proc != p) {
		return // an abandoned startup attempt
	}
	if s.mode == ModeFallback {
		s.mirrorTextLocked(b)
		s.commandTextLocked(b)
		s.flushMirrorLocked()
		return
	}
	s.scan.feed(b, s.onTextLocked, s.onMarkLocked)
	s.flushMirrorLocked()
}

func (s *Terminal) onTextLocked(b []byte) {
	s.mirrorTextLocked(b)
	s.commandTextLocked(b)
}

func (s *Terminal) commandTextLocked(b []byte) {
	c := s.cur
	if c == nil || !c.started || c.done {
		return // prompt, echo of the submit line, job notices
	}
	c.lastOutput = time.Now()
	text := c.cook.cook(b)
	c.out.write(text)
	s.textLocked(c, text)
}

// textLocked gathers a command's cooked text for the subscribers' next
// TextEvent, which flushMirrorLocked sends after the raw bytes it came in.
func (s *Terminal) textLocked(c *command, text []byte) {
	if len(s.subs) == 0 || len(text) == 0 {
		return
	}
	if s.textSeq != c.seq {
		s.flushTextLocked()
		s.textSeq = c.seq
	}
	s.text = append(s.text, text...)
}

func (s *Terminal) onMarkLocked(m mark) {
	if !s.markIsOurs(m) {
		s.onTextLocked(m.raw)
		return
	}
	if m.code == "D" {
		s.onEndLocked(m)
		return
	}
	s.mirrorMarkLocked(m)
	switch m.code {
	case "A":
		if !s.ready {
			s.ready = true
			// The line discipline the shell reads its lines in, put back
			// before each line (line_unix.go). A line editor sets its own
			// while it reads, and this prompt may come before or after it
			// did: there the editor's own reset stands.
			if !s.opts.LineEditing {
				s.proc.saveLine()
			}
			s.broadcastLocked()
		}
		if s.promptPending {
			// The prompt that follows the last D: the shell now reads.
			s.promptPending = false
			s.broadcastLocked()
		} else if c := s.cur; c != nil && !c.done && c.proc == nil {
			// A new prompt and no D: the shell never ran the line (Ctrl-C
			// at the prompt flushed it, or the machinery was removed).
			s.finishLocked(c, 130, "exited")
		}
	case "P":
		k, v, _ := strings.Cut(strings.Join(m.args[:len(m.args)-1], ";"), "=")
		if k == "Cwd" {
			s.cwd = decodeMarkValue(v)
		}
	case "C":
		// The shell has read the whole line: the eval line's C names its
		// seq; typed mode's (PS0) is tagged "f" and belongs to the line
		// submitted last, since the one before has ended.
		if c := s.cur; c != nil && !c.began && c.proc == nil && (m.args[1] == "f" || m.args[1] == strconv.Itoa(c.seq)) {
			c.began = true
			c.started = true // with a line editor, what came before was its echo of the line
			s.broadcastLocked()
		}
	}
}

// onEndLocked handles D;<exit>;<nonce>;<tag>. The classic integration
// prints D only after one of our lines, tagged with its seq. The typed one
// prints it with every prompt (PS1), tagged "f" and whether our hook ran:
// there the first D after a line is submitted ends that command, since the
// shell prints no prompt between reading a line and finishing it. Only a
// D that ends a command is mirrored: VS Code would take the others for
// commands of their own.
func (s *Terminal) onEndLocked(m mark) {
	c := s.cur
	if tag := m.args[2]; strings.HasPrefix(tag, "f") {
		s.typed = true
		s.hookLost = tag != "f10"
		if c == nil || c.done || c.proc != nil {
			return
		}
	} else if c == nil || tag != strconv.Itoa(c.seq) {
		return
	}
	s.mirrorMarkLocked(m)
	ec, err := strconv.Atoi(m.args[0])
	if err != nil {
		ec = -1
	}
	s.finishLocked(c, ec, "exited")
	s.promptPending = true
}

// markIsOurs checks the nonce (and shape); anything else, including a
// command printing a look-alike, is plain output.
func (s *Terminal) markIsOurs(m mark) bool {
	switch m.code {
	case "A":
		return len(m.args) == 1 && m.args[0] == s.nonce
	case "C":
		return len(m.args) == 2 && m.args[0] == s.nonce
	case "D":
		return len(m.args) == 3 && m.args[1] == s.nonce
	case "P":
		return len(m.args) >= 2 && m.args[len(m.args)-1] == s.nonce
	}
	return false
}

func (s *Terminal) onExit(p *ptyProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == ModeFallback {
		c := s.cur
		if c == nil || c.proc != p {
			return
		}
		if b, err := os.ReadFile(filepath.Join(s.runDir, "cwd")); err == nil {
			if d := strings.TrimRight(string(b), "\n"); d != "" {
				s.cwd = d
			}
		}
		s.finishLocked(c, p.status, "exited")
		return
	}
	if p != s.proc {
		return
	}
	s.status = p.status
	if c := s.cur; c != nil && !c.done {
		reason := "shell_exited"
		switch {
		case s.closed:
			reason = "closed"
		case !p.readLine(c.seq):
			// The shell died before it read the line (a program left the
			// terminal so that the prompt read end-of-input, or the
			// shell was killed): nothing of the command ran.
			reason = "not_run"
		}
		s.finishLocked(c, p.status, reason)
	}
	s.setStateLocked(StateDead, nil, "shell exited")
	s.log.Info("shell exited", "status", p.status)
}

func (s *Terminal) finishLocked(c *command, exitCode int, reason string) {
	rest := c.cook.flush()
	c.out.write(rest)
	s.textLocked(c, rest)
	c.done = true
	c.exitCode = exitCode
	if c.reason == "" {
		c.reason = reason
	}
	c.end = time.Now()
	c.cwd = s.cwd
	if c.file != "" {
		os.Remove(c.file)
	}
	if s.cur == c {
		s.cur = nil
	}
	if s.state == StateRunning {
		s.setStateLocked(StateIdle, c, c.reason)
	} else {
		s.broadcastLocked()
	}
}

// ---- events ----

func (s *Terminal) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Terminal) setStateLocked(st State, c *command, reason string) {
	s.flushMirrorLocked()
	s.state = st
	ev := &StateEvent{State: st, Name: s.name, Mode: s.mode, Cwd: s.cwd, Reason: reason}
	if c != nil {
		ev.Seq, ev.Command, ev.AltScreen = c.seq, c.text, c.cook.altSeen
		if c.done {
			ec := c.exitCode
			ev.ExitCode = &ec
		}
	}
	if st == StateDead {
		ec := s.status
		ev.ExitCode = &ec
	}
	for _, sub := range s.subs {
		sub.push(Event{TerminalID: s.id, State: ev})
	}
	s.broadcastLocked()
}

// Subscribe delivers this terminal's raw output and state changes to fn,
// in order, on a goroutine of its own; fn may block without stalling the
// terminal (a subscriber that falls more than Options.SubscriberBuffer bytes
// behind loses output, reported as OutputEvent.Lost). Delivery starts with
// the next byte read. The returned func cancels the subscription.
func (s *Terminal) Subscribe(fn func(Event)) (cancel func()) {
	sub := newSubscriber(fn, s.opts.SubscriberBuffer)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sub.close()
		return func() {}
	}
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		for i, x := range s.subs {
			if x == sub {
				s.subs = append(s.subs[:i:i], s.subs[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		sub.cancel()
	}
}
