package localserver

import "os"

// A server the bridge starts runs under a supervisor: the bridge's own
// binary, started again with superviseEnv set, which starts the server
// and ends it with everything it started when the bridge asks or dies,
// even of SIGKILL, which the bridge cannot catch (supervisor_unix.go says
// how). The kernel's parent-death signal would reach the server alone,
// and only from the bridge's thread that started it (golang/go#27505).

// superviseEnv, set in a process's environment, makes it a supervisor.
// The supervisor takes it out of the server's environment.
const superviseEnv = "OH_BRIDGE_SUPERVISE_AGENT_SERVER"

// selfSupervises says that this binary answers superviseEnv, so that
// Start may run it as a server's supervisor. RunSupervisorIfAsked sets it,
// before any goroutine that could read it starts.
var selfSupervises bool

// RunSupervisorIfAsked is the supervisor's entry point, for main to call
// first thing. In a process the bridge started as a server's supervisor
// it supervises, then exits; in any other it returns, noting that this
// binary can be re-executed as one. A binary that never calls it (the
// tests of the packages above) has Start run the server as its direct
// child instead: the server's process group ends with Stop, but a
// bridge killed with SIGKILL leaves the server's descendants behind.
func RunSupervisorIfAsked() {
	if os.Getenv(superviseEnv) == "" {
		selfSupervises = supervisorWorksHere
		return
	}
	os.Exit(superviseMain(os.Args[1:]))
}
