//go:build unix

package distcheck

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/dist"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestLauncherPassesThrough: the launcher ends as the bridge ends. A bad
// flag's exit code is the bridge's own. A SIGTERM sent to the launcher
// alone, and a SIGINT sent to its whole process group (Ctrl-C in a
// terminal), each reach the bridge once: it shuts down cleanly and
// exits 128 plus the signal's number (a second signal would end it at
// once, killed by the signal), and the launcher exits with that code. A
// bridge killed by a signal leaves the launcher killed by the same.
func TestLauncherPassesThrough(t *testing.T) {
	dir, version := distDir(t)
	p := here(t)
	project, env := npmInstall(t, nil, filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version)), filepath.Join(dir, dist.NPMTarball(dist.NPMName, version)))
	node := need(t, "node", "install Node.js 18 or newer")
	launcher := filepath.Join(project, "node_modules", ".bin", "oh-bridge")
	binary := filepath.Join(project, "node_modules", p.NPMPackage(), "bin", "oh-bridge")

	// One home for both, which the usage names.
	env = append(env, "HOME="+t.TempDir())
	direct := run(t, time.Minute, project, env, binary, "--no-such-flag")
	through := run(t, time.Minute, project, env, launcher, "--no-such-flag")
	if direct.code == 0 || through.code != direct.code || through.stderr != direct.stderr {
		t.Errorf("a bad flag: through the launcher %s\ndirectly %s", through, direct)
	}

	for _, c := range []struct {
		name string
		to   string // "launcher", "group" (its process group) or "bridge"
		sig  syscall.Signal
	}{
		{"SIGTERM to the launcher", "launcher", syscall.SIGTERM},
		{"SIGINT to the process group", "group", syscall.SIGINT},
		{"SIGKILL to the bridge", "bridge", syscall.SIGKILL},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(node, launcher, "mcp", "--workspace", t.TempDir(), "--log-level", "error")
			cmd.Env = append(baseEnv(t), env...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			bridge := awaitChild(t, cmd.Process.Pid, binary)
			// The bridge answers initialize once it serves, and so has its
			// signal handlers.
			answered := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(stdout).ReadString('\n')
				answered <- line
			}()
			io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"distcheck","version":"1"}}}`+"\n")
			select {
			case line := <-answered:
				if !strings.Contains(line, `"id":1`) {
					t.Fatalf("initialize answered %q", line)
				}
			case <-time.After(30 * time.Second):
				syscall.Kill(bridge, syscall.SIGKILL)
				t.Fatal("no answer to initialize within 30 s")
			}
			target := map[string]int{"launcher": cmd.Process.Pid, "group": -cmd.Process.Pid, "bridge": bridge}[c.to]
			if err := syscall.Kill(target, c.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				syscall.Kill(bridge, syscall.SIGKILL)
				t.Fatalf("the launcher did not end within 30 s of %s", c.sig)
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if c.to == "bridge" {
				// The bridge cannot catch SIGKILL: the launcher ends killed
				// by it too, as a shell would see the bridge end.
				if !ws.Signaled() || ws.Signal() != c.sig {
					t.Errorf("the launcher ended with %v; want it killed by the signal that killed the bridge (%v)", cmd.ProcessState, c.sig)
				}
				return
			}
			if want := 128 + int(c.sig); ws.Signaled() || ws.ExitStatus() != want {
				t.Errorf("the launcher ended with %v (signaled %v); want exit %d, the bridge's after one %s", cmd.ProcessState, ws.Signaled(), want, c.sig)
			}
		})
	}
}

// awaitChild waits for the process running program under parent and
// returns its pid.
func awaitChild(t *testing.T, parent int, program string) int {
	t.Helper()
	return ohtest.Poll(t, 30*time.Second, fmt.Sprintf("a process running %s under %d", program, parent), func() (int, bool) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
				continue
			}
			if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == program {
				pid, _ := strconv.Atoi(e.Name())
				return pid, true
			}
		}
		return 0, false
	})
}
