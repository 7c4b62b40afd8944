package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/shellint"
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
	sess, err := session.New(session.Options{Roots: []string{dir}, ShellMode: shellint.ModeNoRC})
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
	var seq atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		probe := fmt.Sprintf("fuzz-probe-%d", seq.Add(1))
		out := stdioRun(t, ctx, srv, data, probe)
		checkAnswers(t, data, out, probe)
	})
}

// stdioRun serves one stdio connection that sends data, a newline and a
// ping with the probe's id; once the ping is answered it closes the
// input and returns what the face wrote.
func stdioRun(t *testing.T, ctx context.Context, srv *mcpserver.Server, data []byte, probe string) [][]byte {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, mcpserver.StdioTransport(inR, outW)); outW.Close() }()

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
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == `"`+probe+`"` {
				once.Do(func() { close(answered) })
			}
		}
		io.Copy(io.Discard, outR)
	}()
	go func() {
		inW.Write(data)
		inW.Write([]byte("\n" + `{"jsonrpc":"2.0","id":"` + probe + `","method":"ping"}` + "\n"))
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("input %q: the ping after it was not answered within 10 s; the face wrote %q", data, lines)
	}
	inW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("input %q: the connection ended with %v, want a clean end", data, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("input %q: the connection did not end within 10 s of the client closing it", data)
	}
	<-read
	return lines
}

// checkAnswers: everything written is a JSON-RPC 2.0 message, and there
// are at least as many parse errors as input lines that are not JSON.
func checkAnswers(t *testing.T, data []byte, out [][]byte, probe string) {
	t.Helper()
	parseErrors := 0
	for _, line := range out {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("input %q: the face wrote %q, not a JSON-RPC 2.0 message", data, line)
		}
		if m.Error != nil && m.Error.Code == -32700 {
			parseErrors++
		}
	}
	notJSON := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			notJSON++
		}
	}
	if parseErrors < notJSON {
		t.Fatalf("input %q: %d lines are not JSON but %d parse errors were answered: %q", data, notJSON, parseErrors, out)
	}
}
