//go:build linux

package acp_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/acp"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// TestToolCallDiskFaults: the agent's file_editor edit fails on a full
// disk and on a read-only one, in an ACP session whose client offers no
// fs (the bridge writes). The failed tool_call_update shows the text the
// agent got, the SDK's FileEditor words with Python's OSError in them,
// and its rawOutput says {"error": {kind, path, op, unchanged}}; the file
// keeps its bytes.
func TestToolCallDiskFaults(t *testing.T) {
	for _, c := range ohtest.FileEditorFaults {
		t.Run(c.Name, func(t *testing.T) {
			p := ohtest.FaultyFile(t, c.Opts, c.ReadOnly, "a.txt", "alpha\n")
			root := filepath.Dir(p)
			script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
				{{"tool": "file_editor", "arguments": map[string]any{"command": "str_replace", "path": p, "old_str": "alpha", "new_str": c.NewStr}}},
				{{"message": "Done."}},
			}})
			scriptFile := filepath.Join(t.TempDir(), "script.json")
			os.WriteFile(scriptFile, script, 0o644)
			// The stand-in, for speed: the fault is the disk's, and the
			// package starts no real server (10-40 s) for it; the agent's
			// events are held to the real server's by agentserver's
			// TestStandInKeepsToTheRealServer.
			peer := agentservertest.Start(t, "--script", scriptFile)

			cl := serveACP(t, peer.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := cl.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
				t.Fatal(err)
			}
			var sess struct {
				SessionID string `json:"sessionId"`
			}
			if err := cl.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}}, &sess); err != nil {
				t.Fatal(err)
			}
			var stop struct {
				StopReason string `json:"stopReason"`
			}
			if err := cl.Call(ctx, "session/prompt", map[string]any{"sessionId": sess.SessionID,
				"prompt": []any{map[string]any{"type": "text", "text": "Edit a.txt."}}}, &stop); err != nil || stop.StopReason != "end_turn" {
				t.Fatalf("session/prompt: %+v, %v", stop, err)
			}
			// The turn is over: its updates have all arrived.
			m, err := cl.AwaitNotification(ctx, "session/update", func(params json.RawMessage) bool {
				return strings.Contains(string(params), `"status":"failed"`)
			})
			if err != nil {
				t.Fatal(err)
			}
			var u struct {
				Update struct {
					Content []struct {
						Content struct{ Text string } `json:"content"`
					} `json:"content"`
					RawOutput struct {
						Error struct {
							Kind      string `json:"kind"`
							Path      string `json:"path"`
							Op        string `json:"op"`
							Unchanged bool   `json:"unchanged"`
						} `json:"error"`
					} `json:"rawOutput"`
				} `json:"update"`
			}
			json.Unmarshal(m.Params, &u)
			if len(u.Update.Content) != 1 || !c.Text(p).MatchString(u.Update.Content[0].Content.Text) {
				t.Errorf("the failed call's content: %s; want one text matching %s", m.Params, c.Text(p))
			}
			if e := u.Update.RawOutput.Error; e.Kind != c.Kind || e.Path != p || e.Op != "write" || !e.Unchanged {
				t.Errorf("the failed call's rawOutput: %s; want error {kind %s, path %s, op write, unchanged true}", m.Params, c.Kind, p)
			}
			if got, _ := os.ReadFile(p); string(got) != "alpha\n" {
				t.Errorf("a.txt = %q after the failed edit, want its old content", got)
			}
		})
	}
}

// serveACP runs the ACP face in-process over a pipe, its sessions' MCP
// endpoints served by package mcpserver as `oh-bridge acp` wires them, and
// allows every action it asks about.
func serveACP(t *testing.T, serverURL string) *rpctest.Client {
	t.Helper()
	return serveACPWith(t, serverURL, func(method string, _ json.RawMessage) (any, *rpc.Error) {
		if method == "session/request_permission" {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}}, nil
		}
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "this client does not serve " + method}
	})
}

// serveACPWith is serveACP with a client that answers the face's requests
// with answer.
func serveACPWith(t *testing.T, serverURL string, answer func(method string, params json.RawMessage) (any, *rpc.Error)) *rpctest.Client {
	t.Helper()
	a := acp.New(acp.Config{
		Version:  "test",
		Server:   acp.AgentServer{URL: serverURL, LLM: json.RawMessage(`{"model":"test/scripted"}`)},
		StartMCP: mcpserver.Starter(mcpserver.Options{Version: "test"}, nil),
	})
	srv := rpc.NewServer(rpc.Options{Methods: a.Methods(), Shutdown: a.Shutdown, CancelMethod: "$/cancel_request"})
	a.Bind(srv)
	x, y := net.Pipe()
	done := make(chan struct{})
	go func() { srv.Serve(context.Background(), rpc.NewStream(x, nil, nil)); close(done) }()
	cl := rpctest.NewClient(y)
	cl.OnRequest = answer
	t.Cleanup(func() { cl.Close(); <-done })
	return cl
}
