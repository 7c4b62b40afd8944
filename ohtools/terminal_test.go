package ohtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/shellint"
)

// TestLongOutputIsTruncatedTwice follows openhands-tools: the command's
// output is cut to 30000 characters in the middle, then the whole
// observation (output plus the lines after it) is cut again to 30000, so
// the text is exactly 30000 characters with the notice twice.
func TestLongOutputIsTruncatedTwice(t *testing.T) {
	a, dir, python := newTestAgent(t)
	obs, err := a.Call(context.Background(), "terminal", json.RawMessage(`{"command": "head -c 40000 /dev/zero | tr '\\0' x"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	const notice = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>"
	tail := "\n[The command completed with exit code 0.]\n[Current working directory: " + dir + "]\n[Python interpreter: " + python + "]\n[Command finished with exit code 0]"
	// available = 30000 - len(notice) = 29887: head 14944, tail 14943.
	head := strings.Repeat("x", 14944)
	want := head + notice + strings.Repeat("x", 14943-len([]rune(tail))) + tail
	got := obs.Text()
	if got != want {
		t.Fatalf("got %d characters (%d notices), want %d:\nhead %q\ntail %q", len([]rune(got)), strings.Count(got, notice), len([]rune(want)), got[:80], got[len(got)-200:])
	}
	if n := len([]rune(got)); n != 30000 {
		t.Errorf("the text is %d characters, want 30000", n)
	}
}

func TestNamedKeys(t *testing.T) {
	a, _, _ := newTestAgent(t)
	ctx := context.Background()
	call := func(args string) string {
		t.Helper()
		obs, err := a.Call(ctx, "terminal", json.RawMessage(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		return obs.Text()
	}
	// od shows the bytes that arrive: the arrow key's escape sequence and
	// Ctrl-A's 001, with the tty in raw mode so nothing is interpreted.
	call(`{"command": "stty raw -echo; head -c 5 | od -An -c; stty sane"}`)
	call(`{"command": "UP", "is_input": true}`)
	got := call(`{"command": "ctrl-a", "is_input": true}`)
	// head -c 5 now has ESC [ A 001 and waits for one more byte.
	if !strings.Contains(got, "no new output") {
		t.Fatalf("after UP and ctrl-a the command should still wait:\n%s", got)
	}
	got = call(`{"command": "TAB", "is_input": true}`)
	if !strings.Contains(got, `033   [   A 001  \t`) {
		t.Fatalf("the keys did not arrive as ESC [ A, Ctrl-A, TAB:\n%s", got)
	}
}

// TestCancelInterrupts: when the caller gives up (MCP's
// notifications/cancelled), the running command is interrupted and the
// terminal is free for the next command.
func TestCancelInterrupts(t *testing.T) {
	a, dir, _ := newTestAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The call's progress says when the command runs: its first line.
	started := make(chan struct{})
	var once sync.Once
	go func() {
		_, err := a.Call(ctx, "terminal", json.RawMessage(`{"command": "echo started; sleep 60; touch `+dir+`/not-interrupted", "timeout": 120}`), func(p ohtools.Progress) {
			if p.Message == "started" {
				once.Do(func() { close(started) })
			}
		})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the call ended before its command started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no progress report of the command's first line")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Call returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return after its context was cancelled")
	}
	obs, err := a.Call(context.Background(), "terminal", json.RawMessage(`{"command": "echo next"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(obs.Text(), "next\n[The command completed with exit code 0.]") {
		t.Fatalf("the terminal is not free after the cancel:\n%s", obs.Text())
	}
	obs, _ = a.Call(context.Background(), "terminal", json.RawMessage(`{"command": "ls not-interrupted"}`), nil)
	if !strings.Contains(obs.Text(), "No such file") {
		t.Fatalf("the cancelled command ran on:\n%s", obs.Text())
	}
}

func TestProgress(t *testing.T) {
	a, _, _ := newTestAgent(t)
	var mu sync.Mutex
	var got []ohtools.Progress
	obs, err := a.Call(context.Background(), "terminal",
		json.RawMessage(`{"command": "for i in 1 2 3 4 5; do echo step $i; sleep 0.5; done", "timeout": 30}`),
		func(p ohtools.Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(obs.Text(), "step 1\nstep 2") {
		t.Fatalf("unexpected output:\n%s", obs.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 {
		t.Fatalf("%d progress reports for a 2.5 s command, want at least 3: %+v", len(got), got)
	}
	sawStep := false
	for i, p := range got {
		if i > 0 && p.Elapsed <= got[i-1].Elapsed {
			t.Errorf("elapsed times do not grow: %v then %v", got[i-1].Elapsed, p.Elapsed)
		}
		sawStep = sawStep || strings.HasPrefix(p.Message, "step ")
	}
	if !sawStep {
		t.Errorf("no report carried the command's last line: %+v", got)
	}
	n := len(got)
	mu.Unlock()
	// A negative can only be bounded: a heartbeat comes after a second of
	// quiet, so a report that outlived the call would come within 1.5 s.
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	if len(got) != n {
		t.Errorf("progress went on after the call returned")
	}
}

func TestForegroundTimeoutCap(t *testing.T) {
	t.Setenv("OH_RUNTIME_IDLE_TIMEOUT_SECONDS", "100")
	a, _, _ := newTestAgent(t)
	obs, err := a.Call(context.Background(), "terminal", json.RawMessage(`{"command": "sleep 1", "timeout": 95}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Refusing to run foreground terminal command with timeout=95s.\n\nThis runtime is subject to idle cleanup after 100s. " +
		"Foreground terminal commands are capped at 90% of that threshold, currently 90s, so commands can return control before " +
		"the runtime is considered idle.\n\nFor long-running work, use a shorter timeout, omit the timeout to use the terminal " +
		"soft-timeout/polling flow, or start the command in the background and poll its log file."
	if !obs.IsError || obs.Text() != want {
		t.Fatalf("got (error %v):\n%s\nwant:\n%s", obs.IsError, obs.Text(), want)
	}
}

// TestMaxWait: a call waits no longer than MaxWait; it answers as after a
// hard timeout of that length and the command runs on.
func TestMaxWait(t *testing.T) {
	fs, _ := ohtest.Workspace(t)
	a, err := ohtools.NewToolbox(ohtools.ToolboxOptions{FS: fs, MaxWait: 1500 * time.Millisecond, ShellMode: shellint.ModeNoRC})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	start := time.Now()
	obs, err := a.Call(context.Background(), "terminal", json.RawMessage(`{"command": "while true; do echo busy; sleep 0.2; done", "timeout": 600}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the call waited %v", d)
	}
	if !strings.HasSuffix(obs.Text(), "\n[The command timed out after 1.5 seconds. "+ohtools.TimeoutMessage+"]") || !strings.HasPrefix(obs.Text(), "busy") {
		t.Fatalf("unexpected answer:\n%s", obs.Text())
	}
	obs, _ = a.Call(context.Background(), "terminal", json.RawMessage(`{"command": "C-c", "is_input": true}`), nil)
	if !strings.Contains(obs.Text(), "[The command completed with exit code 130. CTRL+C was sent.]") {
		t.Fatalf("the command did not run on until C-c:\n%s", obs.Text())
	}
}

// TestShellExitIsSaid: after the shell exits, the next command runs in a
// new shell, and its observation says the session was reset.
func TestShellExitIsSaid(t *testing.T) {
	a, dir, python := newTestAgent(t)
	ctx := context.Background()
	obs, err := a.Call(ctx, "terminal", json.RawMessage(`{"command": "exit 3"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.Text(), "[The command completed with exit code 3.]") || strings.Contains(obs.Text(), "reset") {
		t.Fatalf("exit 3:\n%s", obs.Text())
	}
	obs, err = a.Call(ctx, "terminal", json.RawMessage(`{"command": "echo NEXT"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// OpenHands' TerminalExecutor words a call it ran in a replaced
	// session so.
	want := "Terminal session has been reset. All previous environment variables and session state have been cleared.\n\n" +
		"NEXT\n[The command completed with exit code 0.]\n[Current working directory: " + dir + "]\n[Python interpreter: " + python + "]\n[Command finished with exit code 0]"
	if obs.Text() != want {
		t.Fatalf("echo NEXT after the shell exited:\n%s\nwant:\n%s", obs.Text(), want)
	}
	obs, err = a.Call(ctx, "terminal", json.RawMessage(`{"command": "echo AGAIN"}`), nil)
	if err != nil || !strings.HasPrefix(obs.Text(), "AGAIN\n") {
		t.Fatalf("the command after: %v\n%s", err, obs.Text())
	}
}
