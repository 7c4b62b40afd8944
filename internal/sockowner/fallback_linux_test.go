package sockowner

import (
	"net"
	"os"
	"testing"
)

// TestProcFallback: where netlink's sock_diag is refused, the kernel's
// socket table in /proc answers the same: the owner of a listener and of
// the far end of a connection, and the listener's process.
func TestProcFallback(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := l.Addr().(*net.TCPAddr).AddrPort().Addr()
	fromProc, ok, err := procListening(addr, port)
	fromDiag, ok2, err2 := diagListening(addr, port)
	if err != nil || err2 != nil || !ok || !ok2 || fromProc.UID != os.Getuid() || fromProc != fromDiag {
		t.Fatalf("listening: /proc %+v %v %v; sock_diag %+v %v %v", fromProc, ok, err, fromDiag, ok2, err2)
	}
	if r := fromProc.Resolve(); r.PID != os.Getpid() {
		t.Errorf("the listener's process: %+v", r)
	}
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	local, remote := unmapPort(c.LocalAddr().(*net.TCPAddr).AddrPort()), unmapPort(c.RemoteAddr().(*net.TCPAddr).AddrPort())
	p, err := procPeer(local, remote)
	d, err2 := diagPeer(local, remote)
	if err != nil || err2 != nil || p.UID != os.Getuid() || d.UID != os.Getuid() {
		t.Fatalf("peer: /proc %+v %v; sock_diag %+v %v", p, err, d, err2)
	}
}
