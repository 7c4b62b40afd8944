// Package sockowner tells who is at the other end of a TCP socket on this
// machine: the user (and, where the system shows it, the process) that
// owns a port listening on loopback, or the socket at the far end of a
// loopback connection. The bridge talks to servers it merely found on a
// local port (an agent-server on 127.0.0.1:8000) and takes calls on a local
// port of its own (the MCP endpoint); a port says nothing of who holds it,
// and any user of the machine can listen on a free one. Its owner does.
//
// On Linux the kernel says it: every socket's owner uid, including the
// socket a server accepted a connection on (it inherits its listener's
// owner) and a connection not yet accepted. It is asked over netlink
// (sock_diag, one socket by its four-tuple: microseconds), or where that
// is refused, read from /proc/net/tcp and tcp6 (the whole table as text:
// tens of milliseconds with thousands of sockets). On
// macOS, lsof (at its system path, never one found on PATH) names the
// process and user. Elsewhere the owner cannot be found (ErrUnsupported).
//
// It decides nothing: callers say whom they trust (CheckedDial's Policy).
// It must not know what the bridge serves or talks to.
package sockowner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"
)

// ErrUnsupported: this system does not tell who owns a socket.
var ErrUnsupported = errors.New("this system does not tell who owns a local socket")

// Owner is who holds a socket.
type Owner struct {
	// UID is the owning user's id.
	UID int
	// PID is the process that holds the socket, 0 when it cannot be seen
	// (another user's process, to a user who is not root on Linux).
	PID int
	// Program is the process's executable, and Command its command line,
	// when the process can be seen.
	Program string
	Command string

	// inode is the socket's, for Resolve: finding the process means
	// reading every process's descriptors, which only the words need.
	inode uint64
}

// Resolve fills in the process holding the socket (PID, Program,
// Command) where this user may see it. Listening and Peer give the owner
// at once and leave the process to this: the decision needs the uid only.
func (o Owner) Resolve() Owner {
	if o.PID == 0 && o.inode != 0 {
		o = resolve(o)
	}
	return o
}

// UserName is the owner's login name, or "" when it has none.
func (o Owner) UserName() string {
	u, err := user.LookupId(strconv.Itoa(o.UID))
	if err != nil {
		return ""
	}
	return u.Username
}

// Describe says who it is in words, for the person: "user nobody (uid
// 65534), process 4242 (/usr/bin/python3 -m http.server)".
func (o Owner) Describe() string {
	o = o.Resolve()
	s := fmt.Sprintf("uid %d", o.UID)
	if name := o.UserName(); name != "" {
		s = fmt.Sprintf("user %s (uid %d)", name, o.UID)
	}
	switch {
	case o.PID > 0 && o.Command != "":
		s += fmt.Sprintf(", process %d (%s)", o.PID, clip(strings.Join(strings.Fields(o.Command), " "), 120))
	case o.PID > 0 && o.Program != "":
		s += fmt.Sprintf(", process %d (%s)", o.PID, o.Program)
	case o.PID > 0:
		s += fmt.Sprintf(", process %d", o.PID)
	default:
		s += ", in a process this user may not see"
	}
	return s
}

// IsPersonOrRoot says whether the owner is the user this process runs as,
// or root (who can read every key of the person's anyway, and under whom
// Docker's port forwarding and system services listen).
func (o Owner) IsPersonOrRoot() bool { return o.UID == os.Getuid() || o.UID == 0 }

// NotFoundError: no socket matched.
type NotFoundError struct{ What string }

func (e *NotFoundError) Error() string { return "no socket found: " + e.What }

// Listening is the owner of the socket listening on port that a
// connection to addr (a loopback address) reaches: one bound to addr
// itself, or to the wildcard address of its family. ok is false when
// nothing listens there.
func Listening(addr netip.Addr, port int) (o Owner, ok bool, err error) {
	return listening(addr.Unmap(), port)
}

// Peer is the owner of the socket at the far end of the connection from
// local to remote, both on this machine: for a connection the process
// made, the server's socket; for one it accepted, the client's.
func Peer(local, remote netip.AddrPort) (Owner, error) {
	return peer(unmapPort(local), unmapPort(remote))
}

func unmapPort(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// Policy decides whether a peer on this machine may be talked to; an
// error says why not, and is returned by the dial.
type Policy func(peer Owner, remote netip.AddrPort) error

// UnknownOwnerError: the peer's owner could not be found.
type UnknownOwnerError struct {
	Remote netip.AddrPort
	Err    error
}

func (e *UnknownOwnerError) Error() string {
	return fmt.Sprintf("cannot tell who holds %s on this machine (%v), so nothing is sent to it", e.Remote, e.Err)
}

func (e *UnknownOwnerError) Unwrap() error { return e.Err }

// Kind is "server_not_trusted".
func (e *UnknownOwnerError) Kind() string { return "server_not_trusted" }

// CheckedDial is a dial function for an http.Transport (or a websocket
// dialer's) that, for a connection to a loopback address, finds the owner
// of the socket that took the connection and asks policy before a byte is
// written; a refused connection is closed and the policy's error
// returned. Connections elsewhere are not checked: an address the person
// named on another machine is theirs to trust. unknown says what to do
// where the owner cannot be found (ErrUnsupported): nil lets the
// connection through.
func CheckedDial(d *net.Dialer, policy Policy, unknown func(remote netip.AddrPort, err error) error) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{Timeout: 10 * time.Second}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := Check(conn, policy, unknown); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// Check asks policy about the far end of conn when it is a loopback
// connection on this machine; see CheckedDial.
func Check(conn net.Conn, policy Policy, unknown func(remote netip.AddrPort, err error) error) error {
	local, lok := addrPort(conn.LocalAddr())
	remote, rok := addrPort(conn.RemoteAddr())
	if !lok || !rok || !remote.Addr().Unmap().IsLoopback() {
		return nil
	}
	o, err := Peer(local, remote)
	if err != nil {
		if unknown != nil {
			return unknown(remote, err)
		}
		if errors.Is(err, ErrUnsupported) {
			return nil
		}
		return &UnknownOwnerError{Remote: remote, Err: err}
	}
	return policy(o, remote)
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	return t.AddrPort(), true
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// DescendsFrom says whether pid is ancestor or one of its descendants,
// following ParentPID (where the system tells no parent, only pid itself
// is).
func DescendsFrom(pid, ancestor int) bool {
	for i := 0; pid > 1 && i < 4096; i++ {
		if pid == ancestor {
			return true
		}
		pid = ParentPID(pid)
	}
	return pid == ancestor
}
