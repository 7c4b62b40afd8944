package shellint

import (
	"os"
	"os/exec"
	"time"
)

// ptyProc is one process started as a session leader on its own PTY: the
// interactive shell, or one fallback `bash -c`.
type ptyProc struct {
	f      *os.File // PTY master, non-blocking (reads unblock on Close)
	cmd    *exec.Cmd
	pid    int
	waited chan struct{} // closed when the leader has been reaped
	exited chan struct{} // closed after leftovers were killed, output drained and onExit ran
	status int           // leader's exit status (128+signal when signalled)
}

// write writes b, giving up when the terminal stops taking input.
func (p *ptyProc) write(b []byte, timeout time.Duration) (int, error) {
	_ = p.f.SetWriteDeadline(time.Now().Add(timeout))
	n, err := p.f.Write(b)
	_ = p.f.SetWriteDeadline(time.Time{})
	return n, err
}
