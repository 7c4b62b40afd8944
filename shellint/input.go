package shellint

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// SendInput writes raw bytes (keystrokes, "\x03", "\x04", a line ending in
// "\r") to the terminal, i.e. to whatever program reads it.
func (s *Terminal) SendInput(ctx context.Context, data []byte) error {
	s.mu.Lock()
	if s.closed || s.state == StateDead {
		s.mu.Unlock()
		return &DeadError{TerminalID: s.id, ExitCode: s.status}
	}
	p := s.proc
	if s.mode == ModeFallback {
		p = nil
		if s.cur != nil {
			p = s.cur.proc
		}
	}
	s.mu.Unlock()
	if p == nil {
		return &NotRunningError{TerminalID: s.id}
	}
	return s.typeInput(p, data)
}

// typeInput writes keystrokes with the terminal's echo on, as a person's
// typing is (the echo is off only while the shell takes a submitted line).
func (s *Terminal) typeInput(p *ptyProc, data []byte) error {
	if p != nil && s.Mode() != ModeFallback {
		if err := p.setEcho(true); err != nil {
			s.log.Debug("could not turn terminal echo on", "error", err)
		}
	}
	return s.writeInput(p, data)
}

func (s *Terminal) writeInput(p *ptyProc, data []byte) error { return s.writeLine(p, 0, data) }

// writeLine writes data, the line of command seq (0: input for whatever
// reads it). The process keeps how far the line reached, so that a shell
// that dies is known to have read it or not (ptyProc.readLine).
func (s *Terminal) writeLine(p *ptyProc, seq int, data []byte) error {
	if p == nil {
		return &NotRunningError{TerminalID: s.id}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := p.writeLine(seq, data, inputTimeout)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &InputBlockedError{TerminalID: s.id, Written: n}
	}
	if err != nil {
		if errors.Is(err, errLeaderGone) {
			// Wait until the terminal has recorded the exit, so that the
			// caller finds it dead (and a command it submitted ended).
			<-p.exited
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return &DeadError{TerminalID: s.id, ExitCode: s.status}
	}
	return nil
}

// errLeaderGone refuses a write to a terminal whose shell has exited.
var errLeaderGone = errors.New("the terminal's process has exited")

// Resize changes the terminal's window size.
func (s *Terminal) Resize(cols, rows int) error {
	if cols <= 0 || cols > 65535 || rows <= 0 || rows > 65535 {
		return &InvalidOptionError{Option: "size", Value: fmt.Sprintf("%dx%d", cols, rows), Reason: "cols and rows must be between 1 and 65535"}
	}
	s.mu.Lock()
	s.cols, s.rows = cols, rows
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		return p.setSize(cols, rows)
	}
	return nil
}
