package agentserver

import (
	"slices"
	"testing"
)

// TestLateEvent: 1.49.1's session socket sends a message the user sends
// to an idle conversation after the state update logged behind it (seq 2,
// then seq 1; seen live on the installed server, where 1.58.2 keeps the
// order). The late event is delivered, once; the cursor stays where it
// was; an event behind the cursor that was delivered already is still a
// repeat.
func TestLateEvent(t *testing.T) {
	s, got := testConversation(t)
	for _, f := range []string{
		`{"type":"sync","from_seq":-1,"through_seq":null}`,
		`{"type":"durable","seq":0,"event":{"id":"e0","kind":"SystemPromptEvent"}}`,
		`{"type":"durable","seq":2,"event":{"id":"e2","kind":"ConversationStateUpdateEvent","key":"last_user_message_id","value":"e1"}}`,
		`{"type":"durable","seq":1,"event":{"id":"e1","kind":"MessageEvent","source":"user"}}`,
		`{"type":"durable","seq":3,"event":{"id":"e3","kind":"ConversationStateUpdateEvent","key":"execution_status","value":"running"}}`,
		`{"type":"durable","seq":1,"event":{"id":"e1","kind":"MessageEvent","source":"user"}}`,
	} {
		s.frame([]byte(f))
	}
	if want := []string{"e0", "e2", "e1", "e3"}; !slices.Equal(*got, want) {
		t.Errorf("delivered %q, want %q", *got, want)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seq != 3 || s.deliveredSeq != 3 || s.repeats != 1 {
		t.Errorf("cursor %d, last delivered %d, %d repeats; want 3, 3 and 1", s.seq, s.deliveredSeq, s.repeats)
	}
}
