//go:build unix

package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/session"
)

// answered is how long a call's answer is watched for before it counts as
// held: a negative can only be bounded, and an unheld answer takes
// microseconds.
const answered = 300 * time.Millisecond

// TestHeldAnswersWait: a face that withdraws a permission question holds
// the session's calls (as ACP's cancel does); the withdrawn call's answer,
// and a call that arrives meanwhile, are refused but wait until the face
// says the agent stopped, so the agent has no next step to take; a call
// whose own request ends stops waiting. Without a hold, a withdrawn
// question answers at once.
func TestHeldAnswersWait(t *testing.T) {
	stopped := make(chan struct{})
	var s *session.Session
	asked := make(chan struct{}, 4)
	hold := true
	s, dir := newSession(t, session.Options{AskPermission: func(ctx context.Context, r session.PermissionRequest) (session.PermissionOutcome, error) {
		if hold {
			s.HoldCalls("the person cancelled the turn", stopped)
		}
		asked <- struct{}{}
		return session.PermissionOutcome{Cancelled: true}, nil
	}})
	a, err := s.NewAgent(session.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "ran")
	type answer struct{ err error }
	call := func(ctx context.Context, command string) chan answer {
		out := make(chan answer, 1)
		go func() {
			_, err := a.Call(ctx, "terminal", json.RawMessage(`{"command": "`+command+`"}`), nil)
			out <- answer{err}
		}()
		return out
	}
	cancelledErr := func(what string, got answer) {
		t.Helper()
		var c *session.CancelledError
		if !errors.As(got.err, &c) {
			t.Errorf("%s: answered %v, want a *session.CancelledError", what, got.err)
		}
	}

	withdrawn := call(context.Background(), "touch "+ran)
	<-asked
	next := call(context.Background(), "touch "+ran+"-next")
	gone, leave := context.WithCancel(context.Background())
	abandoned := call(gone, "touch "+ran+"-abandoned")
	select {
	case got := <-withdrawn:
		t.Fatalf("the withdrawn call answered before the agent stopped: %v", got.err)
	case got := <-next:
		t.Fatalf("a call made during the hold answered before the agent stopped: %v", got.err)
	case got := <-abandoned:
		t.Fatalf("a call made during the hold answered before the agent stopped or its request ended: %v", got.err)
	case <-time.After(answered):
	}
	leave()
	cancelledErr("a held call whose request ended", <-abandoned)
	close(stopped)
	cancelledErr("the withdrawn call", <-withdrawn)
	cancelledErr("a call made during the hold", <-next)
	if matches, _ := filepath.Glob(ran + "*"); len(matches) > 0 {
		t.Errorf("held calls ran: %v", matches)
	}

	s.ReleaseCalls()
	hold = false
	select {
	case got := <-call(context.Background(), "touch "+ran):
		cancelledErr("a withdrawn question without a hold", got)
	case <-time.After(10 * time.Second):
		t.Fatal("a withdrawn question without a hold waits for a hold there is not")
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the withdrawn call ran")
	}
}
