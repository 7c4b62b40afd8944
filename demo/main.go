// Command demo shows oh-bridge serving an OpenHands agent, end to end and
// offline. It starts the OpenHands stand-in server
// (fixtures/peers/openhands_standin.py) with a scripted agent session,
// starts the bridge on a temp workspace, asks it to connect (the bridge
// dials only then), and prints every action and observation as it
// happens.
//
// Usage: go run ./demo [-bridge bin/oh-bridge] [-keep]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/dial/dialtest"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

func main() {
	bridge := flag.String("bridge", "bin/oh-bridge", "the oh-bridge binary")
	keep := flag.Bool("keep", false, "keep the temp workspace")
	flag.Parse()
	if _, err := run(*bridge, *keep, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// summary is how the session ended.
type summary struct {
	State               string
	LastEventID         int
	PendingObservations int
}

// agentSession is what the scripted agent does: create a small project,
// run its tests, fix the failure with str_replace, run them again.
func agentSession(ws string) []map[string]any {
	edit := func(args map[string]any) map[string]any {
		args["impl_source"] = "oh_aci"
		return map[string]any{"action": "edit", "args": args}
	}
	run := func(cmd string) map[string]any {
		return map[string]any{"action": "run", "args": map[string]any{"command": cmd, "blocking": true}, "timeout": 60}
	}
	return []map[string]any{
		run("mkdir -p calc && cd calc && pwd"),
		edit(map[string]any{"command": "create", "path": filepath.Join(ws, "calc", "calc.py"),
			"file_text": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"}),
		edit(map[string]any{"command": "create", "path": filepath.Join(ws, "calc", "test_calc.py"),
			"file_text": "import unittest\n\nfrom calc import add, mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"}),
		run("python3 -m unittest"),
		edit(map[string]any{"command": "str_replace", "path": filepath.Join(ws, "calc", "calc.py"),
			"old_str": "return a - b", "new_str": "return a + b"}),
		run("python3 -m unittest -v"),
		edit(map[string]any{"command": "view", "path": filepath.Join(ws, "calc")}),
	}
}

func run(bridgeBin string, keep bool, out io.Writer) (*summary, error) {
	if err := dialtest.Available(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(bridgeBin); err != nil {
		return nil, fmt.Errorf("no bridge binary at %s; build it with `go build -o bin/oh-bridge ./cmd/oh-bridge`", bridgeBin)
	}
	ws, err := os.MkdirTemp("", "oh-bridge-demo-")
	if err != nil {
		return nil, err
	}
	ws, _ = filepath.EvalSymlinks(ws)
	if keep {
		defer fmt.Fprintf(out, "\nworkspace kept at %s\n", ws)
	} else {
		defer os.RemoveAll(ws)
	}
	script := filepath.Join(ws, ".demo-script.json")
	b, _ := json.Marshal(agentSession(ws))
	if err := os.WriteFile(script, b, 0o600); err != nil {
		return nil, err
	}

	fmt.Fprintln(out, "== starting the OpenHands stand-in (python-socketio) with a scripted agent")
	peer, err := dialtest.Launch("--script", script)
	if err != nil {
		return nil, err
	}
	defer peer.Stop()

	fmt.Fprintf(out, "== starting oh-bridge on workspace %s\n", ws)
	cmd := exec.Command(bridgeBin, "--stdio", "--workspace", ws, "--log-level", "warn")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	// The agent's shell should not run this machine's slow prompt hooks.
	cmd.Env = append(os.Environ(), "HOME="+ws)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Process.Kill()
	client := rpctest.NewProcessClient(stdout, stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := client.Initialize(ctx, nil); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}

	done := make(chan struct{})
	go printEvents(ctx, client, done, out)
	fmt.Fprintf(out, "== the bridge dials %s on demand (openhands/connect)\n\n", peer.URL)
	var res struct{ ConversationID string }
	if err := client.Call(ctx, "openhands/connect", map[string]any{
		"protocol":  "v0",
		"serverUrl": peer.URL,
		"task":      "Create a small calculator with tests, and make the tests pass.",
	}, &res); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := peer.WaitLine("SCRIPT_DONE", 2*time.Minute); err != nil {
		return nil, err
	}
	// The server broadcasts the last observation after its ack.
	time.Sleep(300 * time.Millisecond)
	close(done)

	var st summary
	client.Call(ctx, "openhands/status", nil, &st)
	fmt.Fprintf(out, "\n== done: conversation %s, %d events, %d observations pending, state %s\n",
		res.ConversationID, st.LastEventID+1, st.PendingObservations, st.State)
	client.Call(ctx, "shutdown", nil, nil)
	client.Notify("exit", nil)
	return &st, cmd.Wait()
}

// printEvents shows the conversation as the editor receives it.
func printEvents(ctx context.Context, c *rpctest.Client, done <-chan struct{}, out io.Writer) {
	for {
		m, err := c.AwaitNotification(ctx, "openhands/did_receive_event", nil)
		if err != nil {
			return
		}
		select {
		case <-done:
			return
		default:
		}
		var p struct{ Event map[string]any }
		json.Unmarshal(m.Params, &p)
		fmt.Fprint(out, describe(p.Event))
	}
}

func describe(e map[string]any) string {
	args, _ := e["args"].(map[string]any)
	extras, _ := e["extras"].(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	switch {
	case e["action"] == "message":
		return fmt.Sprintf("user   ▸ %s\n", str(args, "content"))
	case e["action"] == "run":
		return fmt.Sprintf("agent  ▸ run: %s\n", str(args, "command"))
	case e["action"] == "edit":
		return fmt.Sprintf("agent  ▸ edit %s %s\n", str(args, "command"), str(args, "path"))
	case e["action"] != nil:
		return fmt.Sprintf("agent  ▸ %v\n", e["action"])
	case e["observation"] == "run":
		meta, _ := extras["metadata"].(map[string]any)
		return fmt.Sprintf("bridge ◂ exit %v in %v\n%s", meta["exit_code"], meta["working_dir"], indent(str(e, "content")))
	case e["observation"] != nil:
		return fmt.Sprintf("bridge ◂ %v\n%s", e["observation"], indent(str(e, "content")))
	}
	return ""
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 14 {
		lines = append(lines[:14], fmt.Sprintf("… (%d more lines)", len(lines)-14))
	}
	return "         │ " + strings.Join(lines, "\n         │ ") + "\n"
}
