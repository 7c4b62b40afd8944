package ohactions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/ohactions"
)

// TestShellExitIsSaid: after a command ends the shell, the next run
// action runs in a new shell, and its observation says so first.
func TestShellExitIsSaid(t *testing.T) {
	rt, _ := newTestRuntime(t)
	run := func(cmd string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		args, _ := json.Marshal(map[string]any{"command": cmd})
		obs, err := rt.Execute(ctx, json.RawMessage(`{"id": 1, "action": "run", "args": `+string(args)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(obs)
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m
	}
	if m := run("exit 3"); strings.Contains(m["content"].(string), "reset") || m["message"] != "Command `exit 3` executed with exit code 3." {
		t.Fatalf("exit 3: %v", m)
	}
	m := run("echo NEXT")
	if want := ohactions.ShellResetText + "\n\nNEXT"; m["content"] != want || m["message"] != "Command `echo NEXT` executed with exit code 0." {
		t.Fatalf("echo NEXT after the shell exited: %v\nwant content %q", m, want)
	}
	if m := run("echo AGAIN"); m["content"] != "AGAIN" {
		t.Fatalf("the command after: %v", m)
	}
}
