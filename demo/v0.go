package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/oh-bridge/oh-bridge/dial/dialtest"
)

// summaryV0 is how a V0 session ended.
type summaryV0 struct {
	State               string
	LastEventID         int
	PendingObservations int
}

// sessionV0 is the scripted V0 agent's actions.
func sessionV0(ws string) []map[string]any {
	edit := func(args map[string]any) map[string]any {
		args["impl_source"] = "oh_aci"
		return map[string]any{"action": "edit", "args": args}
	}
	run := func(cmd string) map[string]any {
		return map[string]any{"action": "run", "args": map[string]any{"command": cmd, "blocking": true}, "timeout": 60}
	}
	return []map[string]any{
		run("mkdir -p calc && cd calc && pwd"),
		edit(map[string]any{"command": "create", "path": filepath.Join(ws, "calc", "calc.py"), "file_text": calcPy}),
		edit(map[string]any{"command": "create", "path": filepath.Join(ws, "calc", "test_calc.py"), "file_text": testCalcPy}),
		run("python3 -m unittest"),
		edit(map[string]any{"command": "str_replace", "path": filepath.Join(ws, "calc", "calc.py"),
			"old_str": "return a - b", "new_str": "return a + b"}),
		run("python3 -m unittest -v"),
		edit(map[string]any{"command": "view", "path": filepath.Join(ws, "calc")}),
	}
}

// runV0 plays the V0 story: the bridge is the runtime of a V0 server.
func runV0(bin string, keep bool, out io.Writer) (*summaryV0, error) {
	if err := dialtest.Available(); err != nil {
		return nil, err
	}
	d, err := newWorkspace(out, keep)
	if err != nil {
		return nil, err
	}
	defer d.close()
	script, err := d.writeScript(sessionV0(d.ws))
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(out, "== starting the OpenHands V0 stand-in (python-socketio) with a scripted agent")
	peer, err := dialtest.Launch("--script", script)
	if err != nil {
		return nil, err
	}
	defer peer.Stop()
	if err := d.startBridge(bin); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go d.printEvents(done, describeV0, nil)
	fmt.Fprintf(out, "== the bridge dials %s on demand (openhands/connect, protocol v0)\n\n", peer.URL)
	var res struct{ ConversationID string }
	if err := d.client.Call(d.ctx, "openhands/connect", map[string]any{
		"protocol": "v0", "serverUrl": peer.URL, "task": task,
	}, &res); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := peer.WaitLine("SCRIPT_DONE", 2*time.Minute); err != nil {
		return nil, err
	}
	// The server broadcasts the last observation after its ack.
	time.Sleep(300 * time.Millisecond)
	close(done)

	var st summaryV0
	d.client.Call(d.ctx, "openhands/status", nil, &st)
	fmt.Fprintf(out, "\n== done: conversation %s, %d events, %d observations pending, state %s\n",
		res.ConversationID, st.LastEventID+1, st.PendingObservations, st.State)
	return &st, d.close()
}

func describeV0(e map[string]any) string {
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
