package agentserver

import (
	"context"
	"encoding/json"
	"testing"
)

// TestAnswerBeforeItsAction: a socket attached to a running conversation
// gets live events while it still replays the log (the real agent-server
// subscribes first, then resends), so an observation or an error can
// arrive before its action. The action is then not counted as running.
func TestAnswerBeforeItsAction(t *testing.T) {
	for _, c := range []struct {
		name   string
		events []string
	}{
		{"observation first", []string{
			`{"id":"o1","kind":"ObservationEvent","action_id":"a1","tool_call_id":"c1"}`,
			`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`,
		}},
		{"rejection first", []string{
			`{"id":"r1","kind":"UserRejectObservation","action_id":"a1","tool_call_id":"c1"}`,
			`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`,
		}},
		{"error first", []string{
			`{"id":"e1","kind":"AgentErrorEvent","tool_call_id":"c1"}`,
			`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`,
		}},
		{"in order", []string{
			`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`,
			`{"id":"o1","kind":"ObservationEvent","action_id":"a1","tool_call_id":"c1"}`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Conversation{seen: map[string]bool{}, pending: map[string]json.RawMessage{}, asked: map[string]bool{}, calls: map[string]string{}}
			s.ctx, s.cancel = context.WithCancel(context.Background())
			defer s.cancel()
			for _, e := range c.events {
				s.deliver([]byte(e))
			}
			if st := s.Status(); st.RunningActions != 0 || st.Events != 2 {
				t.Errorf("after %s: %d actions running, %d events; want 0 and 2", c.name, st.RunningActions, st.Events)
			}
		})
	}
	// An action still waiting is counted.
	s := &Conversation{seen: map[string]bool{}, pending: map[string]json.RawMessage{}, asked: map[string]bool{}, calls: map[string]string{}}
	s.deliver([]byte(`{"id":"o1","kind":"ObservationEvent","action_id":"a0"}`))
	s.deliver([]byte(`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`))
	if n := s.Status().RunningActions; n != 1 {
		t.Errorf("an unanswered action after another's observation: %d running, want 1", n)
	}
}
