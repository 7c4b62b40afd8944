//go:build unix

package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/session"
)

// asker plays the person answering permission prompts.
type asker struct {
	mu      sync.Mutex
	asked   []session.PermissionRequest
	answers map[string]string // by kind; "" cancels
	err     error
}

func (a *asker) ask(ctx context.Context, r session.PermissionRequest) (session.PermissionOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r)
	return session.PermissionOutcome{OptionID: a.answers[r.Kind]}, a.err
}

func TestPermissions(t *testing.T) {
	p := &asker{answers: map[string]string{"execute": "allow_always", "edit": "reject_once", "read": "allow_once"}}
	s, dir := newSession(t, session.Options{AskPermission: p.ask})
	a, err := s.NewAgent(session.AgentOptions{Name: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(tool, args string) string {
		t.Helper()
		obs, err := a.Call(ctx, tool, json.RawMessage(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		return obs.Text()
	}
	if got := call("terminal", `{"command": "echo one"}`); !strings.HasPrefix(got, "one\n") {
		t.Fatalf("an allowed command: %s", got)
	}
	call("terminal", `{"command": "echo two"}`)
	if got := call("file_editor", `{"command": "create", "path": "`+dir+`/x.txt", "file_text": "x"}`); got != "Action rejected: User rejected the action" {
		t.Fatalf("a rejected edit: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the rejected edit was made")
	}
	call("task_tracker", `{"command": "view"}`)
	call("file_editor", `{"command": "view", "path": "`+dir+`"}`)
	call("file_editor", `{"command": "view", "path": "`+dir+`"}`)
	var kinds []string
	for _, r := range p.asked {
		kinds = append(kinds, r.Kind+":"+r.Title)
		if r.Agent != "tester" {
			t.Errorf("the prompt does not say who asks: %+v", r)
		}
	}
	want := []string{"execute:run `echo one`", "edit:create " + dir + "/x.txt", "read:view " + dir, "read:view " + dir}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Fatalf("asked %v\nwant  %v\n(allow always covers later commands; the task list asks nothing; allow once asks again)", kinds, want)
	}
	if info := a.Info(); info.Calls != 6 || info.Rejected != 1 || info.TerminalID != "agent-1" {
		t.Fatalf("agent info %+v", info)
	}

	// A prompt that cannot be shown fails the call in words, and runs nothing.
	p.err = errors.New("the editor went away")
	obs, err := a.Call(ctx, "file_editor", json.RawMessage(`{"command": "view", "path": "`+dir+`"}`), nil)
	if err != nil || !obs.IsError || obs.Text() != "could not ask the user for permission: the editor went away" {
		t.Fatalf("got %v %v", obs, err)
	}
}

func TestCloseEndsAgentsTerminals(t *testing.T) {
	var mu sync.Mutex
	states := map[string][]string{}
	s, dir := newSession(t, session.Options{OnTerminalEvent: func(ev session.TerminalEvent) {
		if ev.State != nil {
			mu.Lock()
			states[ev.TerminalID] = append(states[ev.TerminalID], string(ev.State.State))
			mu.Unlock()
		}
	}})
	a, _ := s.NewAgent(session.AgentOptions{})
	b, _ := s.NewAgent(session.AgentOptions{})
	ctx := context.Background()
	pidFile := filepath.Join(dir, "pid")
	go a.Call(ctx, "terminal", json.RawMessage(`{"command": "sleep 300 & echo $! > `+pidFile+`; wait", "timeout": 600}`), nil)
	b.Call(ctx, "terminal", json.RawMessage(`{"command": "true"}`), nil)
	pid := ohtest.Poll(t, 10*time.Second, "the command to start (its pid in "+pidFile+")", func() (int, bool) {
		var pid int
		if data, err := os.ReadFile(pidFile); err == nil {
			json.Unmarshal([]byte(strings.TrimSpace(string(data))), &pid)
		}
		return pid, pid != 0
	})
	t.Cleanup(func() {
		if t.Failed() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if n := len(s.Agents()); n != 2 {
		t.Fatalf("%d agents, want 2", n)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Close(cctx); err != nil {
		t.Fatal(err)
	}
	ohtest.WaitWithin(t, 3*time.Second, fmt.Sprintf("the agent's command (pid %d) to end with the session", pid), func() bool {
		return syscall.Kill(pid, 0) != nil
	})
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"agent-1", "agent-2"} {
		if st := states[id]; len(st) == 0 || st[len(st)-1] != "dead" {
			t.Errorf("terminal %s did not end: %v", id, st)
		}
	}
	if _, err := s.NewAgent(session.AgentOptions{}); err == nil {
		t.Error("a closed session made an agent")
	}
}
