package ohevents

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Kinds are the kinds Decode knows, each with a value of its type: the
// one list of the agent-server's events (internal/protogen writes the
// extension's types from it).
var Kinds = map[string]Event{
	"ActionEvent":                  &ActionEvent{},
	"ObservationEvent":             &ObservationEvent{},
	"UserRejectObservation":        &UserRejectObservation{},
	"AgentErrorEvent":              &AgentErrorEvent{},
	"MessageEvent":                 &MessageEvent{},
	"SystemPromptEvent":            &SystemPromptEvent{},
	"ConversationStateUpdateEvent": &ConversationStateUpdateEvent{},
	"ConversationErrorEvent":       &ConversationErrorEvent{},
	"ServerErrorEvent":             &ServerErrorEvent{},
	"PauseEvent":                   &PauseEvent{},
	"InterruptEvent":               &InterruptEvent{},
	"Condensation":                 &Condensation{},
	"CondensationRequest":          &CondensationRequest{},
	"CondensationSummaryEvent":     &CondensationSummaryEvent{},
	"TokenEvent":                   &TokenEvent{},
	"LLMCompletionLogEvent":        &LLMCompletionLogEvent{},
	"HookExecutionEvent":           &HookExecutionEvent{},
	"SecurityAnalysisEvent":        &SecurityAnalysisEvent{},
	"StreamingDeltaEvent":          &StreamingDeltaEvent{},
	"ACPToolCallEvent":             &ACPToolCallEvent{},
}

// NotEventError: bytes that are not an event (not a JSON object).
type NotEventError struct{ Err error }

func (e *NotEventError) Error() string {
	return fmt.Sprintf("an agent-server event is not a JSON object: %v", e.Err)
}

func (e *NotEventError) Unwrap() error { return e.Err }

// Kind is "bad_event".
func (e *NotEventError) Kind() string { return "bad_event" }

// Decode reads one event: the value of its kind's type, or an *Other for
// a kind not in Kinds or whose fields do not fit its type. It fails only
// on bytes that are not a JSON object. The event keeps data as its Raw:
// the caller must not change data afterwards.
func Decode(data []byte) (Event, error) {
	var b Base
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, &NotEventError{Err: err}
	}
	b.raw = data
	proto, ok := Kinds[b.Kind]
	if !ok {
		return &Other{Base: b}, nil
	}
	e := reflect.New(reflect.TypeOf(proto).Elem()).Interface().(Event)
	if err := json.Unmarshal(data, e); err != nil {
		return &Other{Base: b, Mismatch: fmt.Errorf("the fields of this %s are not the ones ohevents.%s declares: %w", b.Kind, b.Kind, err)}, nil
	}
	e.Header().raw = data
	return e, nil
}
