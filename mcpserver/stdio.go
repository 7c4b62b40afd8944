package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// MaxMessageSize bounds one MCP message: a line on stdio, a request's body
// over HTTP. What an agent sends that is large is a file's text, in
// file_editor's file_text, old_str and new_str; the bridge reads and
// writes files of up to 10 MiB whole (session.DefaultMaxFileSize,
// OHEditor's own limit), and JSON's escapes add to that. 16 MiB leaves
// room for that, and is the SDK's own limit on stdio
// (mcp.DefaultMaxLineLength), so an agent that works with the SDK's
// servers works with this one. A longer line is read to its end without
// being held, answered -32600 with kind message_too_large under its id
// when its first bytes name one, and the next line is read.
const MaxMessageSize = mcp.DefaultMaxLineLength

// StdioTransport is MCP over in and out, one JSON-RPC message a line,
// that survives bad input: the SDK's own stdio transport ends the
// connection at the first line it cannot decode, taking the running call
// and the agent's shell with it. Here a line that is not JSON (or not
// UTF-8) is answered with a parse error and one that is not a JSON-RPC
// message with an invalid-request error, both with a null id as JSON-RPC
// says; a line over MaxMessageSize with an invalid-request error under
// its id; and the next line is read. Each line is decoded once,
// here, and the SDK gets the message itself.
//
// A request the client cancelled (notifications/cancelled) gets no
// answer, as MCP asks: the SDK answers it with an error of code 0.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	return &stdioTransport{in: in, out: out}
}

type stdioTransport struct {
	in  io.Reader
	out io.Writer
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		w:      &lockedWriter{w: t.out, cancelled: map[string]bool{}},
		msgs:   make(chan inbound),
		closed: make(chan struct{}),
	}
	go c.filterLines(t.in)
	return c, nil
}

// inbound is a message read, or the error that ended the input.
type inbound struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the SDK's connection over the filtered lines.
type stdioConn struct {
	w      *lockedWriter
	msgs   chan inbound
	closed chan struct{}
	once   sync.Once
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case in := <-c.msgs:
		return in.msg, in.err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok && c.w.answered(r.ID) {
		return nil // the client cancelled it
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) SessionID() string { return "" }

// deliver hands a message to the SDK; false when the connection closed.
func (c *stdioConn) deliver(in inbound) bool {
	select {
	case c.msgs <- in:
		return true
	case <-c.closed:
		return false
	}
}

// lockedWriter writes one message at a time, so lines never interleave,
// and knows the requests the client cancelled.
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

// answered says whether the answer to id is to be dropped (the client
// cancelled the request), forgetting it.
func (l *lockedWriter) answered(id jsonrpc.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.cancelled) == 0 {
		return false
	}
	key, _ := json.Marshal(id.Raw())
	if !l.cancelled[string(key)] {
		return false
	}
	delete(l.cancelled, string(key))
	return true
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filterLines decodes the lines of in for the SDK and answers the rest.
func (c *stdioConn) filterLines(in io.Reader) {
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, err := rpc.ReadLine(r, MaxMessageSize)
		var tooLarge *rpc.MessageTooLargeError
		if errors.As(err, &tooLarge) {
			c.w.Write(append(rpcError(tooLarge.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("line %d of the input: %v", n, tooLarge), tooLarge.Data()), '\n'))
			continue
		}
		if err != nil {
			c.deliver(inbound{err: err}) // io.EOF: the client closed its end
			return
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		msgs, problem, code := decodeLine(line)
		if problem != "" {
			writeError(c.w, code, fmt.Sprintf("line %d of the input: %s; send one JSON-RPC 2.0 message per line (MCP's stdio transport)", n, problem))
		}
		for _, m := range msgs {
			if id := cancelledID(m); id != nil {
				c.w.cancel(id)
			}
			if !c.deliver(inbound{msg: m}) {
				return
			}
		}
	}
}

// decodeLine is a line's messages, or what is wrong with it and the
// JSON-RPC error code for it.
func decodeLine(line []byte) ([]jsonrpc.Message, string, int64) {
	switch {
	case !utf8.Valid(line):
		return nil, "not UTF-8", jsonrpc.CodeParseError
	case !json.Valid(line):
		return nil, "not JSON", jsonrpc.CodeParseError
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil || len(batch) == 0 {
			return nil, "an empty or malformed batch", jsonrpc.CodeInvalidRequest
		}
		msgs := make([]jsonrpc.Message, 0, len(batch))
		for _, raw := range batch {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, "a batch holding something that is not a JSON-RPC message (" + err.Error() + ")", jsonrpc.CodeInvalidRequest
			}
			msgs = append(msgs, m)
		}
		return msgs, "", 0
	}
	m, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		return nil, "not a JSON-RPC message (" + err.Error() + ")", jsonrpc.CodeInvalidRequest
	}
	return []jsonrpc.Message{m}, "", 0
}

// cancelledID is the id a notifications/cancelled names, or nil.
func cancelledID(m jsonrpc.Message) json.RawMessage {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/cancelled" {
		return nil
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil || len(p.RequestID) == 0 {
		return nil
	}
	return p.RequestID
}

func writeError(out io.Writer, code int64, msg string) {
	out.Write(append(rpcError(nil, code, msg, nil), '\n'))
}
