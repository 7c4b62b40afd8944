package conversation

import (
	"context"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// confirm asks the person about an action an agent-server in confirmation
// mode waits to run (its ActionEvent). A call of the bridge's own tools is
// described as the call will be, and once allowed here it does not ask
// again when it arrives.
func confirm(ctx context.Context, sess *session.Session, a *ohevents.ActionEvent) (agentserver.Decision, error) {
	var action ohevents.Action
	if a.Action != nil {
		action = *a.Action
	}
	req := session.PermissionRequest{ToolCallID: a.ToolCallID, Title: a.ToolName, Kind: "other", RawInput: action.Data, Agent: "OpenHands"}
	if req.ToolCallID == "" {
		req.ToolCallID = a.ID
	}
	var call *ohtools.Call
	if action.IsMCP() {
		if c, err := ohtools.Parse(a.ToolName, action.Data); err == nil {
			call, req.Title, req.Kind = c, c.Action.Title, c.Action.Kind
		}
	} else if len(action.Kind) > 0 {
		req.Title, req.Kind, req.RawInput = a.ToolName, "think", a.Raw()
	}
	allowed, err := sess.Permit(ctx, req)
	if err != nil {
		return agentserver.Decision{}, err
	}
	if !allowed {
		return agentserver.Decision{Reason: "User rejected the action."}, nil
	}
	if call != nil {
		sess.PreApprove(a.ToolName, action.Data)
	}
	return agentserver.Decision{Accept: true}, nil
}
