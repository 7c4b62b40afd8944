package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/acp"
	"github.com/oh-bridge/oh-bridge/rpc"
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
	var seq atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		probe := fmt.Sprintf("fuzz-probe-%d", seq.Add(1))
		out := acpRun(t, data, probe)
		for _, line := range out {
			var m struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("input %q: the face wrote %q, not a JSON-RPC 2.0 message", data, line)
			}
		}
		if answered, notJSON := parseErrors(out), notJSONLines(data); answered < notJSON {
			t.Fatalf("input %q: %d lines are not JSON but %d parse errors were answered: %q", data, notJSON, answered, out)
		}
	})
}

// pipeRWC is the agent's stdio: it reads in and writes out.
type pipeRWC struct {
	io.Reader
	io.Writer
	out *io.PipeWriter
}

func (p pipeRWC) Close() error { return p.out.Close() }

// acpRun serves one connection that sends data, a newline and a
// session/list with the probe's id; once that is answered it closes the
// input and returns what the face wrote.
func acpRun(t *testing.T, data []byte, probe string) [][]byte {
	t.Helper()
	a := acp.New(acp.Config{Version: "fuzz", HowToConfigure: "Give --server."})
	srv := rpc.NewServer(rpc.Options{Methods: a.Methods(), Shutdown: a.Shutdown, CancelMethod: "$/cancel_request", ShutdownGrace: 100 * time.Millisecond})
	a.Bind(srv)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan struct{})
	go func() {
		srv.Serve(context.Background(), rpc.NewLineStream(pipeRWC{Reader: inR, Writer: outW, out: outW}, nil, nil))
		outW.Close()
		close(served)
	}()

	var mu sync.Mutex
	var lines [][]byte
	answered := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		once := sync.Once{}
		for sc.Scan() {
			line := bytes.Clone(sc.Bytes())
			mu.Lock()
			lines = append(lines, line)
			mu.Unlock()
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == `"`+probe+`"` {
				once.Do(func() { close(answered) })
			}
		}
		io.Copy(io.Discard, outR)
	}()
	go func() {
		inW.Write(data)
		inW.Write([]byte("\n" + `{"jsonrpc":"2.0","id":"` + probe + `","method":"session/list","params":{}}` + "\n"))
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("input %q: the session/list after it was not answered within 10 s; the face wrote %q", data, lines)
	}
	inW.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatalf("input %q: the connection did not end within 10 s of the client closing it", data)
	}
	<-read
	return lines
}

// parseErrors counts the answers with code -32700.
func parseErrors(out [][]byte) int {
	n := 0
	for _, line := range out {
		var m struct {
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &m) == nil && m.Error != nil && m.Error.Code == rpc.CodeParseError {
			n++
		}
	}
	return n
}

// notJSONLines counts the non-blank lines of data that are not JSON.
func notJSONLines(data []byte) int {
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			n++
		}
	}
	return n
}
