package rpctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// LineFace is a face that speaks JSON-RPC 2.0 a message a line (ACP, and
// MCP's stdio), as its fuzzers drive it.
type LineFace struct {
	// Serve serves one connection: it reads in to its end and writes out,
	// and returns when the connection ends: nil when it ended cleanly.
	Serve func(in io.Reader, out io.WriteCloser) error
	// Probe is the method of a request the face must answer whatever came
	// before it (ping, session/list), and ProbeParams its params, none
	// when empty.
	Probe, ProbeParams string
}

var probes atomic.Int64

// CheckInput serves one connection that sends data, a newline and the
// probe, and checks what the face wrote: each line one JSON-RPC 2.0
// message, at least as many parse errors as data has lines that are not
// JSON, the probe answered, and a clean end when the client closes the
// connection.
func (f LineFace) CheckInput(t *testing.T, data []byte) {
	t.Helper()
	out := f.run(t, data, fmt.Sprintf("fuzz-probe-%d", probes.Add(1)))
	parseErrors := 0
	for _, line := range out {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("input %q: the face wrote %q, not a JSON-RPC 2.0 message", data, line)
		}
		if m.Error != nil && m.Error.Code == rpc.CodeParseError {
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

// run serves the connection; once the probe is answered it closes the
// input and returns the lines the face wrote.
func (f LineFace) run(t *testing.T, data []byte, probe string) [][]byte {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- f.Serve(inR, outW); outW.Close() }()

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
	request := `{"jsonrpc":"2.0","id":"` + probe + `","method":"` + f.Probe + `"`
	if f.ProbeParams != "" {
		request += `,"params":` + f.ProbeParams
	}
	go func() {
		inW.Write(data)
		inW.Write([]byte("\n" + request + "}\n"))
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("input %q: the %s after it was not answered within 10 s; the face wrote %q", data, f.Probe, lines)
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
