package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// PermissionRequest is an action put to the person before it runs. A face
// puts it in its own shape (ACP's session/request_permission for the
// editor and ACP clients).
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

// The answers the person can give. A face offers them in its own words
// and shape; the session only reads the id back.
const (
	AllowOnce   = "allow_once"
	AllowAlways = "allow_always"
	RejectOnce  = "reject_once"
)

// PermissionOutcome is the person's answer: the option chosen, or none.
type PermissionOutcome struct {
	OptionID string // AllowOnce, AllowAlways, RejectOnce; "" when none was chosen
	// Cancelled says the question was withdrawn rather than answered (ACP's
	// {"outcome": "cancelled"}: the person stopped the turn). The action
	// does not run, and it is not a "no" the agent should work around.
	Cancelled bool
}

// CancelledError answers an action whose permission question was
// cancelled, or that came while the face holds the session's calls (a
// cancelled turn): it does not run.
type CancelledError struct{ Why string }

func (e *CancelledError) Error() string { return e.Why }

// Kind returns "cancelled".
func (e *CancelledError) Kind() string { return "cancelled" }

// permissions remembers "allow always", per kind of action: after it,
// actions of that kind (every command, say) run without asking.
type permissions struct {
	mu       sync.Mutex
	always   map[string]bool
	approved []preApproval
}

// Permit asks the person whether an action may run, unless an earlier
// "Allow always" covers its kind, or the session has no one to ask. It
// returns an error when the question could not be put, and a
// *CancelledError when it was withdrawn.
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
	if out.Cancelled {
		return false, &CancelledError{Why: "the person cancelled the turn while asked about " + req.Title + "; it did not run"}
	}
	if out.OptionID == AllowAlways {
		s.perms.mu.Lock()
		if s.perms.always == nil {
			s.perms.always = map[string]bool{}
		}
		s.perms.always[req.Kind] = true
		s.perms.mu.Unlock()
	}
	return out.OptionID == AllowOnce || out.OptionID == AllowAlways, nil
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
// have the same key. ok is false when the arguments are not JSON. The
// arguments' canonical form (sorted keys) is hashed as it is encoded, with
// no HTML escaping: a 15 MiB file's text is not held again, nor grown
// sixfold where it has '<' characters (docs/safety.md, "Bounds").
func CallKey(tool string, args json.RawMessage) (key string, ok bool) {
	var v any
	if len(args) > 0 && json.Unmarshal(args, &v) != nil {
		return "", false
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return tool + "\x00" + hex.EncodeToString(h.Sum(nil)), true
}
