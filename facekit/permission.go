package facekit

import (
	"context"
	"time"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// Asker puts actions to the person for a face. The face writes Ask, its
// request to its client (the wire edge); the rest is the same for every
// face: a question about an agent's call names the call as the face's
// conversation shows it, waiting a moment for the agent-server to report
// it; what a withdrawn question means is set once (Cancelled); and "Allow
// always" is remembered per kind by the session (session.Permit), which
// asks only when no earlier answer covers the action.
type Asker struct {
	// Ask puts one question to the client, naming the action toolCallID
	// as the client shows it.
	Ask func(ctx context.Context, req session.PermissionRequest, toolCallID string) (session.PermissionOutcome, error)
	// Link is the face's conversation, whose cards the questions name; nil,
	// or returning nil: there is none.
	Link func() *conversation.Link
	// CardTitles words a question about an agent's call as its card is
	// titled ("Run `make test`"), so that the question and the card say
	// the action the same way.
	CardTitles bool
	// Cancelled, when set, is called when the client withdraws a question
	// about an agent's call (ACP: the person cancelled the turn), and the
	// action is answered cancelled (session.CancelledError). Without it a
	// withdrawn question is a "no": the person dismissed the prompt.
	Cancelled func()
}

// linkWait is how long a question waits for the agent-server to report
// the call it is about, to name it as its card does.
const linkWait = time.Second

// Permission asks about an agent's call: session.Options.AskPermission.
func (a *Asker) Permission(ctx context.Context, req session.PermissionRequest) (session.PermissionOutcome, error) {
	id, title := req.ToolCallID, updates.Title(req.Tool, req.RawInput, updates.Heading(req.Title))
	if l := a.link(); l != nil {
		id = l.ToolCallID(ctx, req, linkWait)
		if t, ok := l.ToolCallTitle(id); ok {
			title = t
		}
	}
	if a.CardTitles {
		req.Title = title
	}
	out, err := a.Ask(ctx, req, id)
	if err == nil && out.Cancelled {
		if a.Cancelled == nil {
			out.Cancelled = false
		} else {
			a.Cancelled()
		}
	}
	return out, err
}

func (a *Asker) link() *conversation.Link {
	if a.Link == nil {
		return nil
	}
	return a.Link()
}

// Choice is the person's answer to a face's own question.
type Choice int

// The answers to a face's own question.
const (
	Declined Choice = iota // "Reject", a withdrawn question, or none
	Once                   // "Allow once"
	Always                 // "Allow always": the face keeps it
)

// Choose asks the person a face's own question (start an agent-server,
// use another user's), shown as the tool call id. A withdrawn question
// is declined; the face keeps an Always.
func (a *Asker) Choose(ctx context.Context, req session.PermissionRequest, id string) (Choice, error) {
	out, err := a.Ask(ctx, req, id)
	if err != nil {
		return Declined, err
	}
	switch out.OptionID {
	case session.AllowAlways:
		return Always, nil
	case session.AllowOnce:
		return Once, nil
	}
	return Declined, nil
}
