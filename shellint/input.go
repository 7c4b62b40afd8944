package shellint

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// SendInput writes raw bytes (keystrokes, "\x03", "\x04", a line ending in
// "\r") to the terminal, i.e. to whatever program reads it.
func (t *Terminal) SendInput(ctx context.Context, data []byte) error {
	t.mu.Lock()
	if t.closed || t.state == StateDead {
		t.mu.Unlock()
		return &DeadError{TerminalID: t.id, ExitCode: t.status}
	}
	p := t.proc
	if t.mode == ModeFallback {
		p = nil
		if t.cur != nil {
			p = t.cur.proc
		}
	}
	t.mu.Unlock()
	if p == nil {
		return &NotRunningError{TerminalID: t.id}
	}
	return t.typeInput(p, data)
}

// typeInput writes keystrokes with the terminal's echo on, as a person's
// typing is (the echo is off only while the shell takes a submitted line).
func (t *Terminal) typeInput(p *ptyProc, data []byte) error {
	if p != nil && t.Mode() != ModeFallback {
		if err := p.setEcho(true); err != nil {
			t.log.Debug("could not turn terminal echo on", "error", err)
		}
	}
	return t.writeInput(p, data)
}

func (t *Terminal) writeInput(p *ptyProc, data []byte) error { return t.writeLine(p, 0, data) }

// writeLine writes data, the line of command seq (0: input for whatever
// reads it). The process keeps how far the line reached, so that a shell
// that dies is known to have read it or not (ptyProc.readLine).
func (t *Terminal) writeLine(p *ptyProc, seq int, data []byte) error {
	if p == nil {
		return &NotRunningError{TerminalID: t.id}
	}
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	n, err := p.writeLine(seq, data, inputTimeout)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &InputBlockedError{TerminalID: t.id, Written: n}
	}
	if err != nil {
		if errors.Is(err, errLeaderGone) {
			// Wait until the terminal has recorded the exit, so that the
			// caller finds it dead (and a command it submitted ended).
			<-p.exited
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		return &DeadError{TerminalID: t.id, ExitCode: t.status}
	}
	return nil
}

// errLeaderGone refuses a write to a terminal whose shell has exited.
var errLeaderGone = errors.New("the terminal's process has exited")

// Resize changes the terminal's window size.
func (t *Terminal) Resize(cols, rows int) error {
	if cols <= 0 || cols > 65535 || rows <= 0 || rows > 65535 {
		return &InvalidOptionError{Option: "size", Value: fmt.Sprintf("%dx%d", cols, rows), Reason: "cols and rows must be between 1 and 65535"}
	}
	t.mu.Lock()
	t.cols, t.rows = cols, rows
	p := t.proc
	t.mu.Unlock()
	if p != nil {
		return p.setSize(cols, rows)
	}
	return nil
}
