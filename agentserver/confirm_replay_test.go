package agentserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

// TestReplayAsksNothingAnswered: attached to a conversation in
// confirmation mode (the editor reopened it, or its window reloaded), the
// session socket replays the log, where each action the user allowed
// before comes with the report that the agent waited for it, then its
// observation. Nothing of the replay is asked again: an answer would reach
// the server as a confirmation, and an acceptance makes the agent-server
// run the agent (respond_to_confirmation calls run), one the user had
// stopped among them. What the agent still waits for when the replay ends
// is asked, once. (The log is the one 1.58.2 kept of the VS Code e2e's
// conversation: an allowed command, then an edit, then Stop.)
func TestReplayAsksNothingAnswered(t *testing.T) {
	type asked struct{ action, answer string }
	start := func(t *testing.T) (*Conversation, chan asked) {
		answers := make(chan string, 8)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			answers <- string(body)
			w.Write([]byte(`{"success": true}`))
		}))
		t.Cleanup(srv.Close)
		c, err := NewClient(srv.URL, "", nil, srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan asked, 8)
		s := newConversation(Options{Logger: slog.New(slog.DiscardHandler)}, c, "conv")
		s.opts.Confirm = func(_ context.Context, action *ohevents.ActionEvent) (Decision, error) {
			go func() { got <- asked{action: action.ID, answer: <-answers} }()
			return Decision{Accept: true}, nil
		}
		t.Cleanup(s.cancel)
		return s, got
	}
	status := func(id, value string) string {
		return `{"id":"` + id + `","kind":"ConversationStateUpdateEvent","key":"execution_status","value":"` + value + `"}`
	}
	// The log as the server keeps it, oldest first.
	history := []string{
		`{"id":"m1","kind":"MessageEvent","source":"user"}`,
		status("s1", "running"),
		`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1","tool_name":"terminal"}`,
		status("s2", "waiting_for_confirmation"),
		status("s3", "running"),
		`{"id":"o1","kind":"ObservationEvent","action_id":"a1","tool_call_id":"c1"}`,
		`{"id":"a2","kind":"ActionEvent","tool_call_id":"c2","tool_name":"file_editor"}`,
		status("s4", "waiting_for_confirmation"),
		status("s5", "running"),
		`{"id":"o2","kind":"ObservationEvent","action_id":"a2","tool_call_id":"c2"}`,
		`{"id":"m2","kind":"MessageEvent","source":"user"}`,
		`{"id":"a3","kind":"ActionEvent","tool_call_id":"c3","tool_name":"terminal"}`,
		status("s6", "waiting_for_confirmation"),
		status("s7", "running"),
		`{"id":"e3","kind":"AgentErrorEvent","tool_call_id":"c3"}`,
		status("s8", "paused"),
	}
	replay := func(s *Conversation, log []string, snapshot string) {
		s.frame([]byte(fmt.Sprintf(`{"type":"sync","from_seq":-1,"through_seq":%d}`, len(log)-1)))
		for i, e := range log {
			s.frame([]byte(fmt.Sprintf(`{"type":"durable","seq":%d,"event":%s}`, i, e)))
		}
		s.frame([]byte(`{"type":"transient","event":{"id":"snap","kind":"ConversationStateUpdateEvent","key":"full_state","value":{"execution_status":"` + snapshot + `"}}}`))
	}

	t.Run("stopped", func(t *testing.T) {
		s, got := start(t)
		replay(s, history, "paused")
		// A round starts, or not, as the event that calls for it is
		// delivered: the replay above is over.
		s.mu.Lock()
		n, busy := len(s.asked), s.asking
		s.mu.Unlock()
		if n != 0 || busy {
			a := <-got
			t.Fatalf("the replay asked about %s again (answered %s); want nothing asked", a.action, a.answer)
		}
		// Live, after the replay, a report of waiting is asked about.
		s.frame([]byte(`{"type":"durable","seq":16,"event":{"id":"a4","kind":"ActionEvent","tool_call_id":"c4"}}`))
		s.frame([]byte(`{"type":"durable","seq":17,"event":` + status("s9", "waiting_for_confirmation") + `}`))
		select {
		case a := <-got:
			if a.action != "a4" || a.answer != `{"accept":true}` {
				t.Errorf("asked about %s, answered %s; want a4, accepted", a.action, a.answer)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a live report of waiting was not asked about")
		}
	})

	t.Run("still waiting", func(t *testing.T) {
		// The agent waits for a5 as the log ends: that is asked, once,
		// once the replay is over; what it waited for before is not.
		s, got := start(t)
		log := append(history[:len(history):len(history)],
			`{"id":"m3","kind":"MessageEvent","source":"user"}`,
			`{"id":"a5","kind":"ActionEvent","tool_call_id":"c5","tool_name":"terminal"}`,
			status("s10", "waiting_for_confirmation"))
		replay(s, log, "waiting_for_confirmation")
		select {
		case a := <-got:
			if a.action != "a5" || a.answer != `{"accept":true}` {
				t.Errorf("asked about %s, answered %s; want a5, accepted", a.action, a.answer)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the action the agent waits for was not asked about")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.asked) != 1 || !s.asked["a5"] {
			t.Errorf("asked about %v; want a5 alone", s.asked)
		}
	})
}
