package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineLength bounds one message on stdio, as the SDK's own stdio does.
const MaxLineLength = mcp.DefaultMaxLineLength

// StdioTransport is MCP over in and out, one JSON-RPC message a line,
// that survives bad input: the SDK's own stdio transport ends the
// connection at the first line it cannot decode, taking the running call
// and the agent's shell with it. Here a line that is not JSON (or not
// UTF-8, or too long) is answered with a parse error and one that is not
// a JSON-RPC message with an invalid-request error, both with a null id
// as JSON-RPC says, and the next line is read.
//
// A request the client cancelled (notifications/cancelled) gets no
// answer, as MCP asks: the SDK answers it with an error of code 0.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: out, cancelled: map[string]bool{}}
	go filterLines(in, pw, w)
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// lockedWriter writes one message at a time: the SDK writes each message
// in one Write, and so does filterLines, so lines never interleave. It
// drops the answer to a request the client cancelled.
type lockedWriter struct {
	mu        sync.Mutex
	w         io.Writer
	cancelled map[string]bool // ids of cancelled requests not answered yet
}

// maxCancelled bounds the ids kept: a request answered before its cancel
// arrived leaves its id behind.
const maxCancelled = 1024

func (l *lockedWriter) cancel(id json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.cancelled) >= maxCancelled {
		clear(l.cancelled)
	}
	l.cancelled[string(bytes.TrimSpace(id))] = true
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.cancelled) > 0 {
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(p, &resp) == nil && resp.Method == "" && l.cancelled[string(resp.ID)] {
			delete(l.cancelled, string(resp.ID))
			return len(p), nil
		}
	}
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error {
	if c, ok := l.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// filterLines copies the messages of in to the SDK and answers the rest.
func filterLines(in io.Reader, sdk *io.PipeWriter, out *lockedWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r, MaxLineLength)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if problem, code := checkLine(line, tooLong); problem != "" {
				writeError(out, code, fmt.Sprintf("line %d of the input: %s; send one JSON-RPC 2.0 message per line (MCP's stdio transport)", n, problem))
				continue
			}
			if id := cancelledID(line); id != nil {
				out.cancel(id)
			}
			if _, werr := sdk.Write(append(line, '\n')); werr != nil {
				return // the SDK closed the connection
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			sdk.CloseWithError(err)
			return
		}
	}
}

// readLine reads up to the next newline; a line longer than max is
// consumed whole but only reported as too long.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, e := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, e
	}
}

// checkLine says what is wrong with a line, and the JSON-RPC error code
// for it, or "" when the SDK can take it.
func checkLine(line []byte, tooLong bool) (string, int64) {
	switch {
	case tooLong:
		return fmt.Sprintf("longer than %d bytes", MaxLineLength), jsonrpc.CodeParseError
	case !utf8.Valid(line):
		return "not UTF-8", jsonrpc.CodeParseError
	case !json.Valid(line):
		return "not JSON", jsonrpc.CodeParseError
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil || len(batch) == 0 {
			return "an empty or malformed batch", jsonrpc.CodeInvalidRequest
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return "a batch holding something that is not a JSON-RPC message (" + err.Error() + ")", jsonrpc.CodeInvalidRequest
			}
		}
		return "", 0
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
		return "not a JSON-RPC message (" + err.Error() + ")", jsonrpc.CodeInvalidRequest
	}
	return "", 0
}

// cancelledID is the id a notifications/cancelled line names, or nil.
func cancelledID(line []byte) json.RawMessage {
	if !bytes.Contains(line, []byte("notifications/cancelled")) {
		return nil
	}
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || n.Method != "notifications/cancelled" || len(n.Params.RequestID) == 0 {
		return nil
	}
	return n.Params.RequestID
}

func writeError(out io.Writer, code int64, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	out.Write(append(b, '\n'))
}
