package agentserver

import (
	"context"
	"time"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

// deliver passes an event on once, and follows the conversation's state.
// seq is its index in the log when the session socket sent it as durable,
// else -1.
func (c *Conversation) deliver(data []byte, seq int) {
	ev, err := ohevents.Decode(data)
	if err != nil {
		c.log.Warn("an event that is not JSON was dropped", "error", err)
		return
	}
	if o, ok := ev.(*ohevents.Other); ok && o.Mismatch != nil {
		c.log.Warn("an event's fields are not the types'; it is passed on as it came", "error", o.Mismatch)
	}
	h := ev.Header()
	c.mu.Lock()
	if seq >= 0 {
		if seq <= c.seq {
			// Behind the cursor: a repeat, unless it was never delivered.
			// 1.49.1 sends a message the user sends to an idle
			// conversation after the state update logged behind it (seq
			// 2, then 1): that one is delivered late, and the id check
			// below drops a true repeat.
			if h.ID == "" || c.seen[h.ID] {
				c.repeats++
				c.mu.Unlock()
				return
			}
		} else {
			if seq != c.seq+1 {
				// The server passes over an event it cannot read on its
				// disk, or sends one late (above).
				c.log.Warn("the session socket skipped events", "after", c.seq, "next", seq)
			}
			c.seq = seq
		}
	}
	if h.ID != "" {
		if c.seen[h.ID] {
			c.repeats++
			c.mu.Unlock()
			return
		}
		c.seen[h.ID] = true
	}
	if h.Timestamp != "" {
		c.last = h.Timestamp
	}
	switch e := ev.(type) {
	case *ohevents.ActionEvent:
		if e.ID != "" && !c.answered[e.ID] && (e.ToolCallID == "" || !c.answeredCalls[e.ToolCallID]) {
			c.pending[e.ID] = e
			c.order = append(c.order, e.ID)
			if e.ToolCallID != "" {
				c.calls[e.ToolCallID] = e.ID
			}
		}
	case *ohevents.ObservationEvent:
		c.answer(e.ActionID)
	case *ohevents.UserRejectObservation:
		c.answer(e.ActionID)
	case *ohevents.AgentErrorEvent:
		if id, ok := c.calls[e.ToolCallID]; ok {
			delete(c.pending, id)
		} else if e.ToolCallID != "" {
			c.answeredCalls[e.ToolCallID] = true
		}
	}
	c.mu.Unlock()
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(ev)
	}
	c.mu.Lock()
	c.delivered++
	if seq > c.deliveredSeq {
		c.deliveredSeq = seq
	}
	c.mu.Unlock()
	status := ""
	if u, ok := ev.(*ohevents.ConversationStateUpdateEvent); ok {
		status = u.ExecutionStatus()
	}
	c.setStatus(func(st *Status) {
		st.Events++
		st.RunningActions = len(c.pendingIDs())
		if status != "" {
			st.ExecutionStatus = status
		}
	})
	// A report of waiting that the session socket replays is the past: the
	// actions it was about may have been answered and run since, and the
	// agent stopped. Asked about, an answer would reach the server as a
	// confirmation, and an acceptance makes it run the agent
	// (respond_to_confirmation calls run). What the agent still waits for
	// is asked once the replay is over (frame). Each report still counts
	// for confirmAgain: one replayed after a drop may be the server's
	// second, for an acceptance it dropped.
	if status == "waiting_for_confirmation" {
		c.mu.Lock()
		c.waits++
		replayed := seq >= 0 && seq <= c.replayThrough
		c.mu.Unlock()
		if !replayed {
			c.confirm()
		}
	}
}

// answer notes the observation of an action: it no longer waits, or, when
// it has not come yet, it will not. s.mu is held.
func (c *Conversation) answer(actionID string) {
	if _, ok := c.pending[actionID]; ok {
		delete(c.pending, actionID)
	} else if actionID != "" {
		c.answered[actionID] = true
	}
}

// pendingIDs lists the actions still waiting, oldest first; s.mu is held.
func (c *Conversation) pendingIDs() []string {
	var ids []string
	keep := c.order[:0]
	for _, id := range c.order {
		if _, ok := c.pending[id]; ok {
			ids = append(ids, id)
			keep = append(keep, id)
		}
	}
	c.order = keep
	return ids
}

// confirm asks the user about the actions waiting, in order, and sends the
// answer: they run only if every one was allowed. A round asks only about
// actions not asked about before; when it ends, the server may already
// wait on newer ones (it runs on as soon as it has the answer), so it
// looks again.
func (c *Conversation) confirm() {
	c.mu.Lock()
	if c.asking || c.opts.Confirm == nil || c.status.ExecutionStatus != "waiting_for_confirmation" {
		c.mu.Unlock()
		return
	}
	var actions []*ohevents.ActionEvent
	var ids []string
	for _, id := range c.pendingIDs() {
		if !c.asked[id] {
			c.asked[id] = true
			actions, ids = append(actions, c.pending[id]), append(ids, id)
		}
	}
	if len(actions) == 0 {
		c.confirmAgain()
		c.mu.Unlock()
		return
	}
	c.asking = true
	c.mu.Unlock()
	go func() {
		decision := Decision{Accept: true}
		for _, a := range actions {
			d, err := c.opts.Confirm(c.ctx, a)
			if err != nil {
				c.log.Warn("the user could not be asked; the actions are rejected", "error", err)
				d = Decision{Reason: "The user could not be asked: " + err.Error()}
			}
			if !d.Accept {
				decision = d
				break
			}
		}
		c.mu.Lock()
		c.answeredAt = c.waits
		c.mu.Unlock()
		err := c.c.RespondToConfirmation(c.ctx, c.id, decision.Accept, decision.Reason)
		c.mu.Lock()
		if err != nil && c.ctx.Err() == nil {
			// Asked again once the stream is back and says it still waits.
			c.log.Warn("the answer to the confirmation was not delivered", "error", err)
			for _, id := range ids {
				delete(c.asked, id)
			}
		} else if err == nil && decision.Accept {
			if c.accepted == nil {
				c.accepted = map[string]bool{}
			}
			for _, id := range ids {
				c.accepted[id] = true
			}
		}
		c.asking = false
		c.mu.Unlock()
		c.confirm()
	}()
}

// confirmAgain sends the user's "yes" again when the server says once more
// that it waits for actions the user allowed, in a report that came after
// the answer was sent: the agent-server drops an acceptance that arrives
// while the run that stopped for it is still winding down (1.58.2's
// EventService.run answers "conversation_already_running", which
// respond_to_confirmation takes for success), and then waits for ever. A
// second "yes" once that run is over sets it going, and is a no-op if the
// first one did. s.mu is held.
func (c *Conversation) confirmAgain() {
	if c.waits <= c.answeredAt {
		return
	}
	if !c.onlyAcceptedWaitLocked() {
		return
	}
	c.asking = true
	c.answeredAt = c.waits
	go func() {
		// The server's answer names no action: a "yes" sent after the
		// accepted actions ran would allow whatever it waits on next.
		// So it goes only while they still wait, no result of theirs
		// and no newer action seen (CI once saw a rejected command run
		// after a late second "yes").
		c.mu.Lock()
		still := c.onlyAcceptedWaitLocked()
		c.mu.Unlock()
		var err error
		if still {
			err = c.c.RespondToConfirmation(c.ctx, c.id, true, "")
		}
		if err != nil && c.ctx.Err() == nil {
			c.log.Warn("the acceptance sent again was not delivered", "error", err)
		}
		c.mu.Lock()
		c.asking = false
		c.mu.Unlock()
		c.confirm()
	}()
}

// onlyAcceptedWaitLocked says whether actions wait and every one of them
// was allowed by the user. c.mu is held.
func (c *Conversation) onlyAcceptedWaitLocked() bool {
	ids := c.pendingIDs()
	for _, id := range ids {
		if !c.accepted[id] {
			return false
		}
	}
	return len(ids) > 0
}

// CaughtUp waits until every event the server held when it was called
// has been delivered: a conversation attached to is then replayed. On the
// session socket that is the log's last index; on the events socket,
// which has none, as many events as the log holds.
func (c *Conversation) CaughtUp(ctx context.Context) error {
	n, err := c.c.CountEvents(ctx, c.id)
	if err != nil {
		return err
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		c.mu.Lock()
		delivered := c.delivered
		if !c.events {
			delivered = c.deliveredSeq + 1
		}
		c.mu.Unlock()
		if delivered >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return &ClosedError{}
		case <-t.C:
		}
	}
}
