//go:build unix && !linux

package localserver

import "syscall"

// becomeReaper: macOS and the BSDs have no subreaper for a process that
// is not init (FreeBSD's procctl PROC_REAP_ACQUIRE is not used here):
// what the server's descendants leave orphaned goes to init (launchd),
// out of the supervisor's reach.
func becomeReaper() error { return nil }

// killRest sends SIGKILL to the server's process group and says whether
// any of it is left (1) or not (0). A descendant that left the group
// (setsid, its own group) is not reached: docs/platforms.md.
func killRest(group int) int {
	if syscall.Kill(-group, syscall.SIGKILL) == syscall.ESRCH {
		return 0
	}
	return 1
}
