package sockowner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lsof is macOS's own, at its system path: a program of the same name
// found on PATH (or in the workspace) is not asked who holds a socket.
const lsof = "/usr/sbin/lsof"

// socket is one line group of `lsof -F pun`: a process, its owner, and
// the name of one of its TCP sockets ("127.0.0.1:8000",
// "*:8000", "127.0.0.1:8000->127.0.0.1:50123").
type socket struct {
	pid, uid int
	name     string
}

func lsofSockets(port int, listen bool) ([]socket, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	args := []string{"-nP", "-w", "-iTCP:" + strconv.Itoa(port), "-F", "pun"}
	if listen {
		args = append(args, "-sTCP:LISTEN")
	}
	out, err := exec.CommandContext(ctx, lsof, args...).Output()
	if err != nil && len(out) == 0 {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return nil, nil // nothing matched
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsupported, lsof, err)
	}
	var socks []socket
	var pid, uid int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			continue
		}
		switch l[0] {
		case 'p':
			pid, _ = strconv.Atoi(l[1:])
		case 'u':
			uid, _ = strconv.Atoi(l[1:])
		case 'n':
			socks = append(socks, socket{pid: pid, uid: uid, name: l[1:]})
		}
	}
	return socks, nil
}

func owner(pid, uid int) Owner {
	o := Owner{UID: uid, PID: pid}
	if kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid); err == nil {
		o.Program = unix.ByteSliceToString(kp.Proc.P_comm[:])
	}
	if args, err := unix.SysctlRaw("kern.procargs2", pid); err == nil && len(args) > 4 {
		// argc, then the executable's path, NUL-padded, then the args.
		rest := args[4:]
		if i := bytes.IndexByte(rest, 0); i > 0 {
			o.Program = string(rest[:i])
		}
	}
	o.Command = o.Program
	return o
}

func listening(addr netip.Addr, port int) (Owner, bool, error) {
	socks, err := lsofSockets(port, true)
	if err != nil {
		return Owner{}, false, err
	}
	var best *socket
	for i := range socks {
		s := &socks[i]
		host, _, ok := cutPort(s.name)
		if !ok {
			continue
		}
		if host == "*" || host == addr.String() || (host == "[::1]" && addr == netip.IPv6Loopback()) {
			if best == nil || strings.HasPrefix(best.name, "*") {
				best = s
			}
		}
	}
	if best == nil {
		return Owner{}, false, nil
	}
	return owner(best.pid, best.uid), true, nil
}

func cutPort(name string) (host, port string, ok bool) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

func peer(local, remote netip.AddrPort) (Owner, error) {
	socks, err := lsofSockets(int(remote.Port()), false)
	if err != nil {
		return Owner{}, err
	}
	want := remote.String() + "->" + local.String()
	for _, s := range socks {
		if s.name == want {
			return owner(s.pid, s.uid), nil
		}
	}
	if o, ok, err := listening(remote.Addr(), int(remote.Port())); err == nil && ok {
		return o, nil
	}
	return Owner{}, &NotFoundError{What: fmt.Sprintf("the far end of %s → %s", local, remote)}
}

// ParentPID is pid's parent (0 when gone).
func ParentPID(pid int) int {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return 0
	}
	return int(kp.Eproc.Ppid)
}

// resolve: lsof named the process already.
func resolve(o Owner) Owner { return o }
