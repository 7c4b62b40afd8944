package ohtest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// LeaveTree is bash that leaves, beside the script's own process, the
// three kinds of process a server's tree can hold: a child in its group
// that ignores SIGTERM, a child that left for a session of its own
// (setsid), and a double-forked grandchild in another session. Their
// pids are in $group, $session and $daemon afterwards. The tests of what
// ends a started agent-server's tree run it.
const LeaveTree = `fifo=$(mktemp -u) && mkfifo "$fifo" && exec 3<>"$fifo" && rm "$fifo" || exit 1
(trap '' TERM; echo $BASHPID >&3; exec sleep 1000 3>&-) &
read group <&3
setsid bash -c 'echo $$ >&3; exec sleep 1000 3>&-' &
read session <&3
( setsid bash -c 'echo $$ >&3; exec sleep 1000 3>&-' & )
read daemon <&3
exec 3>&-
`

// Proc is what /proc/PID/stat says about a process.
type Proc struct {
	PID, PPID, Session int
	Comm, State        string
}

// Procs reads the process table from /proc, for tests that check that a
// face leaves no process behind.
func Procs() map[int]Proc {
	out := map[int]Proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp session ..."; comm may hold anything.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		if f := strings.Fields(s[end+1:]); len(f) >= 4 {
			ppid, _ := strconv.Atoi(f[1])
			sess, _ := strconv.Atoi(f[3])
			out[pid] = Proc{PID: pid, PPID: ppid, Session: sess, Comm: s[open+1 : end], State: f[0]}
		}
	}
	return out
}

// Under reports whether p's parent chain leads to root, within 64 hops.
// stop, when set, ends the walk without a match at the first process on
// the way (p included) for which it is true.
func Under(procs map[int]Proc, p Proc, root int, stop func(Proc) bool) bool {
	for q, hops := p, 0; hops < 64 && (stop == nil || !stop(q)); hops++ {
		if q.PPID == root {
			return true
		}
		next, ok := procs[q.PPID]
		if !ok || q.PPID <= 1 {
			return false
		}
		q = next
	}
	return false
}

// Status reads the numeric fields of /proc/PID/status by name: "VmRSS"
// and "VmHWM" in kB, "Threads", and so on.
func Status(pid int) (map[string]int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); err == nil {
			out[name] = n
		}
	}
	return out, nil
}
