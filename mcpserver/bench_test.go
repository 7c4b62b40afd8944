package mcpserver_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/session"
)

// BenchmarkCall measures one tools/call in process: task_tracker view
// (no shell: the MCP path alone) and terminal `echo hi`, over the
// in-memory transport and over HTTP.
func BenchmarkCall(b *testing.B) {
	sess, err := session.New(session.Options{Roots: session.Candidates("test", b.TempDir())})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close(context.Background())
	srv := mcpserver.New(sess, mcpserver.Options{})
	ep, err := srv.ListenHTTP(mcpserver.HTTPOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer ep.Close(context.Background())
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	overHTTP, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: &http.Client{Transport: ohtest.Bearer(ep.Token, nil)}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer overHTTP.Close()
	ct, st := mcp.NewInMemoryTransports()
	go srv.ServeStdio(ctx, st)
	inMemory, err := client.Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer inMemory.Close()
	for _, c := range []struct {
		name string
		s    *mcp.ClientSession
		tool string
		args map[string]any
	}{
		{"memory/task_tracker", inMemory, "task_tracker", map[string]any{"command": "view"}},
		{"http/task_tracker", overHTTP, "task_tracker", map[string]any{"command": "view"}},
		{"memory/terminal", inMemory, "terminal", map[string]any{"command": "echo hi"}},
		{"http/terminal", overHTTP, "terminal", map[string]any{"command": "echo hi"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				r, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
			}
		})
	}
}
