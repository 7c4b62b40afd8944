// Command demo shows oh-bridge serving an OpenHands agent, end to end and
// offline. It starts a stand-in OpenHands server with a scripted agent,
// starts the bridge on a temp workspace, asks it to connect (the bridge
// dials only then), and prints the conversation as the editor receives it.
//
// The agent creates a small project, runs its failing tests, fixes the
// failure with str_replace and runs them again. The server is an
// agent-server (fixtures/peers/agent_server_standin.py) whose agent works
// with the bridge's MCP tools.
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

	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

func main() {
	bridge := flag.String("bridge", "bin/oh-bridge", "the oh-bridge binary")
	keep := flag.Bool("keep", false, "keep the temp workspace")
	flag.Parse()
	if _, err := runV1(*bridge, *keep, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// The project the agent writes: its add is wrong, so one test fails until
// the str_replace fix.
const (
	calcPy     = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
	testCalcPy = "import unittest\n\nfrom calc import add, mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"
	task       = "Create a small calculator with tests, and make the tests pass."
)

// demo is a temp workspace and a bridge started on it.
type demo struct {
	ws     string
	out    io.Writer
	cmd    *exec.Cmd
	client *rpctest.Client
	ctx    context.Context
	cancel context.CancelFunc
	keep   bool
	closed bool
}

func newWorkspace(out io.Writer, keep bool) (*demo, error) {
	ws, err := os.MkdirTemp("", "oh-bridge-demo-")
	if err != nil {
		return nil, err
	}
	ws, _ = filepath.EvalSymlinks(ws)
	d := &demo{ws: ws, out: out, keep: keep}
	d.ctx, d.cancel = context.WithTimeout(context.Background(), 3*time.Minute)
	return d, nil
}

// writeScript writes the stand-in's script where the agent will not see it.
func (d *demo) writeScript(v any) (string, error) {
	path := filepath.Join(d.ws, ".demo-script.json")
	b, _ := json.Marshal(v)
	return path, os.WriteFile(path, b, 0o600)
}

// startBridge starts the bridge on the workspace, as an editor does.
func (d *demo) startBridge(bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no bridge binary at %s; build it with `go build -o bin/oh-bridge ./cmd/oh-bridge`", bin)
	}
	fmt.Fprintf(d.out, "== starting oh-bridge on workspace %s\n", d.ws)
	d.cmd = exec.Command(bin, "--stdio", "--workspace", d.ws, "--log-level", "warn")
	stdin, _ := d.cmd.StdinPipe()
	stdout, _ := d.cmd.StdoutPipe()
	d.cmd.Stderr = os.Stderr
	// The agent's shell should not run this machine's slow prompt hooks.
	d.cmd.Env = append(os.Environ(), "HOME="+d.ws)
	if err := d.cmd.Start(); err != nil {
		return err
	}
	d.client = rpctest.NewProcessClient(stdout, stdin)
	if _, err := d.client.Initialize(d.ctx, nil); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

// printEvents shows the conversation as the editor receives it, until
// done is closed or last says an event was the last.
func (d *demo) printEvents(done <-chan struct{}, describe func(map[string]any) string, last func(map[string]any) bool) {
	for {
		m, err := d.client.AwaitNotification(d.ctx, "openhands/did_receive_event", nil)
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
		fmt.Fprint(d.out, describe(p.Event))
		if last != nil && last(p.Event) {
			return
		}
	}
}

// close stops the bridge as an editor does, and removes the workspace
// unless asked to keep it.
func (d *demo) close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	defer d.cancel()
	var err error
	if d.cmd != nil && d.cmd.Process != nil {
		d.client.Call(d.ctx, "shutdown", nil, nil)
		d.client.Notify("exit", nil)
		err = d.cmd.Wait()
	}
	if d.keep {
		fmt.Fprintf(d.out, "\nworkspace kept at %s\n", d.ws)
	} else {
		os.RemoveAll(d.ws)
	}
	return err
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 14 {
		lines = append(lines[:14], fmt.Sprintf("… (%d more lines)", len(lines)-14))
	}
	return "         │ " + strings.Join(lines, "\n         │ ") + "\n"
}
