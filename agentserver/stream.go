package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"
)

// dial opens the conversation's event stream where the last one ended:
// the session socket after the last event it delivered or, on a server
// that refuses it, the events socket a little before the last event's
// time. A refusal is remembered for the conversation's life.
func (s *Conversation) dial(ctx context.Context) (*socket, error) {
	s.mu.Lock()
	events, seq, last := s.events, s.seq, s.last
	s.mu.Unlock()
	if !events {
		conn, err := s.c.dialSession(ctx, s.id, seq)
		if err == nil {
			return &socket{conn: conn, session: true}, nil
		}
		if !errors.Is(err, errNoSessionSocket) {
			return nil, err
		}
		s.log.Info("the agent-server refused the session socket; following the conversation on /sockets/events")
		s.useEventsSocket()
	}
	conn, err := s.c.dialEvents(ctx, s.id, resumeFrom(last))
	if err != nil {
		return nil, err
	}
	return &socket{conn: conn}, nil
}

func (s *Conversation) useEventsSocket() {
	s.mu.Lock()
	s.events = true
	s.mu.Unlock()
}

// run reads the event stream, reconnecting after a drop where it ended,
// until Close or an error that reconnecting cannot mend.
func (s *Conversation) run(sock *socket) {
	defer close(s.done)
	backoff := s.opts.MinBackoff
	for {
		err := s.read(sock)
		if s.ctx.Err() != nil {
			return
		}
		perr, permanent := s.c.socketError(s.id, err)
		if permanent {
			s.setStatus(func(st *Status) { st.State, st.Error = StateFailed, perr.Error() })
			return
		}
		if sock.session && tooLarge(err) {
			// The session socket would drop every connection at the same
			// event; the events socket sends it whole.
			s.log.Warn("an event is larger than the session socket's frames; following the conversation on /sockets/events")
			s.useEventsSocket()
		}
		s.log.Info("the event stream dropped; reconnecting", "error", err)
		for {
			s.setStatus(func(st *Status) { st.State, st.Error = StateReconnecting, perr.Error() })
			wait := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff = min(backoff*2, s.opts.MaxBackoff)
			next, err := s.dial(s.ctx)
			if err == nil {
				// The socket accepts before it checks the conversation;
				// a REST read says at once whether it is still there.
				if _, err = s.c.Conversation(s.ctx, s.id); err == nil {
					sock, backoff = next, s.opts.MinBackoff
					s.setStatus(func(st *Status) { st.State, st.Error = StateConnected, "" })
					break
				}
				next.conn.CloseNow()
			}
			if s.ctx.Err() != nil {
				return
			}
			var nf *NotFoundError
			var ke *APIKeyError
			if errors.As(err, &nf) || errors.As(err, &ke) {
				s.setStatus(func(st *Status) { st.State, st.Error = StateFailed, err.Error() })
				return
			}
			perr = err
		}
	}
}

// read delivers the events of one socket until it ends.
func (s *Conversation) read(sock *socket) error {
	for {
		_, data, err := sock.conn.Read(s.ctx)
		if err != nil {
			sock.conn.CloseNow()
			return err
		}
		if sock.session {
			s.frame(data)
		} else {
			s.deliver(data, -1)
		}
	}
}

// frame takes one frame of the session socket.
func (s *Conversation) frame(data []byte) {
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		s.log.Warn("a frame that is not JSON was dropped", "error", err)
		return
	}
	switch f.Type {
	case "durable":
		if f.Seq == nil || len(f.Event) == 0 {
			s.log.Warn("a durable frame without its seq or event was dropped")
			return
		}
		s.deliver(f.Event, *f.Seq)
		s.mu.Lock()
		replayed := *f.Seq == s.replayThrough
		s.mu.Unlock()
		if replayed {
			// The replay is over: the state it leaves is the present, and
			// what the agent waits for in it is asked (deliver asks
			// nothing of the replay's past).
			s.confirm()
		}
	case "transient":
		// The state snapshots the log does not keep: passed on as the
		// events socket passes them, and never resumed from.
		if len(f.Event) > 0 {
			s.deliver(f.Event, -1)
		}
	case "error":
		s.log.Warn("the session socket refused a frame of the bridge's", "code", f.Code, "detail", f.Detail)
	case "sync":
		s.log.Debug("the session socket replays", "after", f.FromSeq, "through", f.ThroughSeq)
		if f.ThroughSeq != nil {
			s.mu.Lock()
			s.replayThrough = *f.ThroughSeq
			s.mu.Unlock()
		}
	default:
		// item_started, delta and item_aborted follow a message the LLM
		// streams (the durable event brings its whole text); later frame
		// types are passed over as the protocol asks.
	}
}
