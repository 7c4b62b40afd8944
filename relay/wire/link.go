package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// WriteTimeout bounds one frame's write: a peer that stops reading is
// given up, and its streams wait for the next link.
const WriteTimeout = 30 * time.Second

// Link is one WebSocket between a bridge and a relay, either end. It
// reads frames in order, hands each stream's to the stream and answers
// with acknowledgements; other frames go to the owner's handler.
type Link struct {
	conn *websocket.Conn
	ctx  context.Context

	mu      sync.Mutex
	streams map[string]carried
	// lost is why this end gave the link up (a missed heartbeat): Run
	// returns it rather than the read's error, which only says that the
	// connection was closed under it.
	lost error
}

// carried is a stream on this link, with its attachment's number.
type carried struct {
	s   *Stream
	gen uint64
}

// NewLink wraps a WebSocket. Its frames are read by Run.
func NewLink(ctx context.Context, conn *websocket.Conn) *Link {
	conn.SetReadLimit(MaxFrame)
	return &Link{conn: conn, ctx: ctx, streams: map[string]carried{}}
}

// Send writes one frame.
func (l *Link) Send(f Frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(l.ctx, WriteTimeout)
	defer cancel()
	return l.conn.Write(ctx, websocket.MessageText, data)
}

// Receive reads one frame, for the exchange (hello, welcome) that comes
// before Run.
func (l *Link) Receive(ctx context.Context) (Frame, error) {
	typ, data, err := l.conn.Read(ctx)
	if err != nil {
		return Frame{}, err
	}
	var f Frame
	if typ != websocket.MessageText {
		return Frame{}, &FrameError{"a binary WebSocket message: the relay's frames are JSON text"}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return Frame{}, &FrameError{fmt.Sprintf("a frame that is not JSON: %v", err)}
	}
	if err := f.Check(); err != nil {
		return Frame{}, &FrameError{err.Error()}
	}
	return f, nil
}

// Hold registers a stream on this link before its messages are resent,
// so that what the peer sends for it at once is taken.
func (l *Link) Hold(s *Stream) {
	l.mu.Lock()
	if _, ok := l.streams[s.ID()]; !ok {
		l.streams[s.ID()] = carried{s: s}
	}
	l.mu.Unlock()
}

// Carry puts a stream on this link, after the peer said what it has of
// it: what the peer lacks is sent again. The resend writes to the
// network, so a link's streams are carried while Run reads (each side
// resending what the other does not read would be a deadlock).
func (l *Link) Carry(s *Stream, peerReceived uint64) error {
	l.Hold(s)
	gen, err := s.Attach(l.Send, peerReceived)
	l.mu.Lock()
	if c, ok := l.streams[s.ID()]; ok && c.s == s {
		l.streams[s.ID()] = carried{s, gen}
	}
	l.mu.Unlock()
	return err
}

// Resend is a stream to carry on a new link, and what the peer said it
// received of it.
type Resend struct {
	Stream   *Stream
	Received uint64
}

// CarryAll carries each stream, in turn, until the link fails: the
// resends of a reconnect, run while Run reads, after Hold put each on
// the link.
func (l *Link) CarryAll(todo []Resend) {
	for _, r := range todo {
		if l.Carry(r.Stream, r.Received) != nil {
			return // the link is going; the next one carries them
		}
	}
}

// Drop takes a stream off the link (it closed).
func (l *Link) Drop(id string) {
	l.mu.Lock()
	delete(l.streams, id)
	l.mu.Unlock()
}

func (l *Link) stream(id string) *Stream {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.streams[id].s
}

// Run reads frames until the link fails or ctx ends. Stream frames are
// handled here; every other frame goes to other, whose error (a frame
// refused) is answered in words, the link living on. When Run returns,
// every stream it carried is detached, its unacknowledged messages kept
// for the next link.
func (l *Link) Run(ctx context.Context, other func(Frame) error) error {
	defer func() {
		l.mu.Lock()
		for _, c := range l.streams {
			c.s.DetachIf(c.gen)
		}
		l.mu.Unlock()
	}()
	for {
		f, err := l.Receive(ctx)
		if err != nil {
			var bad *FrameError
			if !errors.As(err, &bad) {
				l.mu.Lock()
				lost := l.lost
				l.mu.Unlock()
				if lost != nil && ctx.Err() == nil {
					return lost
				}
				return err
			}
			// A bad frame: say so, keep the link.
			if err := l.Send(Frame{T: TError, Why: err.Error(), Kind: "bad_frame"}); err != nil {
				return err
			}
			continue
		}
		switch f.T {
		case TMsg:
			s := l.stream(f.S)
			if s == nil {
				_ = l.Send(Frame{T: TClose, S: f.S, Why: "no such stream on this link", Kind: "stream_unknown"})
				continue
			}
			ack, err := s.Deliver(ctx, f)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				_ = l.Send(Frame{T: TClose, S: f.S, Why: err.Error(), Kind: "stream_broken"})
				s.Shut(err)
				l.Drop(f.S)
				continue
			}
			if err := l.Send(ack); err != nil {
				return err
			}
		case TAck:
			if s := l.stream(f.S); s != nil {
				s.Ack(f.N)
			}
		case TClose:
			if s := l.stream(f.S); s != nil {
				s.Shut(&ClosedError{Words: f.Why, ErrKind: f.Kind})
				l.Drop(f.S)
			}
		default:
			if err := other(f); err != nil {
				if err := l.Send(ErrorFrame(f.ID, err)); err != nil {
					return err
				}
			}
		}
	}
}

// Heartbeat is how often each end pings the other, and how long it waits
// for the pong: a link whose network went quiet (a cable out, a laptop
// asleep, a veth down) sends no close, and TCP alone would notice only
// after minutes. A missed pong closes the link, so the bridge dials again
// and the relay starts the window's grace.
const Heartbeat = 5 * time.Second

// Keepalive pings the peer every interval until the link ends, closing
// it when a pong does not come within the interval. Run must be reading
// (it takes the pongs).
func (l *Link) Keepalive(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := l.conn.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				l.mu.Lock()
				l.lost = &HeartbeatError{Within: interval}
				l.mu.Unlock()
				_ = l.conn.CloseNow()
			}
			return
		}
	}
}

// HeartbeatError is a link given up because the peer did not answer a
// ping within the interval: the network went quiet.
type HeartbeatError struct{ Within time.Duration }

func (e *HeartbeatError) Error() string {
	return fmt.Sprintf("no answer to the heartbeat within %s", e.Within)
}

// Close ends the link with a normal closure.
func (l *Link) Close(reason string) error {
	return l.conn.Close(websocket.StatusNormalClosure, reason)
}

// ClosedError is a stream closed by the peer, with its words and kind.
type ClosedError struct{ Words, ErrKind string }

func (e *ClosedError) Error() string { return e.Words }

// Kind is the error's kind, as the peer gave it.
func (e *ClosedError) Kind() string { return e.ErrKind }

// FrameError is a frame that could not be taken; the link lives on.
type FrameError struct{ Words string }

func (e *FrameError) Error() string { return e.Words }

// Kind is the error's kind.
func (e *FrameError) Kind() string { return "bad_frame" }

// ErrorFrame is the error frame that answers the frame id with err: its
// words, and its kind ("refused" when it has none).
func ErrorFrame(id string, err error) Frame {
	kind := "refused"
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		kind = k.Kind()
	}
	return Frame{T: TError, ID: id, Why: err.Error(), Kind: kind}
}
