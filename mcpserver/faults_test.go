//go:build linux

package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/session"
)

// TestFileEditorDiskFaults: file_editor on a full disk and on a read-only
// one answers the SDK's FileEditor text, Python's OSError in it, and says
// the fault's kind, op and unchanged in the result's _meta; the file keeps
// its bytes.
func TestFileEditorDiskFaults(t *testing.T) {
	for _, c := range ohtest.FileEditorFaults {
		t.Run(c.Name, func(t *testing.T) {
			p := ohtest.FaultyFile(t, c.Opts, c.ReadOnly, "a.txt", "alpha\n")
			root := filepath.Dir(p)
			sess, err := session.New(session.Options{Roots: session.Candidates("test", root), ShellMode: session.ShellNoRC})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sess.Close(context.Background()) })
			cl := connect(t, mcpserver.New(sess, mcpserver.Options{Version: "test"}), "faults")
			r, err := cl.CallTool(context.Background(), &mcp.CallToolParams{Name: "file_editor", Arguments: map[string]any{
				"command": "str_replace", "path": p, "old_str": "alpha", "new_str": c.NewStr}})
			if err != nil {
				t.Fatal(err)
			}
			if !r.IsError || !c.Text(p).MatchString(text(r)) {
				t.Errorf("isError %v, text %q; want an error matching %s", r.IsError, text(r), c.Text(p))
			}
			// What the client received, as JSON: _meta["oh-bridge/error"].
			raw, _ := json.Marshal(r.Meta)
			var meta map[string]struct {
				Kind      string `json:"kind"`
				Op        string `json:"op"`
				Unchanged bool   `json:"unchanged"`
				Path      string `json:"path"`
			}
			json.Unmarshal(raw, &meta)
			if got := meta[mcpserver.ErrorMetaKey]; got.Kind != c.Kind || got.Op != "write" || !got.Unchanged || got.Path != p {
				t.Errorf("_meta = %s; want %q: {kind %s, op write, unchanged true, path %s}", raw, mcpserver.ErrorMetaKey, c.Kind, p)
			}
			if got, _ := os.ReadFile(p); string(got) != "alpha\n" {
				t.Errorf("a.txt = %q after the failed edit, want its old content", got)
			}
		})
	}
}
