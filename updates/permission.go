package updates

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// PermissionOption is one answer offered to the person, in ACP's shape.
type PermissionOption struct {
	OptionID string     `json:"optionId"`
	Name     string     `json:"name"`
	Kind     OptionKind `json:"kind"`
}

// OptionKind is what an answer means, as ACP names it.
type OptionKind string

// The kinds ACP defines.
const (
	AllowOnceKind    OptionKind = "allow_once"
	AllowAlwaysKind  OptionKind = "allow_always"
	RejectOnceKind   OptionKind = "reject_once"
	RejectAlwaysKind OptionKind = "reject_always"
)

// PermissionOptions are offered for every action.
var PermissionOptions = []PermissionOption{
	{OptionID: session.AllowOnce, Name: "Allow once", Kind: AllowOnceKind},
	{OptionID: session.AllowAlways, Name: "Allow always", Kind: AllowAlwaysKind},
	{OptionID: session.RejectOnce, Name: "Reject", Kind: RejectOnceKind},
}

// RequestPermission is the method AskPermission calls.
const RequestPermission = "session/request_permission"

// PermissionRequestParams is session/request_permission's params.
type PermissionRequestParams struct {
	// SessionID is the ACP session asked in (ACP only).
	SessionID string             `json:"sessionId,omitempty"`
	ToolCall  PermissionToolCall `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	// Agent says who asks ("OpenHands", an MCP client's name and version);
	// the editor face's own field.
	Agent string `json:"agent,omitempty"`
}

// PermissionToolCall is the action asked about, as the tool call the
// client shows.
type PermissionToolCall struct {
	ToolCallID string          `json:"toolCallId"`
	Title      string          `json:"title"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	RawInput   json.RawMessage `json:"rawInput,omitempty"`
	// Content is the change an edit proposes, as a diff: a client that
	// shows a question's content (CodeCompanion) shows what is asked.
	Content []ToolCallContent `json:"content,omitempty"`
}

// PermissionResponse is session/request_permission's result.
type PermissionResponse struct {
	Outcome PermissionAnswer `json:"outcome"`
}

// PermissionAnswer is the client's answer: "selected" with an option, or
// "cancelled".
type PermissionAnswer struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// AskPermission puts req to the person with ACP's
// session/request_permission through call, a face's request to its client;
// toolCallID names the call as the client shows it. sessionID (ACP) and
// agent (the editor face) go into the params when set.
func AskPermission(ctx context.Context, call func(ctx context.Context, method string, params, result any) error,
	req session.PermissionRequest, toolCallID, sessionID, agent string) (session.PermissionOutcome, error) {
	params := &PermissionRequestParams{
		SessionID: sessionID,
		ToolCall:  PermissionToolCall{ToolCallID: toolCallID, Title: req.Title, Kind: req.Kind, Status: "pending", RawInput: req.RawInput, Content: proposedDiff(req)},
		Options:   PermissionOptions,
		Agent:     agent,
	}
	var res PermissionResponse
	if err := call(ctx, RequestPermission, params, &res); err != nil {
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

// proposedDiff is the change a call proposes, from its arguments alone
// (the file is not read: the question must not wait on it), as its tool's
// declaration spells it out (ohtools.Card.Proposed): file_editor's
// str_replace old_str → new_str, create's file_text as a new file,
// insert's new_str as lines added. Nil for other calls, and for a path that
// is not absolute (ACP's diff names an absolute path).
func proposedDiff(req session.PermissionRequest) []ToolCallContent {
	c, err := ohtools.Parse(req.Tool, req.RawInput)
	if err != nil || c.Card.Proposed == nil || !filepath.IsAbs(c.Card.Path) {
		return nil
	}
	d := c.Card.Proposed
	return []ToolCallContent{{Type: "diff", Path: c.Card.Path, OldText: d.OldText, NewText: d.NewText}}
}
