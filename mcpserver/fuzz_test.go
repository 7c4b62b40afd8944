package mcpserver_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
	"github.com/oh-bridge/oh-bridge/session"
)

// FuzzStdio feeds `oh-bridge mcp`'s stdio face (StdioTransport and the
// SDK's server behind it) arbitrary bytes, as FuzzStream does the editor's
// framing. Each input is one connection: its bytes, a newline, then a
// probe, a ping the face must still answer. Every line that is not JSON is
// answered with a parse error; everything written is one JSON-RPC 2.0
// message a line; the connection ends cleanly when the client closes it.
// One session serves the whole fuzzing process, as one bridge does.
func FuzzStdio(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_tracker","arguments":{"command":"view"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"{not json}\r\n[]\nnull\n\xff\xfe\n",
		`{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`[]`,
		"\n\n   \n",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`,
	} {
		f.Add([]byte(seed))
	}
	dir, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	sess, err := session.New(session.Options{Roots: session.Candidates("test", dir), ShellMode: session.ShellNoRC})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { sess.Close(context.Background()) })
	srv := mcpserver.New(sess, mcpserver.Options{Version: "fuzz"})
	// One context for every connection: ServeStdio closes the server's
	// sessions when its context ends, and a connection's must not end
	// the next one's.
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	face := rpctest.LineFace{Probe: "ping", Serve: func(in io.Reader, out io.WriteCloser) error {
		return srv.ServeStdio(ctx, mcpserver.StdioTransport(in, out))
	}}
	f.Fuzz(face.CheckInput)
}
