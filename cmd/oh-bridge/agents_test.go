//go:build unix

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRealAgents drives the agents' own CLIs, installed from npm at
// pinned versions (test/agents/package.json), against `oh-bridge mcp` and
// the editor's HTTP endpoint, each with a scripted model server of ours on
// 127.0.0.1, under strace so that nothing may leave loopback
// (test/agents/*.cjs). The configuration blocks they apply are the ones
// the extension and docs hand out (extension/src/agents/configs.json).
func TestRealAgents(t *testing.T) {
	node, _ := nodeClients(t, "vscode-jsonrpc")
	requireTool(t, "strace", "apt-get install strace")
	dir := filepath.Join(repoRoot(t), "test", "agents")
	if !isDir(filepath.Join(dir, "node_modules", ".bin")) {
		msg := "run `npm ci --prefix test/agents` first (the Taskfile's test task does)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(dir, agent+".cjs")
			if _, err := os.Stat(script); err != nil {
				t.Fatalf("%s: %v", script, err)
			}
			runClientFor(t, exec.Command(node, script, bin, t.TempDir()), agentTimeout)
		})
	}
}
