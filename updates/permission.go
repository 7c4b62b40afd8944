package updates

import (
	"context"

	"github.com/oh-bridge/oh-bridge/session"
)

// PermissionOption is one answer offered to the person, in ACP's shape.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

// PermissionOptions are offered for every action.
var PermissionOptions = []PermissionOption{
	{OptionID: session.AllowOnce, Name: "Allow once", Kind: "allow_once"},
	{OptionID: session.AllowAlways, Name: "Allow always", Kind: "allow_always"},
	{OptionID: session.RejectOnce, Name: "Reject", Kind: "reject_once"},
}

// AskPermission puts req to the person with ACP's
// session/request_permission through call, a face's request to its client;
// toolCallID names the call as the client shows it, and extra adds
// parameters (ACP's sessionId).
func AskPermission(ctx context.Context, call func(ctx context.Context, method string, params, result any) error,
	req session.PermissionRequest, toolCallID string, extra map[string]any) (session.PermissionOutcome, error) {
	toolCall := map[string]any{"toolCallId": toolCallID, "title": req.Title, "kind": req.Kind, "status": "pending"}
	if len(req.RawInput) > 0 {
		toolCall["rawInput"] = req.RawInput
	}
	params := map[string]any{"toolCall": toolCall, "options": PermissionOptions}
	for k, v := range extra {
		params[k] = v
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if err := call(ctx, "session/request_permission", params, &res); err != nil {
		return session.PermissionOutcome{}, err
	}
	switch res.Outcome.Outcome {
	case "selected":
	case "cancelled":
		return session.PermissionOutcome{Cancelled: true}, nil
	default:
		return session.PermissionOutcome{}, nil
	}
	return session.PermissionOutcome{OptionID: res.Outcome.OptionID}, nil
}
