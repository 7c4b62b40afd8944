package agentserver

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

func testConversation(t *testing.T) (*Conversation, *[]string) {
	var got []string
	s := newConversation(Options{Logger: slog.New(slog.DiscardHandler), OnEvent: func(e ohevents.Event) {
		got = append(got, e.Header().ID)
	}}, nil, "c")
	t.Cleanup(s.cancel)
	return s, &got
}

// TestAnswerBeforeItsAction: the events socket attached to a running
// conversation gets live events while it still replays the log (the real
// agent-server subscribes first, then resends), so an observation or an
// error can arrive before its action. The action is then not counted as
// running.
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
			s, _ := testConversation(t)
			for _, e := range c.events {
				s.deliver([]byte(e), -1)
			}
			if st := s.Status(); st.RunningActions != 0 || st.Events != 2 {
				t.Errorf("after %s: %d actions running, %d events; want 0 and 2", c.name, st.RunningActions, st.Events)
			}
		})
	}
	// An action still waiting is counted.
	s, _ := testConversation(t)
	s.deliver([]byte(`{"id":"o1","kind":"ObservationEvent","action_id":"a0"}`), -1)
	s.deliver([]byte(`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`), -1)
	if n := s.Status().RunningActions; n != 1 {
		t.Errorf("an unanswered action after another's observation: %d running, want 1", n)
	}
}

// TestSessionFrames: the session socket's durable events are delivered in
// the order of their seq, each once; transient ones (the state
// snapshots) are delivered and leave the cursor alone; an event that came
// as transient before its durable frame is not delivered again; sync,
// error, streaming progress and frame types to come deliver nothing.
func TestSessionFrames(t *testing.T) {
	s, got := testConversation(t)
	for _, f := range []string{
		`{"type":"sync","from_seq":-1,"through_seq":1}`,
		`{"type":"durable","seq":0,"event":{"id":"e0","kind":"SystemPromptEvent"}}`,
		`{"type":"durable","seq":1,"event":{"id":"e1","kind":"MessageEvent"}}`,
		`{"type":"transient","event":{"id":"snap","kind":"ConversationStateUpdateEvent","key":"full_state","value":{"execution_status":"running"}}}`,
		`{"type":"durable","seq":1,"event":{"id":"e1","kind":"MessageEvent"}}`,
		`{"type":"item_started","item_id":"e3","attempt":1,"anchor_seq":1}`,
		`{"type":"delta","item_id":"e3","attempt":1,"order":0,"kind":"text","content":"hel"}`,
		`{"type":"transient","event":{"id":"e2","kind":"MessageEvent"}}`,
		`{"type":"durable","seq":2,"event":{"id":"e2","kind":"MessageEvent"}}`,
		`{"type":"error","code":"ValidationError","detail":"bad"}`,
		`{"type":"brand_new","event":{"id":"x","kind":"MessageEvent"}}`,
		`{"type":"durable","seq":3,"event":{"id":"e3","kind":"ConversationStateUpdateEvent","key":"execution_status","value":"finished"}}`,
		`not json`,
	} {
		s.frame([]byte(f))
	}
	if want := []string{"e0", "e1", "snap", "e2", "e3"}; !slices.Equal(*got, want) {
		t.Errorf("delivered %q, want %q", *got, want)
	}
	s.mu.Lock()
	seq, repeats := s.seq, s.repeats
	s.mu.Unlock()
	if seq != 3 || repeats != 2 {
		t.Errorf("cursor %d and %d repeats; want 3 and 2", seq, repeats)
	}
	if st := s.Status(); st.ExecutionStatus != "finished" || st.Events != 5 {
		t.Errorf("status %+v; want finished after 5 events", st)
	}
}
