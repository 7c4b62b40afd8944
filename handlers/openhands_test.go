//go:build unix

package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

type ohObservation struct {
	Observation struct {
		Observation string `json:"observation"`
		Content     string `json:"content"`
		Cause       *int   `json:"cause"`
		Extras      struct {
			Metadata struct {
				ExitCode int    `json:"exit_code"`
				Prefix   string `json:"prefix"`
				Suffix   string `json:"suffix"`
			} `json:"metadata"`
		} `json:"extras"`
	} `json:"observation"`
}

func ohRun(command string, args map[string]any) map[string]any {
	a := map[string]any{"command": command}
	for k, v := range args {
		a[k] = v
	}
	return map[string]any{"action": map[string]any{"action": "run", "args": a}}
}

func startOH(t *testing.T) (*handlers.Handlers, *rpctest.Client, string) {
	t.Helper()
	t.Setenv("NO_CHANGE_TIMEOUT_SECONDS", "1")
	t.Setenv("HOME", t.TempDir()) // no ~/.bashrc in the agent shell
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	h, c := serve(t, handlers.Config{Roots: []string{ws}})
	if _, err := c.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	return h, c, ws
}

func execute(t *testing.T, c *rpctest.Client, params any) ohObservation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res ohObservation
	if err := c.Call(ctx, "openhands/execute_action", params, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// A cancelled execute_action answers -32800 and stops its command before
// the next action runs: the next command runs at once, and the cancelled
// one does not run on.
func TestOpenHandsCancelStopsTheCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no ~/.bashrc in the agent shell
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	_, c := serve(t, handlers.Config{Roots: []string{ws}})
	if _, err := c.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{"terminal": map[string]any{"streaming": true}}}); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(ws, "after-cancel")
	id, ch, err := c.Start("openhands/execute_action", ohRun("printf 'be%s\\n' gun; sleep 30; touch "+marker, map[string]any{"blocking": true}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AwaitNotification(ctxT(t), "terminal/did_output", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "begun")
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify("$/cancelRequest", map[string]any{"id": id}); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-ch:
		if msg.Error == nil || msg.Error.Code != rpc.CodeRequestCancelled {
			t.Fatalf("cancelled call answered %+v, want -32800", msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to the cancelled call")
	}
	next := execute(t, c, ohRun("echo next", nil))
	if md := next.Observation.Extras.Metadata; md.ExitCode != 0 || strings.TrimSpace(next.Observation.Content) != "next" {
		t.Fatalf("the action after the cancel = %+v, want next with exit code 0", next.Observation)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the cancelled command ran on to its end")
	}
}

// Shutdown kills what the agent shell runs: no orphans.
func TestOpenHandsShutdownKillsTheAgentShell(t *testing.T) {
	h, c, ws := startOH(t)
	pidFile := filepath.Join(ws, "pid")
	obs := execute(t, c, ohRun("sh -c 'echo $$ > "+pidFile+"; exec sleep 300'", nil))
	if obs.Observation.Extras.Metadata.ExitCode != -1 {
		t.Fatalf("sleep should still run: %+v", obs.Observation)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	h.Shutdown(context.Background())
	ohtest.WaitWithin(t, 10*time.Second, fmt.Sprintf("process %d to end with the shutdown", pid), func() bool { return syscall.Kill(pid, 0) != nil })
	var raw json.RawMessage
	if err := c.Call(ctxT(t), "openhands/execute_action", ohRun("echo late", nil), &raw); err == nil {
		t.Errorf("execute_action after shutdown answered %s, want an error", raw)
	}
}

// Bad params name the field.
func TestOpenHandsBadParams(t *testing.T) {
	_, c, _ := startOH(t)
	var raw json.RawMessage
	for _, params := range []any{map[string]any{}, map[string]any{"action": map[string]any{"args": map[string]any{}}}} {
		err := c.Call(ctxT(t), "openhands/execute_action", params, &raw)
		var rerr *rpc.Error
		if err == nil || !asRPC(err, &rerr) || rerr.Code != rpc.CodeInvalidParams {
			t.Errorf("params %v: err = %v, want -32602", params, err)
		}
	}
	obs := execute(t, c, map[string]any{"action": map[string]any{"id": 3, "action": "think", "args": map[string]any{"thought": "x", "extra": 1}}})
	if obs.Observation.Observation != "think" || obs.Observation.Cause == nil || *obs.Observation.Cause != 3 {
		t.Errorf("think = %+v", obs.Observation)
	}
}

func asRPC(err error, target **rpc.Error) bool {
	e, ok := err.(*rpc.Error)
	if ok {
		*target = e
	}
	return ok
}
