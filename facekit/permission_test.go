package facekit_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/session"
)

// client is a face's wire edge that answers each question with the next
// of its answers, and keeps what it was asked.
type client struct {
	answers []session.PermissionOutcome
	err     error
	asked   []session.PermissionRequest
	ids     []string
}

func (c *client) ask(_ context.Context, req session.PermissionRequest, id string) (session.PermissionOutcome, error) {
	c.asked, c.ids = append(c.asked, req), append(c.ids, id)
	if c.err != nil {
		return session.PermissionOutcome{}, c.err
	}
	out := c.answers[0]
	c.answers = c.answers[1:]
	return out, nil
}

var (
	allowOnce   = session.PermissionOutcome{OptionID: session.AllowOnce}
	allowAlways = session.PermissionOutcome{OptionID: session.AllowAlways}
	reject      = session.PermissionOutcome{OptionID: session.RejectOnce}
	withdrawn   = session.PermissionOutcome{Cancelled: true}
)

func makeTest() session.PermissionRequest {
	return session.PermissionRequest{ToolCallID: "call-1", Tool: "terminal", Title: "terminal", Kind: "execute",
		RawInput: json.RawMessage(`{"command":"make test"}`), Agent: "an agent"}
}

// TestPermissionThroughTheSession: the session asks through the face's
// asker, which asks its client; "Allow always" covers the kind from then
// on, "Allow once" and "Reject" do not.
func TestPermissionThroughTheSession(t *testing.T) {
	c := &client{answers: []session.PermissionOutcome{allowOnce, reject, allowAlways}}
	a := &facekit.Asker{Ask: c.ask}
	sess := newSession(t, session.Options{AskPermission: a.Permission})
	ctx := context.Background()
	for i, want := range []bool{true, false, true, true, true} {
		ok, err := sess.Permit(ctx, makeTest())
		if err != nil || ok != want {
			t.Errorf("question %d: %v, %v; want %v", i+1, ok, err, want)
		}
	}
	if len(c.asked) != 3 {
		t.Errorf("the client was asked %d times; want 3 (after \"Allow always\", no more)", len(c.asked))
	}
	if c.ids[0] != "call-1" || c.asked[0].Title != "terminal" || c.asked[0].Agent != "an agent" {
		t.Errorf("asked %+v as %q; want the request as it came, named by its own id with no conversation", c.asked[0], c.ids[0])
	}
}

// TestWithdrawnQuestion: a question the client withdraws is a "no" for a
// face that sets no Cancelled (the editor: the person dismissed the
// prompt); for one that does (ACP), Cancelled runs and the action is
// answered cancelled.
func TestWithdrawnQuestion(t *testing.T) {
	ctx := context.Background()
	c := &client{answers: []session.PermissionOutcome{withdrawn}}
	out, err := (&facekit.Asker{Ask: c.ask}).Permission(ctx, makeTest())
	if err != nil || out.Cancelled || out.OptionID != "" {
		t.Errorf("without Cancelled: %+v, %v; want a plain no", out, err)
	}

	cancelled := 0
	a := &facekit.Asker{Ask: (&client{answers: []session.PermissionOutcome{withdrawn}}).ask, Cancelled: func() { cancelled++ }}
	sess := newSession(t, session.Options{AskPermission: a.Permission})
	ok, err := sess.Permit(ctx, makeTest())
	var ce *session.CancelledError
	if ok || !errors.As(err, &ce) || cancelled != 1 {
		t.Errorf("with Cancelled: %v, %v, Cancelled ran %d times; want a *session.CancelledError, once", ok, err, cancelled)
	}
}

// TestCardTitles: a face that titles questions as cards are (ACP) asks
// "Run `make test`", not the tool's name; another asks the title given.
func TestCardTitles(t *testing.T) {
	ctx := context.Background()
	c := &client{answers: []session.PermissionOutcome{allowOnce, allowOnce}}
	(&facekit.Asker{Ask: c.ask, CardTitles: true}).Permission(ctx, makeTest())
	(&facekit.Asker{Ask: c.ask}).Permission(ctx, makeTest())
	if got := c.asked[0].Title; got != "Run `make test`" {
		t.Errorf("with card titles: %q", got)
	}
	if got := c.asked[1].Title; got != "terminal" {
		t.Errorf("without: %q", got)
	}
}

// TestChoose: a face's own question (start an agent-server) answers once,
// always or declined; a withdrawn one is declined and cancels nothing; a
// question that could not be put is an error.
func TestChoose(t *testing.T) {
	ctx := context.Background()
	req := session.PermissionRequest{Title: "Start the agent-server", Kind: "execute"}
	cancelled := 0
	c := &client{answers: []session.PermissionOutcome{allowOnce, allowAlways, reject, withdrawn}}
	a := &facekit.Asker{Ask: c.ask, Cancelled: func() { cancelled++ }}
	for i, want := range []facekit.Choice{facekit.Once, facekit.Always, facekit.Declined, facekit.Declined} {
		got, err := a.Choose(ctx, req, "start-1")
		if err != nil || got != want {
			t.Errorf("answer %d: %v, %v; want %v", i+1, got, err, want)
		}
	}
	if cancelled != 0 || c.ids[0] != "start-1" {
		t.Errorf("cancelled %d times; asked as %q", cancelled, c.ids[0])
	}
	broken := errors.New("the client went away")
	if got, err := (&facekit.Asker{Ask: (&client{err: broken}).ask}).Choose(ctx, req, "start-2"); got != facekit.Declined || !errors.Is(err, broken) {
		t.Errorf("a question that could not be put: %v, %v", got, err)
	}
}
