package sockowner

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The kernel's socket tables (proc(5), net/ipv4/tcp_ipv4.c get_tcp4_sock):
// a line a socket, "sl local rem st tx:rx tr:when retrnsmt uid timeout
// inode ...", addresses as the hex of the in-memory words and ports in
// hex. The uid is the socket's owner (sk_uid); an accepted socket is a
// clone of its listener and keeps its owner, and a connection not yet
// accepted (SYN_RECV) shows its listener's.
var tables = []string{"/proc/net/tcp", "/proc/net/tcp6"}

const (
	stateEstablished = 0x01
	stateSynRecv     = 0x03
	stateListen      = 0x0A
	stateNewSynRecv  = 0x0C
)

type entry struct {
	local, remote netip.AddrPort
	state         int
	uid           int
	inode         uint64
}

func readEntries() ([]entry, error) {
	var out []entry
	var firstErr error
	read := 0
	for _, t := range tables {
		data, err := os.ReadFile(t)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue // no IPv6 here
		}
		read++
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		sc.Scan() // the header
		for sc.Scan() {
			if e, ok := parseEntry(sc.Text()); ok {
				out = append(out, e)
			}
		}
	}
	if read == 0 {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, firstErr)
	}
	return out, nil
}

func parseEntry(line string) (entry, bool) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return entry{}, false
	}
	local, ok1 := parseAddr(f[1])
	remote, ok2 := parseAddr(f[2])
	st, err1 := strconv.ParseUint(f[3], 16, 8)
	uid, err2 := strconv.Atoi(f[7])
	inode, err3 := strconv.ParseUint(f[9], 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil {
		return entry{}, false
	}
	return entry{local: local, remote: remote, state: int(st), uid: uid, inode: inode}, true
}

// parseAddr reads "0100007F:1F40" or its 32-digit IPv6 form: each group
// of eight digits is a 32-bit word as it lies in memory, printed as a
// number.
func parseAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil || (len(h) != 8 && len(h) != 32) {
		return netip.AddrPort{}, false
	}
	raw := make([]byte, len(h)/2)
	for i := 0; i < len(h); i += 8 {
		w, err := strconv.ParseUint(h[i:i+8], 16, 32)
		if err != nil {
			return netip.AddrPort{}, false
		}
		binary.NativeEndian.PutUint32(raw[i/2:], uint32(w))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}

// reaches says whether a socket bound to bound takes connections to addr.
func reaches(bound, addr netip.Addr) bool {
	return bound == addr || bound.IsUnspecified()
}

func listening(addr netip.Addr, port int) (Owner, bool, error) {
	if o, ok, err := diagListening(addr, port); err == nil {
		return o, ok, nil
	}
	return procListening(addr, port)
}

// procListening is listening from /proc/net/tcp and tcp6.
func procListening(addr netip.Addr, port int) (Owner, bool, error) {
	entries, err := readEntries()
	if err != nil {
		return Owner{}, false, err
	}
	// The most specific listener takes the connection: one bound to the
	// address itself before a wildcard one.
	var best *entry
	for i := range entries {
		e := &entries[i]
		if e.state != stateListen || int(e.local.Port()) != port || !reaches(e.local.Addr(), addr) {
			continue
		}
		if best == nil || (best.local.Addr().IsUnspecified() && !e.local.Addr().IsUnspecified()) {
			best = e
		}
	}
	if best == nil {
		return Owner{}, false, nil
	}
	return describe(best.uid, best.inode), true, nil
}

// peerWait bounds the wait for the far end of a loopback connection to
// show: the client's connect returns when it has sent the last ACK of the
// handshake, which the server side may take a moment longer to process.
const peerWait = 500 * time.Millisecond

func peer(local, remote netip.AddrPort) (Owner, error) {
	o, err := diagPeer(local, remote)
	if err == nil {
		return o, nil
	}
	if errors.Is(err, errNoSocket) {
		// Not in the established table: a listener on the port is who
		// will accept it (the same owner, by the kernel's rule).
		if l, ok, lerr := listening(remote.Addr(), int(remote.Port())); lerr == nil && ok {
			return l, nil
		}
		return Owner{}, &NotFoundError{What: fmt.Sprintf("the far end of %s → %s", local, remote)}
	}
	return procPeer(local, remote)
}

// procPeer is peer from /proc/net/tcp and tcp6.
func procPeer(local, remote netip.AddrPort) (Owner, error) {
	deadline := time.Now().Add(peerWait)
	pause := 200 * time.Microsecond
	for {
		entries, err := readEntries()
		if err != nil {
			return Owner{}, err
		}
		for _, e := range entries {
			if e.local == remote && e.remote == local {
				switch e.state {
				case stateEstablished, stateSynRecv, stateNewSynRecv:
					o := describe(e.uid, e.inode)
					if e.inode == 0 {
						// Not accepted yet: the listener's process
						// will take it (the same owner, by the
						// kernel's rule).
						if l, ok, err := listening(remote.Addr(), int(remote.Port())); err == nil && ok && l.UID == o.UID {
							o = l
						}
					}
					return o, nil
				}
			}
		}
		// Not seen yet: a listener on the port is who will accept it.
		if time.Now().After(deadline) {
			if o, ok, err := listening(remote.Addr(), int(remote.Port())); err == nil && ok {
				return o, nil
			}
			return Owner{}, &NotFoundError{What: fmt.Sprintf("the far end of %s → %s", local, remote)}
		}
		time.Sleep(pause)
		pause = min(pause*2, 20*time.Millisecond)
	}
}

// describe is the owner of a socket, its process left to Resolve.
func describe(uid int, inode uint64) Owner { return Owner{UID: uid, inode: inode} }

// resolve finds the process holding the socket, where this user may look
// into its file descriptors.
func resolve(o Owner) Owner {
	if pid := pidOfInode(o.inode); pid > 0 {
		o.PID = pid
		o.Program, _ = os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil {
			o.Command = strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	return o
}

// pidOfInode scans /proc/*/fd for the socket; processes this user may not
// look into are passed over.
func pidOfInode(inode uint64) int {
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && l == want {
				return pid
			}
		}
	}
	return 0
}

// ParentPID is pid's parent, from /proc/<pid>/stat (0 when gone).
func ParentPID(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
