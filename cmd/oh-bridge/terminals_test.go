package main_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procInfo is what /proc/PID/stat says about a process.
type procInfo struct {
	pid, ppid, session int
	comm, state        string
}

func readProcs() map[int]procInfo {
	out := map[int]procInfo{}
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
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 4 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		sess, _ := strconv.Atoi(f[3])
		out[pid] = procInfo{pid: pid, ppid: ppid, session: sess, comm: s[open+1 : close], state: f[0]}
	}
	return out
}

// descendants are the live processes whose parent chain leads to root, or
// that belong to one of the sessions (a job that was reparented still has
// its session id).
func descendants(root int, sessions map[int]bool) map[int]procInfo {
	procs := readProcs()
	out := map[int]procInfo{}
	for pid, p := range procs {
		if p.state == "Z" || pid == root {
			continue
		}
		if sessions[p.session] {
			out[pid] = p
			continue
		}
		for q, hops := p, 0; hops < 64; hops++ {
			if q.ppid == root {
				out[pid] = p
				break
			}
			next, ok := procs[q.ppid]
			if !ok || q.ppid <= 1 {
				break
			}
			q = next
		}
	}
	return out
}

// TestTerminalsLeaveNoProcesses starts background and foreground jobs in
// bash and zsh terminals, ends the session (shutdown+exit, or end of stdin)
// and checks that the bridge exits within 2 s leaving no process of those
// terminals behind.
func TestTerminalsLeaveNoProcesses(t *testing.T) {
	shells := []string{"bash"}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	requireTool(t, "zsh", "apt-get install zsh")
	shells = append(shells, "zsh")
	for _, end := range []string{"shutdown", "stdin EOF"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			b := startBridge(t, "--workspace", t.TempDir())
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
				for _, cmd := range []string{"sleep 1000 &", "sleep 1000"} {
					var r struct{ Running bool }
					err := b.client.Call(ctx, "terminal/run", map[string]any{"terminalId": open.TerminalID, "command": cmd, "noOutputTimeoutMs": 200}, &r)
					if err != nil {
						t.Fatalf("%s: %s: %v", shell, cmd, err)
					}
				}
			}
			// Both sleeps of both shells are up (the background one may
			// take a moment to exec).
			var before map[int]procInfo
			deadline := time.Now().Add(5 * time.Second)
			for {
				before = descendants(b.cmd.Process.Pid, sessions)
				sleeps := 0
				for _, p := range before {
					if p.comm == "sleep" {
						sleeps++
					}
				}
				if sleeps == 2*len(shells) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("want %d sleeps under the bridge, have %v", 2*len(shells), before)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Cleanup(func() { // never leak sleeps, even when failing
				for pid := range descendants(b.cmd.Process.Pid, sessions) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})

			start := time.Now()
			if end == "shutdown" {
				if err := b.client.Call(ctx, "shutdown", nil, nil); err != nil {
					t.Fatal(err)
				}
				b.client.Notify("exit", nil)
			} else {
				b.stdin.Close()
			}
			code, _ := b.wait(t, 5*time.Second)
			took := time.Since(start)
			t.Logf("%s: exited in %v", end, took)
			if want := map[string]int{"shutdown": 0, "stdin EOF": 1}[end]; code != want {
				t.Errorf("exit code %d, want %d", code, want)
			}
			if took > 2*time.Second {
				t.Errorf("took %v to exit, want ≤ 2s", took)
			}
			// What was there before must be gone (zombies waiting for
			// init to reap them count as gone).
			var left []string
			procs := readProcs()
			for pid, p := range before {
				if q, ok := procs[pid]; ok && q.state != "Z" && q.comm == p.comm {
					left = append(left, fmt.Sprintf("%d %s (session %d)", pid, q.comm, q.session))
				}
			}
			for pid, p := range procs {
				if sessions[p.session] && p.state != "Z" {
					left = append(left, fmt.Sprintf("%d %s (session %d)", pid, p.comm, p.session))
				}
			}
			if len(left) > 0 {
				t.Fatalf("processes left after the bridge exited: %v", left)
			}
		})
	}
}
