//go:build unix

package distcheck

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestAgentsWithNPX: the real agents (test/agents: Claude Code, Codex,
// Gemini CLI at their pinned versions), each pointed at the bridge by its
// npx block of extension/src/agents/configs.json as written (`npx -y
// oh-bridge mcp --workspace DIR`), run their scripted scenario over the
// bridge that npx installs from a registry on loopback serving dist/'s
// tarballs, with an empty npm cache: OpenHands' texts reach the model,
// the files land, the long command is given up and stopped, and nothing
// leaves loopback (strace). The scripts are those of TestRealAgents
// (cmd/oh-bridge), which runs the stdio and HTTP blocks; with
// OH_BRIDGE_NPM_REGISTRY set they run the npx one alone.
func TestAgentsWithNPX(t *testing.T) {
	dir, version := distDir(t)
	here(t)
	node := need(t, "node", "install Node.js 20 or newer")
	need(t, "strace", "apt-get install strace (.ci/run installs it)")
	agents := filepath.Join(root, "test", "agents")
	for _, d := range []string{filepath.Join(agents, "node_modules", ".bin"), filepath.Join(root, "test", "node", "node_modules", "vscode-jsonrpc")} {
		if _, err := os.Stat(d); err != nil {
			missing(t, "run `go run github.com/go-task/task/v3/cmd/task@v3.53.1 deps` first (npm ci in test/node and test/agents; the test task does)")
		}
	}
	// The scripts take a bridge for the transports they do not run here.
	bin, err := filepath.Abs(filepath.Join(root, "extension", "bin", here(t).Target, "oh-bridge"))
	if err != nil {
		t.Fatal(err)
	}
	reg := startNPMRegistry(t, npmTarballs(dir, version)...)
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			script, err := filepath.Abs(filepath.Join(agents, agent+".cjs"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, bin, t.TempDir())
			cmd.Env = append(os.Environ(), "OH_BRIDGE_NPM_REGISTRY="+reg.URL)
			out, err := cmd.CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte(" passed, 0 failed")) {
				t.Fatalf("%s: %v\n%s", agent, err, out)
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				t.Log(sc.Text())
			}
		})
	}
}
