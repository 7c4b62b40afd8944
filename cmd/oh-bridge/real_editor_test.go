package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestEditorFaceSteersTheRealServer drives the editor's face with
// vscode-jsonrpc against OpenHands' own agent-server 1.58.2
// (test/node/editor_real.cjs): confirmation mode with an action allowed and
// one rejected, pause while a command runs, then resume, and interrupt
// while a command runs, then a message.
func TestEditorFaceSteersTheRealServer(t *testing.T) {
	node, dir := nodeClients(t, "vscode-jsonrpc")
	srv := realServer(t, realserver.Latest)
	rejected := func(r *scriptedllm.Request) error {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.Contains(m.Text(), "rejected") {
				return nil
			}
		}
		return fmt.Errorf("the agent's model was not told of the rejection")
	}
	models := map[string]*scriptedllm.Server{
		"C": scriptedllm.Start(t,
			offered(terminalCall("echo confirmed-$((3*3)) > confirmed.txt")),
			terminalCall("echo rejected > rejected.txt"),
			scriptedllm.Turn{Check: rejected, Content: "The second was rejected."},
		),
		"P": scriptedllm.Start(t,
			terminalCall("sleep 9.25; echo one > one.txt"),
			terminalCall("echo two > two.txt"),
			says("Both ran."),
		),
		"I": scriptedllm.Start(t,
			terminalCall("echo started; sleep 61.5; echo never"),
			says("Stopped as asked."),
		),
	}
	urls := map[string]string{}
	for k, m := range models {
		urls[k] = m.URL
	}
	tmp := t.TempDir()
	b, _ := json.Marshal(map[string]any{"server": srv.URL, "key": srv.Key, "model": scriptedModel, "models": urls, "tmp": tmp})
	config := filepath.Join(tmp, "config.json")
	if err := os.WriteFile(config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	runClientFor(t, exec.Command(node, filepath.Join(dir, "editor_real.cjs"), bin, config), 3*time.Minute)
	for k, m := range models {
		played(t, k, m)
	}
}
