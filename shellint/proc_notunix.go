//go:build !unix

package shellint

import (
	"syscall"
	"time"
)

// Terminals do not run here: they need a Unix PTY, process groups and
// sessions (a Windows port needs ConPTY and job objects; docs/platforms.md).
// newTerminal and Pool.Acquire answer *UnsupportedPlatformError before
// anything is started, so no ptyProc exists and the methods below are
// never reached; they give the shared code what it calls.
const terminalsSupported = false

// ptyProc has what the shared code reads of a process.
type ptyProc struct {
	pid    int
	exited chan struct{}
	status int
}

func startProc(argv, env []string, secret []byte, dir string, cols, rows int, onData func(*ptyProc, []byte), onExit func(*ptyProc)) (*ptyProc, error) {
	return nil, platformError()
}

func (p *ptyProc) writeLine(seq int, b []byte, timeout time.Duration) (int, error) {
	return 0, platformError()
}
func (p *ptyProc) readLine(seq int) bool         { return false }
func (p *ptyProc) fgPgid() int                   { return 0 }
func (p *ptyProc) setSize(cols, rows int) error  { return platformError() }
func (p *ptyProc) setEcho(on bool) error         { return platformError() }
func (p *ptyProc) saveLine()                     {}
func (p *ptyProc) prepareLine() error            { return platformError() }
func (p *ptyProc) terminate(grace time.Duration) {}

func signalGroup(pg int, sig syscall.Signal) error             { return platformError() }
func killGroups(sid int, groups []int, deadline time.Time) int { return 0 }
