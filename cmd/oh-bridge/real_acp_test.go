package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestACPClient drives `oh-bridge acp` with the official ACP TypeScript
// SDK through full prompt turns against OpenHands' own agent-server
// (1.58.2), whose agent's model is scripted (test/node/acp.cjs): the
// client's fs on and off, a rejected permission, a cancel in the middle of
// a command, a cancel during a permission question, display terminals,
// session/list, session/load, session/resume and session/close, and no
// server. The cancel during a question whose interrupt lands late (K)
// runs on the stand-in, which can be made that late every time.
func TestACPClient(t *testing.T) {
	node, dir := nodeClients(t, "@agentclientprotocol/sdk")
	srv := realServer(t, realserver.Latest)
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	os.Mkdir(ws, 0o755)
	s := acpScripts(ws)
	models, servers := map[string]string{}, map[string]*scriptedllm.Server{}
	for _, letter := range []string{"A", "B", "C", "F", "G", "H"} {
		servers[letter] = scriptedllm.Start(t, s[letter]...)
		models[letter] = servers[letter].URL
	}
	// K: the cancel during a question, with the stand-in's late interrupt.
	// The agent's next step is another tool call, and the interrupt acts
	// up to 200 ms late, so the agent could take that step before it
	// lands.
	cancelScript, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo first > " + filepath.Join(ws, "cancel-first.txt")}}},
		{{"tool": "file_editor", "arguments": map[string]any{"command": "create", "path": filepath.Join(ws, "cancel-second.txt"), "file_text": "second\n"}}},
		{{"message": "Done."}},
	}})
	cancelFile := filepath.Join(tmp, "cancel.json")
	os.WriteFile(cancelFile, cancelScript, 0o644)
	c := agentservertest.Start(t, "--script", cancelFile, "--interrupt-delay", "0.2")
	runACPScript(t, node, dir, tmp, map[string]any{"server": srv.URL, "key": srv.Key, "model": scriptedModel,
		"models": models, "ws": ws, "cancelServer": c.URL})
	if line, err := c.WaitLine(`TOOL_RESULT {"tool": "file_editor"`, 0); err == nil {
		t.Errorf("the agent made its second call after the cancel (the stand-in answered it: %s)", line)
	}
	for letter, m := range servers {
		played(t, letter, m)
	}
}

// played checks that the agent asked its model for every turn of the
// script (a request past it has failed the test already).
func played(t *testing.T, name string, m *scriptedllm.Server) {
	t.Helper()
	select {
	case <-m.Done():
	default:
		t.Errorf("%s: the agent stopped before the end of its model's script (%d requests)", name, len(m.Requests()))
	}
}

// TestACPClientCanvas runs the session's life with the SDK against 1.49.1,
// the agent-server Agent Canvas starts: a prompt whose calls are asked
// about, a cancel in the middle of a command, then session/load,
// session/list and session/resume.
func TestACPClientCanvas(t *testing.T) {
	node, dir := nodeClients(t, "@agentclientprotocol/sdk")
	srv := realServer(t, realserver.Canvas)
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	os.Mkdir(ws, 0o755)
	a := scriptedllm.Start(t, acpScripts(ws)["A"]...)
	runACPScript(t, node, dir, tmp, map[string]any{"server": srv.URL, "key": srv.Key, "model": scriptedModel,
		"models": map[string]string{"A": a.URL}, "ws": ws, "scenarios": []string{"A"}})
	played(t, "A", a)
}

func runACPScript(t *testing.T, node, dir, tmp string, config map[string]any) {
	t.Helper()
	b, _ := json.Marshal(config)
	file := filepath.Join(tmp, "acp-config.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	runClientFor(t, exec.Command(node, filepath.Join(dir, "acp.cjs"), bin, file), 4*time.Minute)
}

// acpScripts are the models of acp.cjs's scenarios, by letter. Each
// conversation's first prompt has its agent read the notes (with a
// thought), edit them, run a command and write a plan, then answer; A's
// and G's second runs a long command that is cancelled, and A's third
// (after session/resume, in another bridge) runs a command and answers.
func acpScripts(ws string) map[string][]scriptedllm.Turn {
	notes := filepath.Join(ws, "notes.txt")
	view := offered(call("file_editor", map[string]any{"command": "view", "path": notes}))
	view.Content = "Look at the notes first."
	fix := []scriptedllm.Turn{
		view,
		call("file_editor", map[string]any{"command": "str_replace", "path": notes, "old_str": "alpha", "new_str": "beta"}),
		terminalCall("echo out-$((6*7)) | tee ran.txt"),
		call("task_tracker", map[string]any{"command": "plan", "task_list": []map[string]any{
			{"title": "Read the notes", "status": "done"}, {"title": "Run the tests", "status": "in_progress"}}}),
		says("Done."),
	}
	long := terminalCall("echo started; sleep 31.5; echo never")
	return map[string][]scriptedllm.Turn{
		"A": joined(fix, []scriptedllm.Turn{long, terminalCall("echo resumed > resumed.txt"), says("After the long one.")}),
		"B": fix,
		"C": fix,
		// The person cancels the turn while asked about the command:
		// the agent takes no step after it.
		"F": fix[:3],
		"G": joined(fix, []scriptedllm.Turn{long}),
		"H": fix,
	}
}
