// Package relaylink is the bridge's end of a relay: it dials out to an
// `oh-bridge relay` (the person's machine opens no port), registers the
// editor window, and serves each agent MCP session the relay opens on it
// with the window's own MCP server, as a local agent's would be. The link
// comes back by itself after a drop; a session's messages cross the gap
// once each (relay/wire).
package relaylink

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// Host is what serves the agents' sessions: the window's MCP server.
type Host interface {
	// ServeConnection serves one agent MCP session on t until it ends or
	// ctx does.
	ServeConnection(ctx context.Context, t mcp.Transport) error
	// ToolList is the tools as the server lists them, and its
	// instructions: the relay serves the same.
	ToolList() ([]*mcp.Tool, string)
}

// Options configure a link.
type Options struct {
	// URL is the relay's editors' side, e.g.
	// "https://cloud.example/s/abc/relay" (…/link is dialed).
	URL    string
	Secret string
	// Name, Roots and Version describe the window.
	Name    string
	Roots   []string
	Version string
	Host    Host
	Logger  *slog.Logger
	// HTTPClient dials (nil: http.DefaultClient).
	HTTPClient *http.Client
	// OnState is told each time the link comes up (err nil) or fails.
	OnState func(up bool, err error)
	// Heartbeat is how often the link is pinged (0: wire.Heartbeat).
	Heartbeat time.Duration
}

func (o Options) heartbeat() time.Duration {
	if o.Heartbeat == 0 {
		return wire.Heartbeat
	}
	return o.Heartbeat
}

// Link is a window's registration with a relay.
type Link struct {
	opts   Options
	log    *slog.Logger
	window string
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	link     *wire.Link
	streams  map[string]*wire.Stream
	ended    []string // the streams it ended lately, newest last (maxEnded)
	bound    []wire.Bound
	waiting  map[string]chan wire.Frame
	relayKey string // the relay's name for the window
}

// Start registers the window and keeps it registered until Close.
func Start(ctx context.Context, o Options) *Link {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Link{opts: o, log: o.Logger.With("component", "relaylink"), window: rand.Text(), ctx: ctx, cancel: cancel,
		done: make(chan struct{}), streams: map[string]*wire.Stream{}, waiting: map[string]chan wire.Frame{}}
	go l.run()
	return l
}

// Dial starts the window's registration and waits for its first link:
// the link, or the first failure in words (a wrong secret, a relay not
// there), the registration then given up. within bounds the wait.
func Dial(ctx context.Context, o Options, within time.Duration) (*Link, error) {
	state := make(chan error, 1)
	onState := o.OnState
	o.OnState = func(up bool, err error) {
		if up {
			err = nil
		}
		select {
		case state <- err:
		default:
		}
		if onState != nil {
			onState(up, err)
		}
	}
	l := Start(context.Background(), o)
	wait, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	select {
	case err := <-state:
		if err != nil {
			l.Close()
			return nil, err
		}
		return l, nil
	case <-wait.Done():
		l.Close()
		return nil, &Error{kind: "relay_unreachable", words: fmt.Sprintf("the relay at %s did not answer within %s: check the URL (the relay's editors' side, as its proxy exposes it) and that the relay runs", o.URL, within)}
	}
}

// Name is the window's name on the relay (its own, or told apart from a
// namesake's), once the relay has welcomed it.
func (l *Link) Name() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.relayKey == "" {
		return l.opts.Name
	}
	return l.relayKey
}

// WindowID is the window's id on the relay.
func (l *Link) WindowID() string { return l.window }

// Close ends the registration and every session on it.
func (l *Link) Close() {
	l.cancel()
	<-l.done
}

// run dials, serves the link until it drops, and dials again, waiting
// longer after each failure (up to 5 s), until Close.
func (l *Link) run() {
	defer close(l.done)
	defer func() {
		l.mu.Lock()
		for _, s := range l.streams {
			s.Shut(errors.New("the bridge closed its relay link"))
		}
		l.mu.Unlock()
	}()
	wait := 100 * time.Millisecond
	for l.ctx.Err() == nil {
		up, err := l.once()
		if l.ctx.Err() != nil {
			return
		}
		if l.opts.OnState != nil {
			l.opts.OnState(false, err)
		}
		l.log.Info("relay link down", "error", err)
		if up {
			wait = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.ctx.Done():
			t.Stop()
			return
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// once is one link's life: dial, hello, welcome, frames. up says whether
// it got as far as the welcome.
func (l *Link) once() (up bool, err error) {
	url := strings.TrimSuffix(l.opts.URL, "/") + "/link"
	dctx, cancel := context.WithTimeout(l.ctx, 15*time.Second)
	conn, resp, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPClient: l.opts.HTTPClient,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + l.opts.Secret}},
	})
	cancel()
	if err != nil {
		return false, dialError(l.opts.URL, resp, err)
	}
	link := wire.NewLink(l.ctx, conn)
	defer conn.CloseNow()
	tools, instructions := l.opts.Host.ToolList()
	// Again, the name the relay gave: the person was told it, and a
	// relay that restarted gives it back rather than to a namesake that
	// came back first.
	win := wire.Window{ID: l.window, Name: l.Name(), Roots: l.opts.Roots, Version: l.opts.Version, Instructions: instructions}
	for _, t := range tools {
		raw, err := json.Marshal(t)
		if err != nil {
			return false, err
		}
		win.Tools = append(win.Tools, raw)
	}
	l.mu.Lock()
	win.Conversations = append([]wire.Bound(nil), l.bound...)
	has := map[string]uint64{}
	for id, s := range l.streams {
		has[id] = s.Received()
	}
	ended := append([]string(nil), l.ended...)
	l.mu.Unlock()
	if err := link.Send(wire.Frame{T: wire.THello, Window: &win, Streams: has, Ended: ended}); err != nil {
		return false, err
	}
	hctx, cancel := context.WithTimeout(l.ctx, 15*time.Second)
	welcome, err := link.Receive(hctx)
	cancel()
	if err != nil {
		return false, err
	}
	if welcome.T == wire.TError {
		return false, &Error{kind: welcome.Kind, words: "the relay refused the window: " + welcome.Why}
	}
	if welcome.T != wire.TWelcome {
		return false, fmt.Errorf("the relay answered a hello with %q", welcome.T)
	}
	l.mu.Lock()
	l.link = link
	if welcome.Window != nil {
		l.relayKey = welcome.Window.Name
	}
	var todo []wire.Resend
	for id, s := range l.streams {
		got, ok := welcome.Streams[id]
		if !ok {
			// The relay no longer has it (it restarted, or gave the
			// window up): the agent's session is gone.
			s.Shut(errors.New("the relay no longer carries this session"))
			delete(l.streams, id)
			continue
		}
		link.Hold(s)
		todo = append(todo, wire.Resend{Stream: s, Received: got})
	}
	l.mu.Unlock()
	// The resends go while the link reads (wire.Link.Carry says why).
	go link.CarryAll(todo)
	if l.opts.OnState != nil {
		l.opts.OnState(true, nil)
	}
	beat, stop := context.WithCancel(l.ctx)
	defer stop()
	go link.Keepalive(beat, l.opts.heartbeat())
	err = link.Run(l.ctx, func(f wire.Frame) error { return l.fromRelay(link, f) })
	l.mu.Lock()
	l.link = nil
	l.mu.Unlock()
	return true, err
}

// fromRelay handles the relay's frames other than its streams'.
func (l *Link) fromRelay(link *wire.Link, f wire.Frame) error {
	switch f.T {
	case wire.TOpen:
		s := wire.NewStream(f.S)
		l.mu.Lock()
		l.streams[f.S] = s
		l.mu.Unlock()
		if err := link.Carry(s, 0); err != nil {
			return nil // the link is going; the relay will open again
		}
		go l.serve(s)
		return nil
	case wire.TBound, wire.TError:
		l.mu.Lock()
		ch := l.waiting[f.ID]
		l.mu.Unlock()
		if ch != nil {
			ch <- f
		} else if f.T == wire.TError {
			l.log.Info("the relay refused a frame", "why", f.Why, "kind", f.Kind)
		}
		return nil
	}
	return fmt.Errorf("a relay does not send %q frames", f.T)
}

// maxEnded bounds the ended streams a hello names: far more sessions
// than end while one link is down.
const maxEnded = 1024

// serve runs one agent session on the window's MCP server.
func (l *Link) serve(s *wire.Stream) {
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	go func() {
		<-s.Done()
		cancel()
	}()
	err := l.opts.Host.ServeConnection(ctx, wire.Transport{Stream: s})
	l.mu.Lock()
	delete(l.streams, s.ID())
	// Named in the next hello: its close below may be lost with the link.
	l.ended = append(l.ended, s.ID())
	if len(l.ended) > maxEnded {
		l.ended = l.ended[len(l.ended)-maxEnded:]
	}
	link := l.link
	l.mu.Unlock()
	var ce *wire.ClosedError
	closedByRelay := errors.As(s.Err(), &ce)
	s.Shut(wire.ErrStreamClosed)
	if link != nil && !closedByRelay {
		why := "the window's MCP session ended"
		if err != nil {
			why = err.Error()
		}
		_ = link.Send(wire.Frame{T: wire.TClose, S: s.ID(), Why: why, Kind: "session_ended"})
		link.Drop(s.ID())
	}
}

// Bind asks the relay for a new conversation bound to this window: the
// URL and token its agent's mcp_config names.
func (l *Link) Bind(ctx context.Context) (wire.Bound, error) {
	id := rand.Text()
	ch := make(chan wire.Frame, 1)
	l.mu.Lock()
	link := l.link
	l.waiting[id] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waiting, id)
		l.mu.Unlock()
	}()
	if link == nil {
		return wire.Bound{}, &Error{kind: "relay_unreachable", words: fmt.Sprintf("the bridge is not connected to the relay at %s (it keeps trying); start the conversation when it is", l.opts.URL)}
	}
	if err := link.Send(wire.Frame{T: wire.TBind, ID: id}); err != nil {
		return wire.Bound{}, err
	}
	select {
	case f := <-ch:
		if f.T == wire.TError || f.Bound == nil {
			return wire.Bound{}, &Error{kind: f.Kind, words: "the relay refused the conversation: " + f.Why}
		}
		l.mu.Lock()
		l.bound = append(l.bound, *f.Bound)
		l.mu.Unlock()
		return *f.Bound, nil
	case <-ctx.Done():
		return wire.Bound{}, ctx.Err()
	}
}
