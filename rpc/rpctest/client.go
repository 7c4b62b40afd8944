// Package rpctest is a small JSON-RPC client for tests and benchmarks of
// the bridge, in the spirit of net/http/httptest. It does not go through
// the server's JSON-RPC library (sourcegraph/jsonrpc2), so tests do not
// share its assumptions, and it can send malformed frames on purpose; it
// reads frames and splits messages with package rpc's own small pieces.
// LineFace checks what a face that speaks a message a line (ACP, MCP's
// stdio) answers to any input, for their fuzzers.
package rpctest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// Message is one message received from the bridge.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpc.Error      `json:"error,omitempty"`
}

// Client is a JSON-RPC client over one connection.
type Client struct {
	rwc io.ReadWriteCloser
	wmu sync.Mutex
	w   *bufio.Writer

	nextID atomic.Int64

	mu      sync.Mutex
	cond    *sync.Cond
	pending map[string]chan Message
	notes   []Message
	nulls   []Message // responses with id null (answers to unparseable input)
	closed  bool
	readErr error
	divert  func(Message) // receives notifications instead of notes, when set

	// OnRequest answers requests the bridge sends to the client. The
	// default answers -32601.
	OnRequest func(method string, params json.RawMessage) (any, *rpc.Error)
}

// NewClient starts reading from rwc.
func NewClient(rwc io.ReadWriteCloser) *Client {
	c := &Client{rwc: rwc, w: bufio.NewWriter(rwc), pending: map[string]chan Message{}}
	c.cond = sync.NewCond(&c.mu)
	go c.read()
	return c
}

func (c *Client) read() {
	r := bufio.NewReaderSize(c.rwc, 64<<10)
	for {
		body, err := rpc.ReadFrame(r)
		if err != nil {
			c.mu.Lock()
			c.closed, c.readErr = true, err
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[string]chan Message{}
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
		m, err := decodeMessage(body)
		if err != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null":
			go c.answer(m)
		case m.Method != "":
			c.mu.Lock()
			if divert := c.divert; divert != nil {
				c.mu.Unlock()
				divert(m)
				continue
			}
			c.notes = append(c.notes, m)
			c.cond.Broadcast()
			c.mu.Unlock()
		case len(m.ID) == 0 || string(m.ID) == "null":
			c.mu.Lock()
			c.nulls = append(c.nulls, m)
			c.cond.Broadcast()
			c.mu.Unlock()
		default:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (c *Client) answer(m Message) {
	var result any
	var rerr *rpc.Error
	if c.OnRequest != nil {
		result, rerr = c.OnRequest(m.Method, m.Params)
	} else {
		rerr = &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "test client does not handle " + m.Method}
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = result
	}
	c.Send(resp)
}

// Send writes one message.
func (c *Client) Send(msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.SendRaw(body)
}

// SendRaw frames and writes body as is (it need not be valid JSON).
func (c *Client) SendRaw(body []byte) error {
	return c.SendBytes([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)))
}

// SendBytes writes bytes with no framing at all.
func (c *Client) SendBytes(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	return c.w.Flush()
}

// Start sends a request and returns its id and a channel for the answer.
func (c *Client) Start(method string, params any) (int64, <-chan Message, error) {
	id := c.nextID.Add(1)
	ch := make(chan Message, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return id, nil, fmt.Errorf("connection closed: %v", c.readErr)
	}
	c.pending[strconv.FormatInt(id, 10)] = ch
	c.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	return id, ch, c.Send(msg)
}

// Call sends a request and waits for the answer. A JSON-RPC error answer is
// returned as *rpc.Error; result may be nil.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	_, ch, err := c.Start(method, params)
	if err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("connection closed before %s was answered", method)
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.Send(msg)
}

// Initialize runs the initialize/initialized handshake with params.
func (c *Client) Initialize(ctx context.Context, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{"processId": nil, "capabilities": map[string]any{}}
	}
	var res json.RawMessage
	if err := c.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	return res, c.Notify("initialized", map[string]any{})
}

// DivertNotifications hands every later notification to fn, on the reading
// goroutine, instead of keeping it for AwaitNotification. A long session
// (a soak test) would otherwise keep every notification it ever received.
func (c *Client) DivertNotifications(fn func(Message)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.divert = fn
}

// AwaitNotification waits for the first notification of method (from the
// start of the connection) that satisfies match, which may be nil.
// Matched notifications are consumed.
func (c *Client) AwaitNotification(ctx context.Context, method string, match func(json.RawMessage) bool) (Message, error) {
	stop := context.AfterFunc(ctx, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for i, n := range c.notes {
			if n.Method == method && (match == nil || match(n.Params)) {
				c.notes = append(c.notes[:i:i], c.notes[i+1:]...)
				return n, nil
			}
		}
		if c.closed {
			return Message{}, fmt.Errorf("connection closed while waiting for %s", method)
		}
		if ctx.Err() != nil {
			return Message{}, fmt.Errorf("no %s notification: %w", method, ctx.Err())
		}
		c.cond.Wait()
	}
}

// AwaitNullResponse waits for the next answer with id null, the bridge's
// reply to input it could not attribute to a request.
func (c *Client) AwaitNullResponse(ctx context.Context) (Message, error) {
	stop := context.AfterFunc(ctx, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.nulls) == 0 {
		if c.closed {
			return Message{}, fmt.Errorf("connection closed while waiting for an id-null answer")
		}
		if ctx.Err() != nil {
			return Message{}, ctx.Err()
		}
		c.cond.Wait()
	}
	m := c.nulls[0]
	c.nulls = c.nulls[1:]
	return m, nil
}

// AwaitClosed waits until the bridge closes its side of the connection.
func (c *Client) AwaitClosed(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closed {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.cond.Wait()
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.rwc.Close() }

// decodeMessage splits a message into its members without decoding the
// result, which stays a slice of body (ReadFrame gives each frame its own)
// for Call to decode once into the caller's type: encoding/json would scan
// a 1 MiB result twice here (validation, then skipping it) and copy it,
// which was most of what a benchmark of a large read measured. A body this
// quick split cannot take apart goes to encoding/json, whose error drops
// it as before.
func decodeMessage(body []byte) (Message, error) {
	var m Message
	members, ok := rpc.TopLevelMembers(body)
	if !ok {
		err := json.Unmarshal(body, &m)
		if err == nil {
			err = fmt.Errorf("unexpected message shape")
		}
		return m, err
	}
	for _, kv := range members {
		var err error
		switch kv.Key {
		case `"id"`:
			m.ID = kv.Value
		case `"method"`:
			err = json.Unmarshal(kv.Value, &m.Method)
		case `"params"`:
			m.Params = kv.Value
		case `"result"`:
			m.Result = kv.Value
		case `"error"`:
			m.Error = nil
			err = json.Unmarshal(kv.Value, &m.Error)
		}
		if err != nil {
			return Message{}, err
		}
	}
	return m, nil
}
