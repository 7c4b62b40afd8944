// Command demo shows oh-bridge serving an OpenHands agent, end to end and
// offline. It starts OpenHands' agent-server, starts the bridge on a temp
// workspace, asks it to connect (the bridge dials only then), and prints
// the conversation as the editor receives it.
//
// The agent creates a small project, runs its failing tests, fixes the
// failure with str_replace and runs them again, with the bridge's MCP
// tools. The agent-server is the real one (openhands-agent-server 1.58.2,
// installed by `task openhands`), whose agent's LLM is a scripted model on
// 127.0.0.1 that answers with the story's tool calls; where it is not
// installed, the stand-in (fixtures/peers/agent_server_standin.py) with a
// scripted agent plays it. The demo says which.
//
// Usage: go run ./demo [-bridge bin/oh-bridge] [-server auto|real|stand-in] [-lock agent-server-1.58] [-keep]
// (go run ./demo -installed only says whether the real one is installed).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

func main() {
	bridge := flag.String("bridge", "bin/oh-bridge", "the oh-bridge binary")
	server := flag.String("server", "auto", "the agent-server: real (OpenHands' own, from `task openhands`), stand-in, or auto (real when installed)")
	lock := flag.String("lock", realserver.Latest, "the real agent-server's lock file in test/openhands (agent-server-1.49 is 1.49.1)")
	keep := flag.Bool("keep", false, "keep the temp workspace")
	installed := flag.Bool("installed", false, "only say whether the real agent-server of -lock is installed: exit 0 if it is, 1 if not (task demo installs the stand-in's packages when not)")
	flag.Parse()
	if *installed {
		if _, err := realserver.Venv(*lock); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if _, err := run(*bridge, *server, *lock, *keep, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run plays the story with the agent-server chosen.
func run(bin, server, lock string, keep bool, out io.Writer) (*summaryV1, error) {
	switch server {
	case "real":
		return runReal(bin, lock, keep, out)
	case "stand-in":
		return runStandIn(bin, keep, out)
	case "auto":
		_, err := realserver.Venv(lock)
		var missing *realserver.NotInstalledError
		if errors.As(err, &missing) {
			fmt.Fprintf(out, "== OpenHands' agent-server is not installed here (%v)\n== so the stand-in plays it\n", err)
			return runStandIn(bin, keep, out)
		} else if err != nil {
			return nil, err
		}
		return runReal(bin, lock, keep, out)
	}
	return nil, fmt.Errorf("-server %q: use real, stand-in or auto", server)
}

// The project the agent writes: its add is wrong, so one test fails until
// the str_replace fix.
const (
	calcPy     = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
	testCalcPy = "import unittest\n\nfrom calc import add, mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"
	task       = "Create a small calculator with tests, and make the tests pass."
	// finishMessage is what the agent says when it is done.
	finishMessage = "The calculator's tests pass: add had a minus, now a plus."
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
	return &demo{ws: ws, out: out, keep: keep}, nil
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
	// The story's clock starts with the bridge: the agent-server is ready.
	d.ctx, d.cancel = context.WithTimeout(context.Background(), 3*time.Minute)
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
func (d *demo) printEvents(done <-chan struct{}, describe func(ohevents.Event) string, last func(ohevents.Event) bool) {
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
		var p struct{ Event json.RawMessage }
		json.Unmarshal(m.Params, &p)
		ev, err := ohevents.Decode(p.Event)
		if err != nil {
			continue
		}
		fmt.Fprint(d.out, describe(ev))
		if last != nil && last(ev) {
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
	if d.cancel != nil {
		defer d.cancel()
	}
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
