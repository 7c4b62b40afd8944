package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// PermissionRequest is an action put to the person before it runs, in
// ACP's terms (session/request_permission).
type PermissionRequest struct {
	ToolCallID string
	// Tool is the V1 tool an agent calls ("terminal"); empty for V0
	// actions and agent-server confirmations.
	Tool     string
	Title    string          // "run `make test`", "str_replace /w/a.go"
	Kind     string          // ACP tool kind: read, edit, execute, fetch, other
	RawInput json.RawMessage // the action's arguments as the agent sent them
	Agent    string          // who asks: "OpenHands (V0 runtime)", an MCP client's name
}

// PermissionOption is one answer offered to the person.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

// PermissionOptions are offered for every action.
var PermissionOptions = []PermissionOption{
	{OptionID: "allow_once", Name: "Allow once", Kind: "allow_once"},
	{OptionID: "allow_always", Name: "Allow always", Kind: "allow_always"},
	{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
}

// PermissionOutcome is the person's answer: the option chosen, or none
// (the prompt was dismissed or cancelled).
type PermissionOutcome struct {
	OptionID string // "" when cancelled
}

// permissions remembers "allow always", per kind of action: after it,
// actions of that kind (every command, say) run without asking.
type permissions struct {
	mu       sync.Mutex
	always   map[string]bool
	approved []preApproval
}

// Permit asks the person whether an action may run, unless an earlier
// "Allow always" covers its kind, or the session has no one to ask. It
// returns an error only when the question could not be put.
func (s *Session) Permit(ctx context.Context, req PermissionRequest) (bool, error) {
	if s.opts.AskPermission == nil {
		return true, nil
	}
	s.perms.mu.Lock()
	always := s.perms.always[req.Kind]
	s.perms.mu.Unlock()
	if always {
		return true, nil
	}
	out, err := s.opts.AskPermission(ctx, req)
	if err != nil {
		return false, fmt.Errorf("could not ask the user for permission: %w", err)
	}
	if out.OptionID == "allow_always" {
		s.perms.mu.Lock()
		if s.perms.always == nil {
			s.perms.always = map[string]bool{}
		}
		s.perms.always[req.Kind] = true
		s.perms.mu.Unlock()
	}
	return strings.HasPrefix(out.OptionID, "allow"), nil
}

// preApprovalTTL bounds how long an approval given for an action waits
// for the tool call that carries it out.
const preApprovalTTL = 10 * time.Minute

type preApproval struct {
	key     string
	expires time.Time
}

// PreApprove records that the person already allowed this tool call (an
// agent-server asked for confirmation before sending it): the call itself
// then runs without asking again, once.
func (s *Session) PreApprove(tool string, args json.RawMessage) {
	key, ok := CallKey(tool, args)
	if !ok {
		return
	}
	s.perms.mu.Lock()
	defer s.perms.mu.Unlock()
	s.perms.approved = append(s.perms.approved, preApproval{key: key, expires: time.Now().Add(preApprovalTTL)})
}

// takeApproval consumes an approval recorded for this call.
func (s *Session) takeApproval(tool string, args json.RawMessage) bool {
	key, ok := CallKey(tool, args)
	if !ok {
		return false
	}
	s.perms.mu.Lock()
	defer s.perms.mu.Unlock()
	now := time.Now()
	keep := s.perms.approved[:0]
	found := false
	for _, a := range s.perms.approved {
		switch {
		case a.expires.Before(now):
		case !found && a.key == key:
			found = true
		default:
			keep = append(keep, a)
		}
	}
	s.perms.approved = keep
	return found
}

// CallKey identifies a call by its tool and its arguments, whatever their
// key order: an agent-server's action and the tool call carrying it out
// have the same key. ok is false when the arguments are not JSON.
func CallKey(tool string, args json.RawMessage) (key string, ok bool) {
	var v any
	if len(args) > 0 && json.Unmarshal(args, &v) != nil {
		return "", false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return tool + "\x00" + string(b), true
}

// Ask puts req to the person with ACP's session/request_permission through
// call, a face's request to its client; toolCallID names the call as the
// client shows it, and extra adds parameters (ACP's sessionId).
func Ask(ctx context.Context, call func(ctx context.Context, method string, params, result any) error,
	req PermissionRequest, toolCallID string, extra map[string]any) (PermissionOutcome, error) {
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
		return PermissionOutcome{}, err
	}
	if res.Outcome.Outcome != "selected" {
		return PermissionOutcome{}, nil
	}
	return PermissionOutcome{OptionID: res.Outcome.OptionID}, nil
}
