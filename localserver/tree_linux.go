package localserver

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// becomeReaper makes the supervisor the subreaper of its descendants
// (PR_SET_CHILD_SUBREAPER, Linux 3.4): one that is orphaned becomes its
// child instead of init's, so that it stays in reach (killRest) however
// it left the server's process group or session.
func becomeReaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killRest sends SIGKILL to every live descendant of the supervisor,
// found in /proc by their parents, and says how many descendants are
// left, ended ones that wait to be reaped included. As their subreaper,
// the supervisor is the ancestor of all the server started.
func killRest(int) int {
	procs := readProcs()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	left := 0
	seen := map[int]bool{}
	queue := append([]int(nil), children[os.Getpid()]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, children[pid]...)
		left++
		if p := procs[pid]; p.state != "Z" {
			p.kill()
		}
	}
	return left
}

// procStat is what the supervisor reads of a process in /proc/PID/stat.
type procStat struct {
	pid, ppid int
	state     string
	// start is its start time, which tells it from a later process that
	// got its pid after it ended.
	start string
}

func readProcs() map[int]procStat {
	out := map[int]procStat{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out[pid] = p
		}
	}
	return out
}

// readProc reads /proc/PID/stat: "pid (comm) state ppid ..." with the
// start time 22nd; comm may hold anything, spaces and parentheses too.
func readProc(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return procStat{pid: pid, ppid: ppid, state: f[0], start: f[19]}, true
}

// kill sends SIGKILL to p if it is still the process that was read: the
// pidfd pins the process its pid names when it is opened, and the start
// time read after that says whether it is p, not a process that got p's
// pid since (a descendant's parent may have reaped it meanwhile).
func (p procStat) kill() {
	same := func() bool { q, ok := readProc(p.pid); return ok && q.start == p.start }
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err == unix.ENOSYS { // before Linux 5.3: the narrow race remains
		if same() {
			_ = unix.Kill(p.pid, unix.SIGKILL)
		}
		return
	}
	if err != nil {
		return // ended
	}
	defer unix.Close(fd)
	if same() {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}
