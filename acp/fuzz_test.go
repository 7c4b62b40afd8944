package acp_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/acp"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// FuzzACP feeds the ACP face (newline-delimited JSON-RPC, rpc.NewLineStream,
// and the agent's method table behind it) arbitrary bytes, as FuzzStream
// does the editor's framing. Each input is one connection, as `oh-bridge
// acp` wires it with no agent-server: its bytes, a newline, then a probe,
// a session/list the face must still answer. Every line that is not JSON
// is answered with a parse error; everything written is one JSON-RPC 2.0
// message a line; the connection ends when the client closes it.
func FuzzACP(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true}},"clientInfo":{"name":"fuzz","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/nonexistent/fuzz","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","additionalDirectories":["/tmp"],"mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"relative","mcpServers":[{"name":"x","command":"true","args":[],"env":[]}]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"unconfigured-x","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"x","cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/resume","params":{"sessionId":"x","cwd":"/w"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"x"}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":2}}`,
		`{"jsonrpc":"2.0","id":5,"method":"authenticate","params":{"methodId":"x"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"session/list","params":{"cwd":"/w","cursor":"c"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"cancelled"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"session/list"}]`,
		"{not json}\r\n[]\nnull\n\xff\xfe\n  \n",
		`{"jsonrpc":"2.0","id":{"an":"object"},"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`,
	} {
		f.Add([]byte(seed))
	}
	face := rpctest.LineFace{Probe: "session/list", ProbeParams: "{}", Serve: func(in io.Reader, out io.WriteCloser) error {
		a := acp.New(acp.Config{Version: "fuzz", HowToConfigure: "Give --server."})
		srv := rpc.NewServer(rpc.Options{Methods: a.Methods(), Shutdown: a.Shutdown, CancelMethod: "$/cancel_request", ShutdownGrace: 100 * time.Millisecond})
		a.Bind(srv)
		// The agent's stdio: it reads in and writes out; closing it closes out.
		srv.Serve(context.Background(), rpc.NewLineStream(struct {
			io.Reader
			io.WriteCloser
		}{in, out}, nil, nil))
		return nil
	}}
	f.Fuzz(face.CheckInput)
}
