package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestMCPExtraToolsFlag: `oh-bridge mcp` serves OpenHands' tools alone
// unless --extra-tools names more; with open_file it serves it, and on
// stdio, with no editor, open_file says there is none. An unknown name
// stops it at once, saying which there are.
func TestMCPExtraToolsFlag(t *testing.T) {
	out, err := exec.Command(bin, "mcp", "--extra-tools", "open_file,nope").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 ||
		strings.TrimSpace(string(out)) != `oh-bridge mcp: --extra-tools: there is no extra tool "nope": the extra tools are open_file` {
		t.Errorf("an unknown extra tool: %v %q", err, out)
	}

	ctx := context.Background()
	serve := func(args ...string) (*mcp.ClientSession, string) {
		t.Helper()
		ws, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"mcp", "--workspace", ws, "--log-level", "error"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		c, err := mcp.NewClient(&mcp.Implementation{Name: "extra-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, ws
	}
	names := func(c *mcp.ClientSession) []string {
		t.Helper()
		list, err := c.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	c, _ := serve()
	if got, want := names(c), []string{"file_editor", "task_tracker", "terminal"}; !slices.Equal(got, want) {
		t.Errorf("by default, tools %q, want %q", got, want)
	}
	c, ws := serve("--extra-tools", "open_file")
	if got, want := names(c), []string{"file_editor", "open_file", "task_tracker", "terminal"}; !slices.Equal(got, want) {
		t.Errorf("with --extra-tools open_file, tools %q, want %q", got, want)
	}
	path := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "open_file", Arguments: map[string]any{"path": path, "line": 1}})
	want := "There is no editor to show " + path + ":1 in: the tools are served without one (oh-bridge mcp on stdio). Read the file with file_editor's view command instead."
	if err != nil || !r.IsError || len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("open_file on stdio: %v %+v, want the error %q", err, r, want)
	}
}

// TestEditorShowsOpenFile: the editor's bridge started with --extra-tools
// open_file lists it in its capabilities and serves it on its MCP
// endpoint; a call asks the editor, with editor/show_file, to show the
// file at the line.
func TestEditorShowsOpenFile(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, "--workspace", ws, "--extra-tools", "open_file")
	ctx := ctxT(t)
	res, err := b.client.Initialize(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		Capabilities struct {
			MCP struct {
				Tools []string `json:"tools"`
			} `json:"mcp"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		t.Fatal(err)
	}
	if got, want := init.Capabilities.MCP.Tools, []string{"terminal", "file_editor", "task_tracker", "open_file"}; !slices.Equal(got, want) {
		t.Errorf("capabilities.mcp.tools = %q, want %q", got, want)
	}
	var ep struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	if err := b.client.Call(ctx, "mcp/start", nil, &ep); err != nil {
		t.Fatal(err)
	}
	transport := &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: &http.Client{Transport: ohtest.Bearer(ep.Token, nil)}}
	c, err := mcp.NewClient(&mcp.Implementation{Name: "open-file-test", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "open_file", Arguments: map[string]any{"path": path, "line": 2}})
	if want := "Showed " + path + ":2 to the user in their editor."; err != nil || r.IsError || len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("open_file: %v %+v, want %q", err, r, want)
	}
	n, err := b.client.AwaitNotification(ctx, "editor/show_file", nil)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Path string `json:"path"`
		Line int    `json:"line"`
	}
	if err := json.Unmarshal(n.Params, &shown); err != nil || shown.Path != path || shown.Line != 2 {
		t.Errorf("editor/show_file %s, want path %s at line 2", n.Params, path)
	}
}
