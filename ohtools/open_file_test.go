package ohtools_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// shown is a file the editor was asked to show.
type shown struct {
	path string
	line int
}

// openFileServer serves the tools of a session over a workspace with one
// file, a.go, through MCP in memory. show is the session's editor (nil:
// none); extra the extra tools asked for.
func openFileServer(t *testing.T, show func(context.Context, string, int) error, extra ...string) (*mcp.ClientSession, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sess, err := session.New(session.Options{Roots: session.Candidates("the test", dir), ShowFile: show})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	srv := mcpserver.New(sess, mcpserver.Options{ExtraTools: extra})
	ct, st := mcp.NewInMemoryTransports()
	go srv.ServeStdio(context.Background(), st)
	c, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dir
}

func listed(t *testing.T, c *mcp.ClientSession) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func callOpenFile(t *testing.T, c *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_file", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestOpenFileOnlyWhenAsked: the default tools are OpenHands' own, and
// open_file is served only when asked for; an unknown extra tool is
// refused with the names there are.
func TestOpenFileOnlyWhenAsked(t *testing.T) {
	openHands := []string{"file_editor", "task_tracker", "terminal"}
	c, _ := openFileServer(t, nil)
	if got := listed(t, c); !slices.Equal(got, openHands) {
		t.Errorf("default tools = %q, want %q", got, openHands)
	}
	if got := ohtools.Names(ohtools.Default()); !slices.Equal(got, []string{"terminal", "file_editor", "task_tracker"}) {
		t.Errorf("ohtools.Default() = %q, want OpenHands' own in its order", got)
	}
	c, _ = openFileServer(t, nil, "open_file")
	if got, want := listed(t, c), append(slices.Clone(openHands), "open_file"); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("with open_file asked for, tools = %q, want %q", got, want)
	}
	if in := c.InitializeResult().Instructions; !strings.Contains(in, "OpenHands' own tools (terminal, file_editor, task_tracker)") ||
		!strings.HasSuffix(in, " Also served, tools of the bridge's own that OpenHands does not have: open_file.") {
		t.Errorf("the instructions do not tell OpenHands' tools from the bridge's own: %s", in)
	}
	err := mcpserver.CheckExtraTools([]string{"terminal"})
	if err == nil || err.Error() != `there is no extra tool "terminal": the extra tools are open_file` {
		t.Errorf("CheckExtraTools(terminal) = %v, want the names there are", err)
	}
}

// TestOpenFileShowsTheFile: the editor is asked to show the file's
// absolute path at the line, and the agent is told so; without an editor
// the agent is told there is none.
func TestOpenFileShowsTheFile(t *testing.T) {
	var got []shown
	c, dir := openFileServer(t, func(_ context.Context, path string, line int) error {
		got = append(got, shown{path, line})
		return nil
	}, "open_file")
	path := filepath.Join(dir, "a.go")
	text, isErr := callOpenFile(t, c, map[string]any{"path": path, "line": 1})
	if want := "Showed " + path + ":1 to the user in their editor."; text != want || isErr {
		t.Errorf("open_file = %q (error %v), want %q", text, isErr, want)
	}
	if want := []shown{{path, 1}}; !slices.Equal(got, want) {
		t.Errorf("the editor was asked to show %v, want %v", got, want)
	}

	c, dir = openFileServer(t, nil, "open_file")
	path = filepath.Join(dir, "a.go")
	text, isErr = callOpenFile(t, c, map[string]any{"path": path})
	if want := "There is no editor to show " + path + " in: the tools are served without one (oh-bridge mcp on stdio). " +
		"Read the file with file_editor's view command instead."; text != want || !isErr {
		t.Errorf("open_file without an editor = %q (error %v), want %q as an error", text, isErr, want)
	}
}

// TestOpenFileRefusesPathsOutsideTheWorkspace: a path outside the roots,
// or one that is not a file, is refused in words naming it, and the
// editor is not asked.
func TestOpenFileRefusesPathsOutsideTheWorkspace(t *testing.T) {
	var got []shown
	c, dir := openFileServer(t, func(_ context.Context, path string, line int) error {
		got = append(got, shown{path, line})
		return nil
	}, "open_file")
	outside := filepath.Join(filepath.Dir(dir), "elsewhere.go")
	cases := map[string]string{
		outside:                          "path " + outside + " is outside the workspace roots [" + dir + "]; use a path inside one of them",
		filepath.Join(dir, "missing.go"): filepath.Join(dir, "missing.go") + " does not exist",
		dir:                              dir + " is a directory, not a file; list it instead",
	}
	for path, want := range cases {
		text, isErr := callOpenFile(t, c, map[string]any{"path": path})
		if text != want || !isErr {
			t.Errorf("open_file %s = %q (error %v), want %q as an error", path, text, isErr, want)
		}
	}
	if len(got) != 0 {
		t.Errorf("the editor was asked to show %v", got)
	}
}

// TestOpenFileCard: what the faces show of a call comes from the
// declaration alone: ACP's kind and title, the card's file and line, no
// question asked; arguments are checked the agent's way.
func TestOpenFileCard(t *testing.T) {
	args := []byte(`{"path": "/w/a.go", "line": "3"}`) // lax, as pydantic: "3" is 3
	c, err := ohtools.Parse("open_file", args)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ohtools.Action{Kind: "read", Title: "show /w/a.go:3"}); c.Action != want {
		t.Errorf("action %+v, want %+v", c.Action, want)
	}
	if c.CardKind != ohtools.CardFile || c.Card.Path != "/w/a.go" || c.Card.Line == nil || *c.Card.Line != 3 || c.Card.Edits || c.Card.Proposed != nil {
		t.Errorf("card %s %+v, want the file card of /w/a.go at line 3, no edit", c.CardKind, c.Card)
	}
	if got := updates.Title("open_file", args, "fallback"); got != "Show /w/a.go:3" {
		t.Errorf("the card's title is %q, want %q", got, "Show /w/a.go:3")
	}
	_, err = ohtools.Parse("open_file", []byte(`{"line": 3}`))
	if err == nil || !strings.HasPrefix(err.Error(), "Error validating tool 'open_file': 1 validation error for OpenFileAction\npath\n  Field required") {
		t.Errorf("no path: %v", err)
	}
}
