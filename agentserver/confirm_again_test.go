package agentserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// TestAcceptanceSentAgain: the real agent-server drops an acceptance that
// arrives while the run that stopped for it is still winding down, then
// reports once more that it waits. The user's "yes" is sent again then,
// without asking them again; a report that came while they were being
// asked, before the answer went, sends nothing more.
func TestAcceptanceSentAgain(t *testing.T) {
	answers := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.HasSuffix(r.URL.Path, "/events/respond_to_confirmation") {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		answers <- string(body)
		w.Write([]byte(`{"success": true}`))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, "", nil, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	release := make(chan struct{})
	s := &Conversation{c: c, id: "conv", log: slog.New(slog.DiscardHandler), seen: map[string]bool{}, pending: map[string]*ohevents.ActionEvent{},
		asked: map[string]bool{}, calls: map[string]string{}, done: make(chan struct{})}
	s.opts.Confirm = func(context.Context, *ohevents.ActionEvent) (Decision, error) {
		asked.Add(1)
		<-release
		return Decision{Accept: true}, nil
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	defer s.cancel()
	waiting := func(id string) {
		s.deliver([]byte(`{"id":"`+id+`","kind":"ConversationStateUpdateEvent","key":"execution_status","value":"waiting_for_confirmation"}`), -1)
	}
	answer := func(what string) string {
		t.Helper()
		select {
		case a := <-answers:
			return a
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer %s", what)
			return ""
		}
	}
	none := func(what string) {
		t.Helper()
		// A negative can only be bounded: an answer is a local POST.
		select {
		case a := <-answers:
			t.Fatalf("%s: answered %s", what, a)
		case <-time.After(300 * time.Millisecond):
		}
	}
	// The round ends on its own goroutine once the answer's POST returns,
	// and says so to no one: poll.
	idle := func() {
		t.Helper()
		ohtest.WaitWithin(t, 5*time.Second, "the confirmation round to end", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return !s.asking
		})
	}

	s.deliver([]byte(`{"id":"a1","kind":"ActionEvent","tool_call_id":"c1"}`), -1)
	waiting("w1")
	waiting("w2") // while the user is asked: before the answer went
	close(release)
	if a := answer("to the question"); a != `{"accept":true}` {
		t.Fatalf("answered %s, want the acceptance", a)
	}
	idle()
	none("after a report that came before the answer")

	waiting("w3") // the run that stopped for it has wound down
	if a := answer("to the report after the acceptance"); a != `{"accept":true}` {
		t.Fatalf("answered %s again, want the acceptance", a)
	}
	idle()
	if n := asked.Load(); n != 1 {
		t.Errorf("the user was asked %d times, want once", n)
	}
	// Once the action has its observation, a report of waiting is about
	// other actions: nothing is sent for the allowed one.
	s.deliver([]byte(`{"id":"o1","kind":"ObservationEvent","action_id":"a1","tool_call_id":"c1"}`), -1)
	waiting("w4")
	none("once the allowed action ran")
}
