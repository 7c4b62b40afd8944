package conversation

import (
	"context"
	"encoding/json"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// confirm asks the person about an action an agent-server in confirmation
// mode waits to run (its ActionEvent). A call of the bridge's own tools is
// described as the call will be, and once allowed here it does not ask
// again when it arrives.
func confirm(ctx context.Context, sess *session.Session, event json.RawMessage) (agentserver.Decision, error) {
	var a struct {
		ID         string `json:"id"`
		ToolName   string `json:"tool_name"`
		ToolCallID string `json:"tool_call_id"`
		Action     struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		} `json:"action"`
	}
	json.Unmarshal(event, &a)
	req := session.PermissionRequest{ToolCallID: a.ToolCallID, Title: a.ToolName, Kind: "other", RawInput: a.Action.Data, Agent: "OpenHands"}
	if req.ToolCallID == "" {
		req.ToolCallID = a.ID
	}
	var call *ohtools.Call
	if a.Action.Kind == "MCPToolAction" {
		if c, err := ohtools.Parse(a.ToolName, a.Action.Data); err == nil {
			call, req.Title, req.Kind = c, c.Action.Title, c.Action.Kind
		}
	} else if len(a.Action.Kind) > 0 {
		req.Title, req.Kind, req.RawInput = a.ToolName, "think", event
	}
	allowed, err := sess.Permit(ctx, req)
	if err != nil {
		return agentserver.Decision{}, err
	}
	if !allowed {
		return agentserver.Decision{Reason: "User rejected the action."}, nil
	}
	if call != nil {
		sess.PreApprove(a.ToolName, a.Action.Data)
	}
	return agentserver.Decision{Accept: true}, nil
}
