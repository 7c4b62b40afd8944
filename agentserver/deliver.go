package agentserver

import (
	"context"
	"time"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

// deliver passes an event on once, and follows the conversation's state.
// seq is its index in the log when the session socket sent it as durable,
// else -1.
func (s *Conversation) deliver(data []byte, seq int) {
	ev, err := ohevents.Decode(data)
	if err != nil {
		s.log.Warn("an event that is not JSON was dropped", "error", err)
		return
	}
	if o, ok := ev.(*ohevents.Other); ok && o.Mismatch != nil {
		s.log.Warn("an event's fields are not the types'; it is passed on as it came", "error", o.Mismatch)
	}
	h := ev.Header()
	s.mu.Lock()
	if seq >= 0 {
		if seq <= s.seq {
			// Behind the cursor: a repeat, unless it was never delivered.
			// 1.49.1 sends a message the user sends to an idle
			// conversation after the state update logged behind it (seq
			// 2, then 1): that one is delivered late, and the id check
			// below drops a true repeat.
			if h.ID == "" || s.seen[h.ID] {
				s.repeats++
				s.mu.Unlock()
				return
			}
		} else {
			if seq != s.seq+1 {
				// The server passes over an event it cannot read on its
				// disk, or sends one late (above).
				s.log.Warn("the session socket skipped events", "after", s.seq, "next", seq)
			}
			s.seq = seq
		}
	}
	if h.ID != "" {
		if s.seen[h.ID] {
			s.repeats++
			s.mu.Unlock()
			return
		}
		s.seen[h.ID] = true
	}
	if h.Timestamp != "" {
		s.last = h.Timestamp
	}
	switch e := ev.(type) {
	case *ohevents.ActionEvent:
		if e.ID != "" && !s.answered[e.ID] && (e.ToolCallID == "" || !s.answeredCalls[e.ToolCallID]) {
			s.pending[e.ID] = e
			s.order = append(s.order, e.ID)
			if e.ToolCallID != "" {
				s.calls[e.ToolCallID] = e.ID
			}
		}
	case *ohevents.ObservationEvent:
		s.answer(e.ActionID)
	case *ohevents.UserRejectObservation:
		s.answer(e.ActionID)
	case *ohevents.AgentErrorEvent:
		if id, ok := s.calls[e.ToolCallID]; ok {
			delete(s.pending, id)
		} else if e.ToolCallID != "" {
			s.answeredCalls[e.ToolCallID] = true
		}
	}
	s.mu.Unlock()
	if s.opts.OnEvent != nil {
		s.opts.OnEvent(ev)
	}
	s.mu.Lock()
	s.delivered++
	if seq > s.deliveredSeq {
		s.deliveredSeq = seq
	}
	s.mu.Unlock()
	status := ""
	if u, ok := ev.(*ohevents.ConversationStateUpdateEvent); ok {
		status = u.ExecutionStatus()
	}
	s.setStatus(func(st *Status) {
		st.Events++
		st.RunningActions = len(s.pendingIDs())
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
		s.mu.Lock()
		s.waits++
		replayed := seq >= 0 && seq <= s.replayThrough
		s.mu.Unlock()
		if !replayed {
			s.confirm()
		}
	}
}

// answer notes the observation of an action: it no longer waits, or, when
// it has not come yet, it will not. s.mu is held.
func (s *Conversation) answer(actionID string) {
	if _, ok := s.pending[actionID]; ok {
		delete(s.pending, actionID)
	} else if actionID != "" {
		s.answered[actionID] = true
	}
}

// pendingIDs lists the actions still waiting, oldest first; s.mu is held.
func (s *Conversation) pendingIDs() []string {
	var ids []string
	keep := s.order[:0]
	for _, id := range s.order {
		if _, ok := s.pending[id]; ok {
			ids = append(ids, id)
			keep = append(keep, id)
		}
	}
	s.order = keep
	return ids
}

// confirm asks the user about the actions waiting, in order, and sends the
// answer: they run only if every one was allowed. A round asks only about
// actions not asked about before; when it ends, the server may already
// wait on newer ones (it runs on as soon as it has the answer), so it
// looks again.
func (s *Conversation) confirm() {
	s.mu.Lock()
	if s.asking || s.opts.Confirm == nil || s.status.ExecutionStatus != "waiting_for_confirmation" {
		s.mu.Unlock()
		return
	}
	var actions []*ohevents.ActionEvent
	var ids []string
	for _, id := range s.pendingIDs() {
		if !s.asked[id] {
			s.asked[id] = true
			actions, ids = append(actions, s.pending[id]), append(ids, id)
		}
	}
	if len(actions) == 0 {
		s.confirmAgain()
		s.mu.Unlock()
		return
	}
	s.asking = true
	s.mu.Unlock()
	go func() {
		decision := Decision{Accept: true}
		for _, a := range actions {
			d, err := s.opts.Confirm(s.ctx, a)
			if err != nil {
				s.log.Warn("the user could not be asked; the actions are rejected", "error", err)
				d = Decision{Reason: "The user could not be asked: " + err.Error()}
			}
			if !d.Accept {
				decision = d
				break
			}
		}
		s.mu.Lock()
		s.answeredAt = s.waits
		s.mu.Unlock()
		err := s.c.RespondToConfirmation(s.ctx, s.id, decision.Accept, decision.Reason)
		s.mu.Lock()
		if err != nil && s.ctx.Err() == nil {
			// Asked again once the stream is back and says it still waits.
			s.log.Warn("the answer to the confirmation was not delivered", "error", err)
			for _, id := range ids {
				delete(s.asked, id)
			}
		} else if err == nil && decision.Accept {
			if s.accepted == nil {
				s.accepted = map[string]bool{}
			}
			for _, id := range ids {
				s.accepted[id] = true
			}
		}
		s.asking = false
		s.mu.Unlock()
		s.confirm()
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
func (s *Conversation) confirmAgain() {
	if s.waits <= s.answeredAt {
		return
	}
	allowed := false
	for _, id := range s.pendingIDs() {
		allowed = allowed || s.accepted[id]
	}
	if !allowed {
		return
	}
	s.asking = true
	s.answeredAt = s.waits
	go func() {
		err := s.c.RespondToConfirmation(s.ctx, s.id, true, "")
		if err != nil && s.ctx.Err() == nil {
			s.log.Warn("the acceptance sent again was not delivered", "error", err)
		}
		s.mu.Lock()
		s.asking = false
		s.mu.Unlock()
		s.confirm()
	}()
}

// CaughtUp waits until every event the server held when it was called
// has been delivered: a conversation attached to is then replayed. On the
// session socket that is the log's last index; on the events socket,
// which has none, as many events as the log holds.
func (s *Conversation) CaughtUp(ctx context.Context) error {
	n, err := s.c.CountEvents(ctx, s.id)
	if err != nil {
		return err
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		delivered := s.delivered
		if !s.events {
			delivered = s.deliveredSeq + 1
		}
		s.mu.Unlock()
		if delivered >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return &ClosedError{}
		case <-t.C:
		}
	}
}
