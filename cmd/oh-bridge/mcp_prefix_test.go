package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cliMCPConfig is the CLI's ~/.openhands/mcp.json for the bridge's tools,
// as docs/openhands-v1.md gives it: the CLI always has its own terminal,
// file_editor and task_tracker, so the bridge's are served as
// bridge_terminal, … (a single server's tools keep their names).
const cliMCPConfig = `{
  "mcpServers": {
    "oh-bridge": {
      "command": "oh-bridge",
      "args": ["mcp", "--tool-prefix", "bridge_"]
    }
  }
}
`

// TestDocsShowTheCLIConfig: docs/openhands-v1.md gives the CLI the
// mcp.json TestRealCLI runs it with.
func TestDocsShowTheCLIConfig(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "openhands-v1.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```json\n"+cliMCPConfig+"```") {
		t.Errorf("docs/openhands-v1.md does not show the CLI's mcp.json as TestRealCLI writes it:\n%s", cliMCPConfig)
	}
}

// TestMCPToolPrefixFlag: `oh-bridge mcp --tool-prefix bridge_` serves
// bridge_terminal, … and runs them; a prefix a model API would refuse
// stops it at once, saying why.
func TestMCPToolPrefixFlag(t *testing.T) {
	out, err := exec.Command(bin, "mcp", "--tool-prefix", "bridge.").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 ||
		strings.TrimSpace(string(out)) != `oh-bridge mcp: tool prefix "bridge." has '.': use letters, digits, _ and - only, as model APIs take in a tool's name` {
		t.Errorf("a bad prefix: %v %q", err, out)
	}

	ws := t.TempDir()
	cmd := exec.Command(bin, "mcp", "--tool-prefix", "bridge_", "--workspace", ws, "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	ctx := context.Background()
	c, err := mcp.NewClient(&mcp.Implementation{Name: "prefix-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"bridge_file_editor", "bridge_task_tracker", "bridge_terminal"}; !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "bridge_terminal", Arguments: map[string]any{"command": "echo prefixed"}})
	if err != nil || r.IsError || len(r.Content) == 0 || !strings.HasPrefix(r.Content[0].(*mcp.TextContent).Text, "prefixed\n") {
		t.Errorf("bridge_terminal: %v %+v", err, r)
	}
}
