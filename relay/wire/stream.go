package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultWindow is how many bytes of a stream's messages may wait for the
// peer's acknowledgement before Write blocks: enough for a terminal
// call's output (capped at 30,000 characters by OpenHands' rule) many
// times over, small enough that a peer that stops reading cannot make
// the sender hold much.
const DefaultWindow = 4 << 20

// ErrStreamClosed is what Read and Write return once the stream is
// closed, by either end or because its link was given up.
var ErrStreamClosed = errors.New("relay stream closed")

// Stream is one MCP session carried across a link that may drop and come
// back: an mcp.Connection whose messages are numbered, kept until the
// peer acknowledges them, and sent again after a reconnect. The receiver
// delivers each number once, in order, so a message (a tool call's
// result above all) is neither lost nor doubled by a reconnect.
type Stream struct {
	id     string
	window int

	// sending keeps frames in their numbers' order on the link. It is
	// held across a send; mu is never, so that the link's reader, which
	// takes acknowledgements, is not held up by a write the peer is slow
	// to read (each side's reader waiting on the other's writer would be
	// a deadlock).
	sending  sync.Mutex
	mu       sync.Mutex
	send     func(Frame) error // the current link; nil while it is down
	linkGen  uint64            // counts attaches, so a failed send forgets only its own link
	next     uint64            // the number the next written message takes
	unacked  []Frame           // written, not yet acknowledged, in order
	held     int               // bytes of unacked
	room     chan struct{}     // closed and replaced when held shrinks
	received uint64            // the last number delivered to Read
	closed   bool
	why      error

	incoming chan jsonrpc.Message
	done     chan struct{}
}

// NewStream returns a stream with no link yet; Attach gives it one.
func NewStream(id string) *Stream {
	return &Stream{id: id, window: DefaultWindow, next: 1, room: make(chan struct{}),
		incoming: make(chan jsonrpc.Message, 64), done: make(chan struct{})}
}

// ID is the stream's name on its link.
func (s *Stream) ID() string { return s.id }

// SessionID is part of mcp.Connection; the relay's streams have none of
// their own (the agent's HTTP session has it).
func (s *Stream) SessionID() string { return "" }

// Received is the number of the last message delivered: what a reconnect
// tells the peer, so that it resends only what came after.
func (s *Stream) Received() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// Attach gives the stream a (new) link, after the peer said it has
// everything up to peerReceived: what it acknowledged is dropped and the
// rest is sent again, in order, before anything newer. It returns the
// attachment's number, for DetachIf.
func (s *Stream) Attach(send func(Frame) error, peerReceived uint64) (uint64, error) {
	s.sending.Lock()
	defer s.sending.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrStreamClosed
	}
	s.ackLocked(peerReceived)
	again := append([]Frame(nil), s.unacked...)
	s.send = send
	s.linkGen++
	gen := s.linkGen
	s.mu.Unlock()
	for _, f := range again {
		if err := send(f); err != nil {
			s.dropLink(gen)
			return gen, err
		}
	}
	return gen, nil
}

// Detach forgets the link (it dropped); writes are kept for the next one.
func (s *Stream) Detach() {
	s.mu.Lock()
	s.send = nil
	s.mu.Unlock()
}

// DetachIf forgets the link of attachment gen, if the stream is still on
// it: a link that ends after a newer one took the stream over leaves it
// there.
func (s *Stream) DetachIf(gen uint64) { s.dropLink(gen) }

// dropLink forgets the link of attach gen, if it is still the stream's.
func (s *Stream) dropLink(gen uint64) {
	s.mu.Lock()
	if s.linkGen == gen {
		s.send = nil
	}
	s.mu.Unlock()
}

// Write numbers msg, keeps it until the peer acknowledges it, and sends
// it on the link if there is one. It blocks while more than the window
// waits for acknowledgement (back-pressure on a slow or absent peer),
// until ctx ends.
func (s *Stream) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("relay stream %s: %w", s.id, err)
	}
	// Room is awaited without holding sending: an Attach, which brings
	// the acknowledgements that make room, must be able to take it.
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrStreamClosed
		}
		fits := s.held == 0 || s.held+len(data) <= s.window
		room := s.room
		s.mu.Unlock()
		if fits {
			s.sending.Lock()
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				s.sending.Unlock()
				return ErrStreamClosed
			}
			if s.held == 0 || s.held+len(data) <= s.window {
				break // with sending and mu held
			}
			s.mu.Unlock()
			s.sending.Unlock()
			continue
		}
		select {
		case <-room:
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer s.sending.Unlock()
	f := Frame{T: TMsg, S: s.id, N: s.next, M: data}
	s.next++
	s.unacked = append(s.unacked, f)
	s.held += len(data)
	send, gen := s.send, s.linkGen
	s.mu.Unlock()
	if send != nil {
		if err := send(f); err != nil {
			// The link is going; the frame waits for the next one.
			s.dropLink(gen)
		}
	}
	return nil
}

// Read returns the next message from the peer.
func (s *Stream) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-s.incoming:
		return m, nil
	case <-s.done:
		// Messages delivered before the close are still read.
		select {
		case m := <-s.incoming:
			return m, nil
		default:
		}
		return nil, s.closeErr()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Deliver takes a message frame from the link. A number already
// delivered is a resend after a reconnect: it is acknowledged again and
// dropped. It returns the acknowledgement to send back.
func (s *Stream) Deliver(ctx context.Context, f Frame) (Frame, error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return Frame{}, ErrStreamClosed
	case f.N <= s.received:
		ack := Frame{T: TAck, S: s.id, N: s.received}
		s.mu.Unlock()
		return ack, nil
	case f.N != s.received+1:
		s.mu.Unlock()
		return Frame{}, fmt.Errorf("relay stream %s: message %d after %d: a message was lost on the link", s.id, f.N, s.received)
	}
	s.mu.Unlock()
	msg, err := jsonrpc.DecodeMessage(f.M)
	if err != nil {
		return Frame{}, fmt.Errorf("relay stream %s: message %d: %w", s.id, f.N, err)
	}
	// Numbers are taken in order by the link's one reader, so nothing
	// else delivers between the check above and here.
	select {
	case s.incoming <- msg:
	case <-s.done:
		return Frame{}, ErrStreamClosed
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
	s.mu.Lock()
	s.received = f.N
	s.mu.Unlock()
	return Frame{T: TAck, S: s.id, N: f.N}, nil
}

// Ack drops what the peer has acknowledged.
func (s *Stream) Ack(n uint64) {
	s.mu.Lock()
	s.ackLocked(n)
	s.mu.Unlock()
}

func (s *Stream) ackLocked(n uint64) {
	i := 0
	for i < len(s.unacked) && s.unacked[i].N <= n {
		s.held -= len(s.unacked[i].M)
		i++
	}
	if i == 0 {
		return
	}
	s.unacked = append(s.unacked[:0:0], s.unacked[i:]...)
	close(s.room)
	s.room = make(chan struct{})
}

// Close ends the stream; Shut ends it with a reason Read and Write give.
func (s *Stream) Close() error {
	s.Shut(ErrStreamClosed)
	return nil
}

// Shut closes the stream with why as the error its reads and writes
// return from now on. The first reason stays.
func (s *Stream) Shut(why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed, s.why, s.send = true, why, nil
	close(s.done)
}

// Done is closed when the stream is.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is why the stream closed, nil while it is open.
func (s *Stream) Err() error { return s.closeErr() }

func (s *Stream) closeErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// Pending is how many written messages wait for acknowledgement.
func (s *Stream) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.unacked)
}
