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

func (t *Terminal) onData(p *ptyProc, b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p != t.proc && (t.cur == nil || t.cur.proc != p) {
		return // an abandoned startup attempt
	}
	if t.mode == ModeFallback {
		t.mirrorTextLocked(b)
		t.commandTextLocked(b)
		t.flushMirrorLocked()
		return
	}
	t.scan.feed(b, t.onTextLocked, t.onMarkLocked)
	t.flushMirrorLocked()
}

func (t *Terminal) onTextLocked(b []byte) {
	t.mirrorTextLocked(b)
	t.commandTextLocked(b)
}

func (t *Terminal) commandTextLocked(b []byte) {
	c := t.cur
	if c == nil || !c.started || c.done {
		return // prompt, echo of the submit line, job notices
	}
	c.lastOutput = time.Now()
	text := c.cook.cook(b)
	c.out.write(text)
	t.textLocked(c, text)
}

// textLocked gathers a command's cooked text for the subscribers' next
// TextEvent, which flushMirrorLocked sends after the raw bytes it came in.
func (t *Terminal) textLocked(c *command, text []byte) {
	if len(t.subs) == 0 || len(text) == 0 {
		return
	}
	if t.textSeq != c.seq {
		t.flushTextLocked()
		t.textSeq = c.seq
	}
	t.text = append(t.text, text...)
}

func (t *Terminal) onMarkLocked(m mark) {
	if !t.markIsOurs(m) {
		t.onTextLocked(m.raw)
		return
	}
	if m.code == "D" {
		t.onEndLocked(m)
		return
	}
	t.mirrorMarkLocked(m)
	switch m.code {
	case "A":
		if !t.ready {
			t.ready = true
			// The line discipline the shell reads its lines in, put back
			// before each line (line_unix.go). A line editor sets its own
			// while it reads, and this prompt may come before or after it
			// did: there the editor's own reset stands.
			if !t.opts.LineEditing {
				t.proc.saveLine()
			}
			t.broadcastLocked()
		}
		if t.promptPending {
			// The prompt that follows the last D: the shell now reads.
			t.promptPending = false
			t.broadcastLocked()
		} else if c := t.cur; c != nil && !c.done && c.proc == nil {
			// A new prompt and no D: the shell never ran the line (Ctrl-C
			// at the prompt flushed it, or the machinery was removed).
			t.finishLocked(c, 130, "exited")
		}
	case "P":
		k, v, _ := strings.Cut(strings.Join(m.args[:len(m.args)-1], ";"), "=")
		if k == "Cwd" {
			t.cwd = decodeMarkValue(v)
		}
	case "C":
		// The shell has read the whole line: the eval line's C names its
		// seq; typed mode's (PS0) is tagged "f" and belongs to the line
		// submitted last, since the one before has ended.
		if c := t.cur; c != nil && !c.began && c.proc == nil && (m.args[1] == "f" || m.args[1] == strconv.Itoa(c.seq)) {
			c.began = true
			c.started = true // with a line editor, what came before was its echo of the line
			t.broadcastLocked()
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
func (t *Terminal) onEndLocked(m mark) {
	c := t.cur
	if tag := m.args[2]; strings.HasPrefix(tag, "f") {
		t.typed = true
		t.hookLost = tag != "f10"
		if c == nil || c.done || c.proc != nil {
			return
		}
	} else if c == nil || tag != strconv.Itoa(c.seq) {
		return
	}
	t.mirrorMarkLocked(m)
	ec, err := strconv.Atoi(m.args[0])
	if err != nil {
		ec = -1
	}
	t.finishLocked(c, ec, "exited")
	t.promptPending = true
}

// markIsOurs checks the nonce (and shape); anything else, including a
// command printing a look-alike, is plain output.
func (t *Terminal) markIsOurs(m mark) bool {
	switch m.code {
	case "A":
		return len(m.args) == 1 && m.args[0] == t.nonce
	case "C":
		return len(m.args) == 2 && m.args[0] == t.nonce
	case "D":
		return len(m.args) == 3 && m.args[1] == t.nonce
	case "P":
		return len(m.args) >= 2 && m.args[len(m.args)-1] == t.nonce
	}
	return false
}

func (t *Terminal) onExit(p *ptyProc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mode == ModeFallback {
		c := t.cur
		if c == nil || c.proc != p {
			return
		}
		if b, err := os.ReadFile(filepath.Join(t.runDir, "cwd")); err == nil {
			if d := strings.TrimRight(string(b), "\n"); d != "" {
				t.cwd = d
			}
		}
		t.finishLocked(c, p.status, "exited")
		return
	}
	if p != t.proc {
		return
	}
	t.status = p.status
	if c := t.cur; c != nil && !c.done {
		reason := "shell_exited"
		switch {
		case t.closed:
			reason = "closed"
		case !p.readLine(c.seq):
			// The shell died before it read the line (a program left the
			// terminal so that the prompt read end-of-input, or the
			// shell was killed): nothing of the command ran.
			reason = "not_run"
		}
		t.finishLocked(c, p.status, reason)
	}
	t.setStateLocked(StateDead, nil, "shell exited")
	t.log.Info("shell exited", "status", p.status)
}

func (t *Terminal) finishLocked(c *command, exitCode int, reason string) {
	rest := c.cook.flush()
	c.out.write(rest)
	t.textLocked(c, rest)
	c.done = true
	c.exitCode = exitCode
	if c.reason == "" {
		c.reason = reason
	}
	c.end = time.Now()
	c.cwd = t.cwd
	if c.file != "" {
		os.Remove(c.file)
	}
	if t.cur == c {
		t.cur = nil
	}
	if t.state == StateRunning {
		t.setStateLocked(StateIdle, c, c.reason)
	} else {
		t.broadcastLocked()
	}
}

// ---- events ----

func (t *Terminal) broadcastLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *Terminal) setStateLocked(st State, c *command, reason string) {
	t.flushMirrorLocked()
	t.state = st
	ev := &StateEvent{State: st, Name: t.name, Mode: t.mode, Cwd: t.cwd, Reason: reason}
	if c != nil {
		ev.Seq, ev.Command, ev.AltScreen = c.seq, c.text, c.cook.altSeen
		if c.done {
			ec := c.exitCode
			ev.ExitCode = &ec
		}
	}
	if st == StateDead {
		ec := t.status
		ev.ExitCode = &ec
	}
	for _, sub := range t.subs {
		sub.push(Event{TerminalID: t.id, State: ev})
	}
	t.broadcastLocked()
}

// Subscribe delivers this terminal's raw output and state changes to fn,
// in order, on a goroutine of its own; fn may block without stalling the
// terminal (a subscriber that falls more than Options.SubscriberBuffer bytes
// behind loses output, reported as OutputEvent.Lost). Delivery starts with
// the next byte read. The returned func cancels the subscription.
func (t *Terminal) Subscribe(fn func(Event)) (cancel func()) {
	sub := newSubscriber(fn, t.opts.SubscriberBuffer)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		sub.close()
		return func() {}
	}
	t.subs = append(t.subs, sub)
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		for i, x := range t.subs {
			if x == sub {
				t.subs = append(t.subs[:i:i], t.subs[i+1:]...)
				break
			}
		}
		t.mu.Unlock()
		sub.cancel()
	}
}
