package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

func newServer(t *testing.T) (*mcpserver.Server, *session.Session, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := session.New(session.Options{Roots: session.Candidates("test", dir), ShellMode: session.ShellNoRC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	return mcpserver.New(sess, mcpserver.Options{Version: "test"}), sess, dir
}

func connect(t *testing.T, srv *mcpserver.Server, name string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	go srv.ServeStdio(context.Background(), st)
	c, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestToolsAsDefined: the tools listed over HTTP are ohtools' definitions,
// their schemas on the wire byte for byte as written (key order included:
// OpenHands' own order, which the model sees).
func TestToolsAsDefined(t *testing.T) {
	srv, _, dir := newServer(t)
	ep, err := srv.ListenHTTP(mcpserver.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background())
	post := func(body, session string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", ep.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ep.Token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, data
	}
	resp, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "")
	sid := resp.Header.Get("Mcp-Session-Id")
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	_, data := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sid)
	_, payload, ok := bytes.Cut(data, []byte("data: "))
	if !ok {
		t.Fatalf("tools/list answer: %s", data)
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
				Annotations json.RawMessage `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(payload, &list); err != nil {
		t.Fatalf("%v: %s", err, payload)
	}
	byName := map[string]int{}
	for i, tool := range list.Result.Tools {
		byName[tool.Name] = i
	}
	annotations := map[string]string{
		"terminal":     `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false,"title":"terminal"}`,
		"file_editor":  `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":false,"readOnlyHint":false,"title":"file_editor"}`,
		"task_tracker": `{"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":false}`,
	}
	for _, d := range ohtools.Definitions(dir) {
		i, ok := byName[d.Name]
		if !ok {
			t.Fatalf("%s is not listed: %s", d.Name, payload)
		}
		got := list.Result.Tools[i]
		var want bytes.Buffer
		json.Compact(&want, d.InputSchema)
		if string(got.InputSchema) != want.String() {
			t.Errorf("%s: the schema on the wire differs from the definition\nwire: %s\ndef:  %s", d.Name, got.InputSchema, want.String())
		}
		if got.Description != d.Description {
			t.Errorf("%s: the description differs", d.Name)
		}
		if string(got.Annotations) != annotations[d.Name] {
			t.Errorf("%s: annotations %s, want %s", d.Name, got.Annotations, annotations[d.Name])
		}
	}
}

// TestEachSessionIsAnAgent: two MCP sessions get two terminals, with
// their own state; the session ends, and its agent with it.
func TestEachSessionIsAnAgent(t *testing.T) {
	srv, sess, dir := newServer(t)
	ctx := context.Background()
	a, b := connect(t, srv, "first"), connect(t, srv, "second")
	call := func(c *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	call(a, "terminal", map[string]any{"command": "mkdir -p sub && cd sub"})
	if got := text(call(b, "terminal", map[string]any{"command": "pwd"})); !strings.HasPrefix(got, dir+"\n") {
		t.Fatalf("the second agent shares the first one's shell: %s", got)
	}
	if got := text(call(a, "terminal", map[string]any{"command": "pwd"})); !strings.HasPrefix(got, dir+"/sub\n") {
		t.Fatalf("the first agent lost its cwd: %s", got)
	}
	infos := sess.Agents()
	if len(infos) != 2 || infos[0].Name != "first 1" || infos[1].Name != "second 1" {
		t.Fatalf("agents %+v", infos)
	}
	a.Close()
	// The server learns of the client's end from its connection, which
	// tells the test nothing: poll.
	ohtest.Poll(t, 10*time.Second, "one agent left after the first client's session ended", func() ([]session.AgentInfo, bool) {
		infos := sess.Agents()
		return infos, len(infos) == 1
	})
}

// TestErrorsAreResults: tool failures and bad arguments are isError
// results; an unknown tool is a protocol error.
func TestErrorsAreResults(t *testing.T) {
	srv, _, dir := newServer(t)
	c := connect(t, srv, "errors")
	ctx := context.Background()
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "file_editor", Arguments: map[string]any{"command": "view", "path": "/etc/passwd"}})
	if err != nil || !r.IsError || text(r) != "path /etc/passwd is outside the workspace roots ["+dir+"]; use a path inside one of them" {
		t.Fatalf("a path outside the roots: %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": 5}})
	if err != nil || !r.IsError || text(r) != "Error validating tool 'terminal': 1 validation error for TerminalAction\ncommand\n"+
		"  Input should be a valid string [type=string_type, input_value=5, input_type=int]\n"+
		"    For further information visit https://errors.pydantic.dev/2.14/v/string_type. Parameters provided: ['command']" {
		t.Fatalf("a bad argument: %v %+v", err, r)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "browser", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "browser"`) {
		t.Fatalf("an unknown tool: %v", err)
	}
}

// TestCloseEndsRunningCalls: closing the endpoint (mcp/stop, the bridge
// exiting) ends the agents' running commands and their calls, instead of
// waiting for them: a client that went away mid-call leaves nothing behind.
func TestCloseEndsRunningCalls(t *testing.T) {
	srv, sess, _ := newServer(t)
	ep, err := srv.ListenHTTP(mcpserver.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: ohtest.Bearer(ep.Token, nil)}
	c, err := mcp.NewClient(&mcp.Implementation{Name: "sleeper", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	marker := "sleep 47.5"
	go c.CallTool(context.Background(), &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": marker}})
	ohtest.WaitFor(t, "the command to start", func() bool { return ohtest.Running(marker) })
	closed := make(chan struct{})
	go func() { ep.Close(context.Background()); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for the running command")
	}
	if ohtest.Running(marker) {
		t.Error("the command outlived the endpoint")
	}
	if n := len(sess.Agents()); n != 0 {
		t.Errorf("%d agents after Close", n)
	}
}
