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
func (c *Conversation) dial(ctx context.Context) (*socket, error) {
	c.mu.Lock()
	events, seq, last := c.events, c.seq, c.last
	c.mu.Unlock()
	if !events {
		conn, err := c.c.dialSession(ctx, c.id, seq)
		if err == nil {
			return &socket{conn: conn, session: true}, nil
		}
		if !errors.Is(err, errNoSessionSocket) {
			return nil, err
		}
		c.log.Info("the agent-server refused the session socket; following the conversation on /sockets/events")
		c.useEventsSocket()
	}
	conn, err := c.c.dialEvents(ctx, c.id, resumeFrom(last))
	if err != nil {
		return nil, err
	}
	return &socket{conn: conn}, nil
}

func (c *Conversation) useEventsSocket() {
	c.mu.Lock()
	c.events = true
	c.mu.Unlock()
}

// run reads the event stream, reconnecting after a drop where it ended,
// until Close or an error that reconnecting cannot mend.
func (c *Conversation) run(sock *socket) {
	defer close(c.done)
	backoff := c.opts.MinBackoff
	for {
		err := c.read(sock)
		if c.ctx.Err() != nil {
			return
		}
		perr, permanent := c.c.socketError(c.id, err)
		if permanent {
			c.setStatus(func(st *Status) { st.State, st.Error = StateFailed, perr.Error() })
			return
		}
		if sock.session && tooLarge(err) {
			// The session socket would drop every connection at the same
			// event; the events socket sends it whole.
			c.log.Warn("an event is larger than the session socket's frames; following the conversation on /sockets/events")
			c.useEventsSocket()
		}
		c.log.Info("the event stream dropped; reconnecting", "error", err)
		for {
			c.setStatus(func(st *Status) { st.State, st.Error = StateReconnecting, perr.Error() })
			wait := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
			select {
			case <-c.ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff = min(backoff*2, c.opts.MaxBackoff)
			next, err := c.dial(c.ctx)
			if err == nil {
				// The socket accepts before it checks the conversation;
				// a REST read says at once whether it is still there.
				if _, err = c.c.Conversation(c.ctx, c.id); err == nil {
					sock, backoff = next, c.opts.MinBackoff
					c.setStatus(func(st *Status) { st.State, st.Error = StateConnected, "" })
					break
				}
				next.conn.CloseNow()
			}
			if c.ctx.Err() != nil {
				return
			}
			var nf *NotFoundError
			var ke *APIKeyError
			if errors.As(err, &nf) || errors.As(err, &ke) {
				c.setStatus(func(st *Status) { st.State, st.Error = StateFailed, err.Error() })
				return
			}
			perr = err
		}
	}
}

// read delivers the events of one socket until it ends.
func (c *Conversation) read(sock *socket) error {
	for {
		_, data, err := sock.conn.Read(c.ctx)
		if err != nil {
			sock.conn.CloseNow()
			return err
		}
		if sock.session {
			c.frame(data)
		} else {
			c.deliver(data, -1)
		}
	}
}

// frame takes one frame of the session socket.
func (c *Conversation) frame(data []byte) {
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		c.log.Warn("a frame that is not JSON was dropped", "error", err)
		return
	}
	switch f.Type {
	case "durable":
		if f.Seq == nil || len(f.Event) == 0 {
			c.log.Warn("a durable frame without its seq or event was dropped")
			return
		}
		c.deliver(f.Event, *f.Seq)
		c.mu.Lock()
		replayed := *f.Seq == c.replayThrough
		c.mu.Unlock()
		if replayed {
			// The replay is over: the state it leaves is the present, and
			// what the agent waits for in it is asked (deliver asks
			// nothing of the replay's past).
			c.confirm()
		}
	case "transient":
		// The state snapshots the log does not keep: passed on as the
		// events socket passes them, and never resumed from.
		if len(f.Event) > 0 {
			c.deliver(f.Event, -1)
		}
	case "error":
		c.log.Warn("the session socket refused a frame of the bridge's", "code", f.Code, "detail", f.Detail)
	case "sync":
		c.log.Debug("the session socket replays", "after", f.FromSeq, "through", f.ThroughSeq)
		if f.ThroughSeq != nil {
			c.mu.Lock()
			c.replayThrough = *f.ThroughSeq
			c.mu.Unlock()
		}
	default:
		// item_started, delta and item_aborted follow a message the LLM
		// streams (the durable event brings its whole text); later frame
		// types are passed over as the protocol asks.
	}
}
