//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestMCPSignals: `oh-bridge mcp` ends cleanly on SIGTERM, SIGINT and
// SIGHUP while a call runs: exit 128+signal, the agent's command and its
// nohup job killed, no temporary directory left.
func TestMCPSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			ws, tmp := t.TempDir(), t.TempDir()
			cmd := exec.Command(bin, "mcp", "--workspace", ws, "--log-level", "error")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+t.TempDir())
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			send := func(v any) {
				b, _ := json.Marshal(v)
				stdin.Write(append(b, '\n'))
			}
			send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
			var resp map[string]any
			if err := json.NewDecoder(stdout).Decode(&resp); err != nil {
				t.Fatal(err)
			}
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			pidFile := filepath.Join(ws, "pid")
			send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
				"name": "terminal", "arguments": map[string]any{"command": "nohup sleep 300 >/dev/null 2>&1 & echo $! > " + pidFile + "; sleep 300", "timeout": 600}}})
			pid := waitPID(t, pidFile)
			cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("oh-bridge mcp did not exit after %v", sig)
			}
			if code, want := cmd.ProcessState.ExitCode(), 128+int(sig); code != want {
				t.Errorf("exit code %d after %v, want %d", code, sig, want)
			}
			assertGone(t, pid)
			if left, _ := filepath.Glob(filepath.Join(tmp, "oh-bridge-*")); len(left) > 0 {
				t.Errorf("temporary directories left: %v", left)
			}
		})
	}
}

// TestACPSignals: `oh-bridge acp` ends on SIGTERM, SIGINT and SIGHUP with
// exit 128+signal.
func TestACPSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(bin, "acp")
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			// ACP is one JSON message a line.
			stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"))
			var resp map[string]any
			if err := json.NewDecoder(stdout).Decode(&resp); err != nil || resp["result"] == nil {
				t.Fatalf("initialize: %v %v", resp, err)
			}
			cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("oh-bridge acp did not exit after %v", sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != 128+int(sig) {
				t.Errorf("exit code %d after %v, want %d", code, sig, 128+int(sig))
			}
		})
	}
}

// waitPID waits for a command to write its pid to file.
func waitPID(t *testing.T, file string) int {
	t.Helper()
	return ohtest.Poll(t, 10*time.Second, "the command to start (its pid in "+file+")", func() (int, bool) {
		var pid int
		if b, err := os.ReadFile(file); err == nil && len(bytes.TrimSpace(b)) > 0 {
			fmt.Sscanf(string(b), "%d", &pid)
			return pid, true
		}
		return 0, false
	})
}

// assertGone waits up to 3 s for pid to be gone (or a zombie); one that
// outlives the wait is killed.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ohtest.WaitWithin(t, 3*time.Second, fmt.Sprintf("process %d to end with the bridge", pid), func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || bytes.Contains(b, []byte(") Z "))
	})
}
