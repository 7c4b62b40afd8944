package mcpserver_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// TestToolPrefix: with a prefix the tools are listed as bridge_terminal,
// …, with OpenHands' descriptions and schemas; a call by the new name
// runs the tool and answers OpenHands' text, byte for byte what the
// unprefixed server answers; the old names are unknown.
func TestToolPrefix(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := session.New(session.Options{Roots: session.Candidates("test", dir), ShellMode: session.ShellNoRC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	ctx := context.Background()
	plain := connect(t, mcpserver.New(sess, mcpserver.Options{Version: "test"}), "plain")
	prefixed := connect(t, mcpserver.New(sess, mcpserver.Options{Version: "test", ToolPrefix: "bridge_"}), "prefixed")

	list, err := prefixed.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defs := ohtools.Definitions(dir)
	if len(list.Tools) != len(defs) {
		t.Fatalf("%d tools listed, want %d", len(list.Tools), len(defs))
	}
	listed := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		listed[tool.Name] = tool
	}
	for _, d := range defs {
		got := listed["bridge_"+d.Name]
		if got == nil || got.Description != d.Description || got.Annotations.Title != d.Annotations.Title {
			t.Errorf("bridge_%s is not listed with OpenHands' description and title: %+v", d.Name, got)
		}
	}
	if in := prefixed.InitializeResult().Instructions; !strings.Contains(in, "(bridge_terminal, bridge_file_editor, bridge_task_tracker)") {
		t.Errorf("the instructions do not name the tools as served: %s", in)
	}

	args := map[string]any{"command": "echo prefixed-$((6*7))"}
	want, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	got, err := prefixed.CallTool(ctx, &mcp.CallToolParams{Name: "bridge_terminal", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if text(got) != text(want) || got.IsError || !strings.HasPrefix(text(got), "prefixed-42\n") {
		t.Errorf("bridge_terminal answered %q, terminal %q", text(got), text(want))
	}
	// An error's text is OpenHands' too, naming the tool as OpenHands does
	// (terminal, not bridge_terminal).
	bad := map[string]any{"command": map[string]any{"not": "a string"}}
	wantErr, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: bad})
	if err != nil || !wantErr.IsError || !strings.HasPrefix(text(wantErr), "Error validating tool 'terminal': ") {
		t.Fatalf("a bad argument, unprefixed: %v %q", err, text(wantErr))
	}
	r, err := prefixed.CallTool(ctx, &mcp.CallToolParams{Name: "bridge_terminal", Arguments: bad})
	if err != nil || !r.IsError || text(r) != text(wantErr) {
		t.Errorf("a bad argument: %v %q, want %q", err, text(r), text(wantErr))
	}
	if _, err := prefixed.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: args}); err == nil || !strings.Contains(err.Error(), `unknown tool "terminal"`) {
		t.Errorf("the unprefixed name: %v", err)
	}
}

func TestCheckToolPrefix(t *testing.T) {
	for _, ok := range []string{"", "bridge_", "oh-bridge_", "E2"} {
		if err := mcpserver.CheckToolPrefix(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for prefix, want := range map[string]string{
		"bridge.":               `tool prefix "bridge." has '.': use letters, digits, _ and - only`,
		"é_":                    `has 'é'`,
		"my bridge ":            `has ' '`,
		strings.Repeat("a", 53): "is too long: with it a tool's name has 65 characters, and model APIs take 64 at most (use 52 characters or fewer)",
	} {
		err := mcpserver.CheckToolPrefix(prefix)
		var pe *mcpserver.ToolPrefixError
		if !errors.As(err, &pe) || pe.Kind() != "invalid_tool_prefix" || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an invalid_tool_prefix error saying %q", prefix, err, want)
		}
	}
	if err := mcpserver.CheckToolPrefix(strings.Repeat("a", 52)); err != nil {
		t.Errorf("52 characters: %v", err)
	}
}
