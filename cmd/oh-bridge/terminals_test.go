//go:build unix

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

type procInfo = ohtest.Proc

func readProcs() map[int]procInfo { return ohtest.Procs() }

// descendants are the live processes whose parent chain leads to root, or
// that belong to one of the sessions (a job that was reparented still has
// its session id).
func descendants(root int, sessions map[int]bool) map[int]procInfo {
	procs := readProcs()
	out := map[int]procInfo{}
	for pid, p := range procs {
		if p.State == "Z" || pid == root {
			continue
		}
		if sessions[p.Session] {
			out[pid] = p
			continue
		}
		if ohtest.Under(procs, p, root, nil) {
			out[pid] = p
		}
	}
	return out
}

// TestTerminalsLeaveNoProcesses starts background (one of them nohup'd)
// and foreground jobs in bash and zsh terminals, ends the session
// (shutdown+exit, end of stdin, SIGTERM, SIGINT or SIGHUP) and checks that
// the bridge exits within 2 s with the documented code, leaving no process
// of those terminals and no temporary directory behind.
func TestTerminalsLeaveNoProcesses(t *testing.T) {
	shells := []string{"bash"}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	requireTool(t, "zsh", "apt-get install zsh")
	shells = append(shells, "zsh")
	for _, end := range []string{"shutdown", "stdin EOF", "SIGTERM", "SIGINT", "SIGHUP"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			b := startBridgeEnv(t, []string{"TMPDIR=" + tmp}, "--workspace", t.TempDir())
			ctx := ctxT(t)
			if _, err := b.client.Initialize(ctx, nil); err != nil {
				t.Fatal(err)
			}
			sessions := map[int]bool{}
			for _, shell := range shells {
				var open struct {
					TerminalID string
					PID        int
				}
				if err := b.client.Call(ctx, "terminal/open", map[string]any{"shell": shell}, &open); err != nil {
					t.Fatal(err)
				}
				sessions[open.PID] = true
				for _, cmd := range []string{"nohup sleep 1000 >/dev/null 2>&1 &", "sleep 1000 &", "sleep 1000"} {
					var r struct{ Running bool }
					err := b.client.Call(ctx, "terminal/run", map[string]any{"terminalId": open.TerminalID, "command": cmd, "noOutputTimeoutMs": 200}, &r)
					if err != nil {
						t.Fatalf("%s: %s: %v", shell, cmd, err)
					}
				}
			}
			// Both sleeps of both shells are up (the background one may
			// take a moment to exec).
			before := ohtest.Poll(t, 5*time.Second, fmt.Sprintf("%d sleeps under the bridge", 3*len(shells)), func() (map[int]procInfo, bool) {
				procs := descendants(b.cmd.Process.Pid, sessions)
				sleeps := 0
				for _, p := range procs {
					if p.Comm == "sleep" {
						sleeps++
					}
				}
				return procs, sleeps == 3*len(shells)
			})
			t.Cleanup(func() { // never leak sleeps, even when failing
				for pid := range descendants(b.cmd.Process.Pid, sessions) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})

			start := time.Now()
			switch end {
			case "shutdown":
				if err := b.client.Call(ctx, "shutdown", nil, nil); err != nil {
					t.Fatal(err)
				}
				b.client.Notify("exit", nil)
			case "stdin EOF":
				b.stdin.Close()
			default:
				b.cmd.Process.Signal(map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT, "SIGHUP": syscall.SIGHUP}[end])
			}
			code, _ := b.wait(t, 5*time.Second)
			took := time.Since(start)
			t.Logf("%s: exited in %v", end, took)
			if want := map[string]int{"shutdown": 0, "stdin EOF": 1, "SIGTERM": 143, "SIGINT": 130, "SIGHUP": 129}[end]; code != want {
				t.Errorf("exit code %d, want %d", code, want)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "oh-bridge-*")); len(left) > 0 {
				t.Errorf("temporary directories left: %v", left)
			}
			if took > 2*time.Second {
				t.Errorf("took %v to exit, want ≤ 2s", took)
			}
			// What was there before must be gone (zombies waiting for
			// init to reap them count as gone).
			var left []string
			procs := readProcs()
			for pid, p := range before {
				if q, ok := procs[pid]; ok && q.State != "Z" && q.Comm == p.Comm {
					left = append(left, fmt.Sprintf("%d %s (session %d)", pid, q.Comm, q.Session))
				}
			}
			for pid, p := range procs {
				if sessions[p.Session] && p.State != "Z" {
					left = append(left, fmt.Sprintf("%d %s (session %d)", pid, p.Comm, p.Session))
				}
			}
			if len(left) > 0 {
				t.Fatalf("processes left after the bridge exited: %v", left)
			}
		})
	}
}
