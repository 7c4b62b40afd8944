package sockowner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// The kernel's sock_diag netlink interface (linux/inet_diag.h): asked for
// one socket by its four-tuple, it answers that socket alone, with its
// owner and inode, in microseconds; /proc/net/tcp is the whole table as
// text, which takes tens of milliseconds on a machine with thousands of
// sockets. The table is the fallback where netlink is refused (some
// sandboxes).

const (
	sizeofReq = 56 // struct inet_diag_req_v2
	sizeofMsg = 72 // struct inet_diag_msg
	tcpListen = 10 // TCP_LISTEN
	allStates = 0xfff
)

// diagRequest is an inet_diag_req_v2 for TCP sockets of family in states,
// naming the socket whose local end is src and remote end dst (zero ports
// and addresses for a dump).
func diagRequest(family uint8, states uint32, src, dst netip.AddrPort, flags uint16) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN+sizeofReq)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(b[6:], flags)
	r := b[unix.NLMSG_HDRLEN:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], states)
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], src.Port())
	binary.BigEndian.PutUint16(id[2:], dst.Port())
	putAddr(id[4:20], src.Addr())
	putAddr(id[20:36], dst.Addr())
	binary.NativeEndian.PutUint32(id[40:], ^uint32(0)) // INET_DIAG_NOCOOKIE
	binary.NativeEndian.PutUint32(id[44:], ^uint32(0))
	return b
}

func putAddr(b []byte, a netip.Addr) {
	if !a.IsValid() {
		return
	}
	if a.Is4() {
		v := a.As4()
		copy(b, v[:])
		return
	}
	v := a.As16()
	copy(b, v[:])
}

// diagSocket is what a reply says of one socket.
type diagSocket struct {
	family        uint8
	state         uint8
	local, remote netip.AddrPort
	uid           int
	inode         uint64
}

func parseDiag(m []byte) diagSocket {
	s := diagSocket{family: m[0], state: m[1]}
	id := m[4:52]
	addr := func(b []byte) netip.Addr {
		if s.family == unix.AF_INET {
			return netip.AddrFrom4([4]byte(b[:4]))
		}
		return netip.AddrFrom16([16]byte(b[:16])).Unmap()
	}
	s.local = netip.AddrPortFrom(addr(id[4:20]), binary.BigEndian.Uint16(id[0:]))
	s.remote = netip.AddrPortFrom(addr(id[20:36]), binary.BigEndian.Uint16(id[2:]))
	s.uid = int(binary.NativeEndian.Uint32(m[64:]))
	s.inode = uint64(binary.NativeEndian.Uint32(m[68:]))
	return s
}

// errNoSocket: the kernel knows no such socket.
var errNoSocket = errors.New("no such socket")

// diag sends one request and gathers the sockets of its answer.
func diag(req []byte) ([]diagSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out []diagSocket
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
						if unix.Errno(-errno) == unix.ENOENT {
							return nil, errNoSocket
						}
						return nil, unix.Errno(-errno)
					}
				}
				return out, nil
			case unix.SOCK_DIAG_BY_FAMILY:
				if len(m.Data) >= sizeofMsg {
					out = append(out, parseDiag(m.Data))
				}
			}
		}
		if binary.NativeEndian.Uint16(req[6:])&unix.NLM_F_DUMP == 0 {
			return out, nil // a single answer
		}
	}
}

func familyOf(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// diagPeer is the owner of the socket whose local end is remote and
// remote end local: the far end of a connection on this machine.
func diagPeer(local, remote netip.AddrPort) (Owner, error) {
	socks, err := diag(diagRequest(familyOf(remote.Addr()), allStates, remote, local, unix.NLM_F_REQUEST))
	if err != nil {
		return Owner{}, err
	}
	if len(socks) == 0 {
		return Owner{}, errNoSocket
	}
	return describe(socks[0].uid, socks[0].inode), nil
}

// diagListening is the owner of the listener a connection to addr:port
// reaches, from a dump of the listening sockets of both families.
func diagListening(addr netip.Addr, port int) (Owner, bool, error) {
	var best *diagSocket
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		socks, err := diag(diagRequest(fam, 1<<tcpListen, netip.AddrPort{}, netip.AddrPort{}, unix.NLM_F_REQUEST|unix.NLM_F_DUMP))
		if err != nil {
			if fam == unix.AF_INET6 {
				continue // no IPv6 here
			}
			return Owner{}, false, fmt.Errorf("sock_diag: %w", err)
		}
		for i := range socks {
			s := &socks[i]
			if int(s.local.Port()) != port || !reaches(s.local.Addr(), addr) {
				continue
			}
			if best == nil || (best.local.Addr().IsUnspecified() && !s.local.Addr().IsUnspecified()) {
				best = s
			}
		}
	}
	if best == nil {
		return Owner{}, false, nil
	}
	return describe(best.uid, best.inode), true, nil
}
