// Package dial connects oh-bridge to an OpenHands server, on demand: a
// small Socket.IO v5 / Engine.IO v4 client (websocket transport only) and
// the few OpenHands REST calls the bridge needs.
//
// It owns the wire: the Engine.IO handshake and heartbeat, Socket.IO
// CONNECT/CONNECT_ERROR, ordered event delivery (including the events
// OpenHands replays before it answers CONNECT), and acks in both
// directions, with a deadline on every step. It knows nothing of JSON-RPC
// or of what the events mean; the caller decides that.
package dial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Options configure Dial.
type Options struct {
	// URL is the server's base URL: http(s)://host[:port][/prefix/].
	// A server behind a proxy under a path prefix is reached at
	// <prefix>/socket.io/.
	URL string
	// Query is sent in the handshake URL. OpenHands reads everything from
	// the query (conversation_id, latest_event_id, session_api_key), and
	// hangs when CONNECT carries an auth payload, so none is ever sent.
	Query url.Values
	// Header and cookies are added to the websocket handshake request.
	Header http.Header
	// HTTPClient performs the handshake (TLS settings, proxies).
	HTTPClient *http.Client
	// ConnectTimeout bounds the whole dial, up to the CONNECT reply. OpenHands
	// replays history and starts the agent before it answers, so the
	// default is generous: 45 s.
	ConnectTimeout time.Duration
	Logger         *slog.Logger
}

// Event is one Socket.IO event received from the server.
type Event struct {
	Name string
	Args []json.RawMessage
	// ackID is the id the server asked to be acknowledged, or -1.
	ackID int
	conn  *Conn
}

// WantsAck reports whether the server asked for an acknowledgement.
func (e Event) WantsAck() bool { return e.ackID >= 0 }

// Ack answers the server's acknowledgement request with args.
func (e Event) Ack(ctx context.Context, args ...any) error {
	if e.ackID < 0 {
		return errors.New("dial: the server did not ask to acknowledge " + e.Name)
	}
	payload, err := json.Marshal(argsOrEmpty(args))
	if err != nil {
		return err
	}
	return e.conn.write(ctx, "43"+strconv.Itoa(e.ackID)+string(payload))
}

// Conn is a connected Socket.IO client (namespace "/").
type Conn struct {
	ws     *websocket.Conn
	log    *slog.Logger
	sid    string
	events chan Event
	done   chan struct{}

	pingInterval, pingTimeout time.Duration

	mu      sync.Mutex
	err     error
	nextAck int
	acks    map[int]chan []json.RawMessage
	closed  bool
}

// UnreachableError means no connection to the server could be made.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	reason := e.Err.Error()
	switch {
	case strings.Contains(reason, "connection refused"):
		reason = "connection refused — is the OpenHands server running?"
	case strings.Contains(reason, "no such host"):
		reason = "no such host — check the server URL"
	}
	return fmt.Sprintf("cannot reach OpenHands at %s: %s", e.URL, reason)
}
func (e *UnreachableError) Unwrap() error { return e.Err }

// HandshakeError means something answered, but not as a Socket.IO server
// would: a wrong URL, a proxy, or not OpenHands at all.
type HandshakeError struct {
	URL    string
	Status int
	Detail string
}

func (e *HandshakeError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s answered HTTP %d to the Socket.IO handshake (%s) — is this the OpenHands server's URL?", e.URL, e.Status, e.Detail)
	}
	return fmt.Sprintf("%s does not speak Socket.IO v5 as OpenHands does: %s", e.URL, e.Detail)
}

// ConnectError is the server's refusal (CONNECT_ERROR), with its message
// verbatim, e.g. "No conversation_id in query params".
type ConnectError struct {
	Message string
	// Details is the refusal's optional "data" object.
	Details json.RawMessage
}

func (e *ConnectError) Error() string {
	return "the OpenHands server refused the connection: " + e.Message
}

// TimeoutError names the step that ran out of time.
type TimeoutError struct {
	Step  string
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %v waiting for %s", e.After, e.Step)
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("dial: connection closed")

// SocketURL is the websocket URL for a server base URL and query.
func SocketURL(base string, query url.Values) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("server URL %q: %v", base, err)
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("server URL %q: use http:// or https://", base)
	}
	if u.Host == "" {
		return "", fmt.Errorf("server URL %q has no host", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/socket.io/"
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("EIO", "4")
	q.Set("transport", "websocket")
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return u.String(), nil
}

// Dial connects and returns once the server answered CONNECT. Events the
// server sent before that answer are waiting, in order, on Events.
func Dial(ctx context.Context, o Options) (*Conn, error) {
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 45 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	wsURL, err := SocketURL(o.URL, o.Query)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	timeout := func(step string) error {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &TimeoutError{Step: step, After: o.ConnectTimeout}
		}
		return ctx.Err()
	}

	ws, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: o.Header, HTTPClient: o.HTTPClient})
	if err != nil {
		if ctx.Err() != nil {
			return nil, timeout("the websocket handshake")
		}
		if resp != nil {
			return nil, &HandshakeError{URL: o.URL, Status: resp.StatusCode, Detail: http.StatusText(resp.StatusCode)}
		}
		return nil, &UnreachableError{URL: o.URL, Err: err}
	}
	// OpenHands accepts 4 MiB per message; its events can be as large.
	ws.SetReadLimit(16 << 20)
	c := &Conn{ws: ws, log: o.Logger.With("component", "dial"), events: make(chan Event), done: make(chan struct{}), acks: map[int]chan []json.RawMessage{}}

	// Engine.IO open packet.
	_, msg, err := ws.Read(ctx)
	if err != nil {
		ws.CloseNow()
		if ctx.Err() != nil {
			return nil, timeout("the Engine.IO open packet")
		}
		return nil, &HandshakeError{URL: o.URL, Detail: "the connection closed before the Engine.IO open packet: " + err.Error()}
	}
	var open struct {
		SID          string `json:"sid"`
		PingInterval int    `json:"pingInterval"`
		PingTimeout  int    `json:"pingTimeout"`
	}
	if len(msg) == 0 || msg[0] != '0' || json.Unmarshal(msg[1:], &open) != nil || open.SID == "" {
		ws.CloseNow()
		return nil, &HandshakeError{URL: o.URL, Detail: fmt.Sprintf("expected an Engine.IO open packet, got %q", clip(string(msg), 80))}
	}
	c.pingInterval = time.Duration(open.PingInterval) * time.Millisecond
	c.pingTimeout = time.Duration(open.PingTimeout) * time.Millisecond

	// Namespace CONNECT, with no auth payload (see Options.Query).
	if err := ws.Write(ctx, websocket.MessageText, []byte("40")); err != nil {
		ws.CloseNow()
		return nil, &UnreachableError{URL: o.URL, Err: err}
	}

	queue := newEventQueue(c.events)
	connected := make(chan error, 1)
	go c.readLoop(queue, connected)
	select {
	case err := <-connected:
		if err != nil {
			c.shutdown(err)
			return nil, err
		}
		return c, nil
	case <-ctx.Done():
		c.shutdown(timeout("the Socket.IO CONNECT reply"))
		return nil, timeout("the Socket.IO CONNECT reply (a server that hangs here may have received an auth payload or lacks session_api_key)")
	}
}

// SID is the Socket.IO session id the server assigned.
func (c *Conn) SID() string { return c.sid }

// Events delivers the server's events in the order they arrived. It is
// closed when the connection ends; drain it until then, since events wait
// in memory for their reader.
func (c *Conn) Events() <-chan Event { return c.events }

// Done is closed when the connection has ended; Err says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is the reason the connection ended (nil while it is up, ErrClosed
// after Close).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Emit sends an event without asking for an acknowledgement.
func (c *Conn) Emit(ctx context.Context, name string, args ...any) error {
	payload, err := json.Marshal(append([]any{name}, args...))
	if err != nil {
		return err
	}
	return c.write(ctx, "42"+string(payload))
}

// Call sends an event and waits for the server's acknowledgement.
func (c *Conn) Call(ctx context.Context, name string, args ...any) ([]json.RawMessage, error) {
	payload, err := json.Marshal(append([]any{name}, args...))
	if err != nil {
		return nil, err
	}
	ch := make(chan []json.RawMessage, 1)
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	id := c.nextAck
	c.nextAck++
	c.acks[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.acks, id)
		c.mu.Unlock()
	}()
	if err := c.write(ctx, "42"+strconv.Itoa(id)+string(payload)); err != nil {
		return nil, err
	}
	select {
	case args, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("connection lost before %s was acknowledged: %w", name, c.Err())
		}
		return args, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close disconnects from the namespace and closes the websocket.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.write(ctx, "41")
	c.shutdown(ErrClosed)
	return nil
}

func (c *Conn) write(ctx context.Context, packet string) error {
	c.mu.Lock()
	closed, err := c.closed, c.err
	c.mu.Unlock()
	if closed {
		return err
	}
	return c.ws.Write(ctx, websocket.MessageText, []byte(packet))
}

// shutdown records why the connection ended and releases everything once.
func (c *Conn) shutdown(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.err = true, err
	for id, ch := range c.acks {
		close(ch)
		delete(c.acks, id)
	}
	c.mu.Unlock()
	c.ws.Close(websocket.StatusNormalClosure, "")
	close(c.done)
}

// readLoop reads packets until the connection ends. connected receives
// the outcome of CONNECT exactly once.
func (c *Conn) readLoop(queue *eventQueue, connected chan<- error) {
	defer queue.close()
	answered := false
	answer := func(err error) {
		if !answered {
			answered = true
			connected <- err
		}
	}
	// Without a ping for pingInterval+pingTimeout the server is gone.
	silence := c.pingInterval + c.pingTimeout + 5*time.Second
	for {
		ctx, cancel := context.WithTimeout(context.Background(), silence)
		typ, msg, err := c.ws.Read(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil {
			if timedOut {
				err = &TimeoutError{Step: "a heartbeat from the server", After: silence}
			} else if !c.isClosed() {
				err = lostError(err)
			}
			answer(err)
			c.shutdown(err)
			return
		}
		if typ != websocket.MessageText || len(msg) == 0 {
			err := errors.New("protocol error: OpenHands never sends binary Socket.IO packets")
			answer(err)
			c.shutdown(err)
			return
		}
		switch msg[0] {
		case '2': // ping → pong
			if err := c.write(context.Background(), "3"); err != nil {
				answer(err)
				c.shutdown(err)
				return
			}
		case '1': // Engine.IO close
			err := errors.New("the OpenHands server closed the connection")
			answer(err)
			c.shutdown(err)
			return
		case '4':
			if err := c.handleSIO(msg[1:], queue, answer); err != nil {
				answer(err)
				c.shutdown(err)
				return
			}
		case '6': // noop
		default:
			c.log.Debug("ignored Engine.IO packet", "packet", clip(string(msg), 40))
		}
	}
}

func (c *Conn) handleSIO(p []byte, queue *eventQueue, answer func(error)) error {
	if len(p) == 0 {
		return errors.New("protocol error: empty Socket.IO packet")
	}
	kind, rest := p[0], p[1:]
	// Only the default namespace: a packet for another one is a protocol error.
	if len(rest) > 0 && rest[0] == '/' {
		return fmt.Errorf("protocol error: packet for namespace %q", clip(string(rest), 30))
	}
	switch kind {
	case '0': // CONNECT reply
		var v struct {
			SID string `json:"sid"`
		}
		if json.Unmarshal(rest, &v) != nil || v.SID == "" {
			return errors.New("protocol error: CONNECT reply without a sid (not a Socket.IO v5 server)")
		}
		c.sid = v.SID
		answer(nil)
	case '4': // CONNECT_ERROR
		ce := &ConnectError{}
		var v struct {
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(rest, &v) == nil {
			ce.Message, ce.Details = v.Message, v.Data
		} else {
			ce.Message = string(rest)
		}
		return ce
	case '1': // DISCONNECT from the server
		return errors.New("the OpenHands server disconnected this client")
	case '2': // EVENT
		id, body := splitAckID(rest)
		var arr []json.RawMessage
		if err := json.Unmarshal(body, &arr); err != nil || len(arr) == 0 {
			return fmt.Errorf("protocol error: bad event payload %q", clip(string(body), 60))
		}
		var name string
		if err := json.Unmarshal(arr[0], &name); err != nil {
			return fmt.Errorf("protocol error: event name %s is not a string", clip(string(arr[0]), 30))
		}
		queue.push(Event{Name: name, Args: arr[1:], ackID: id, conn: c})
	case '3': // ACK
		id, body := splitAckID(rest)
		var arr []json.RawMessage
		if id < 0 || json.Unmarshal(body, &arr) != nil {
			return fmt.Errorf("protocol error: bad ack %q", clip(string(rest), 60))
		}
		c.mu.Lock()
		ch := c.acks[id]
		delete(c.acks, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- arr
		}
	case '5', '6':
		return errors.New("protocol error: OpenHands never sends binary Socket.IO packets")
	default:
		return fmt.Errorf("protocol error: unknown Socket.IO packet type %q", kind)
	}
	return nil
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// lostError says in plain words why an established connection ended.
func lostError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "EOF") {
		return fmt.Errorf("lost the connection to OpenHands: the server closed the connection (stopped or restarting?): %w", err)
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Errorf("lost the connection to OpenHands: the server closed the websocket (%d %s)", ce.Code, ce.Reason)
	}
	return fmt.Errorf("lost the connection to OpenHands: %w", err)
}

// splitAckID separates a leading decimal ack id from the JSON payload.
func splitAckID(p []byte) (int, []byte) {
	i := 0
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	if i == 0 {
		return -1, p
	}
	id, err := strconv.Atoi(string(p[:i]))
	if err != nil {
		return -1, p
	}
	return id, p[i:]
}

func argsOrEmpty(args []any) []any {
	if args == nil {
		return []any{}
	}
	return args
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// eventQueue delivers events in order without ever blocking the reader:
// a slow consumer must not stop pongs, or the server would drop us.
type eventQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []Event
	closed bool
}

func newEventQueue(out chan<- Event) *eventQueue {
	q := &eventQueue{}
	q.cond = sync.NewCond(&q.mu)
	go func() {
		defer close(out)
		for {
			q.mu.Lock()
			for len(q.items) == 0 && !q.closed {
				q.cond.Wait()
			}
			if len(q.items) == 0 {
				q.mu.Unlock()
				return
			}
			e := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			out <- e
		}
	}()
	return q
}

func (q *eventQueue) push(e Event) {
	q.mu.Lock()
	q.items = append(q.items, e)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Signal()
}
