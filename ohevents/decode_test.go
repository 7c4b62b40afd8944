package ohevents_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

// TestDecode: each kind comes back as its type with its fields read, and
// with the bytes the server sent; a kind this package does not know, and
// a known kind whose fields do not fit, come back as an *Other with their
// header and bytes, to be passed on unchanged.
func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		check     func(t *testing.T, e ohevents.Event)
	}{
		{"an MCP tool's action", `{"kind":"ActionEvent","id":"a1","timestamp":"2026-11-27T21:00:00.000001","source":"agent","tool_name":"terminal","tool_call_id":"c1","thought":[{"type":"text","text":"Let me look."}],"action":{"kind":"MCPToolAction","data":{"command":"ls"}},"summary":"list"}`,
			func(t *testing.T, e ohevents.Event) {
				a := e.(*ohevents.ActionEvent)
				if a.ID != "a1" || a.Source != "agent" || a.ToolName != "terminal" || a.ToolCallID != "c1" || ohevents.OrEmpty(a.Summary) != "list" ||
					len(a.Thought) != 1 || a.Thought[0].Text != "Let me look." || string(a.Action.Arguments()) != `{"command":"ls"}` {
					t.Errorf("%+v", a)
				}
			}},
		{"finish", `{"kind":"ActionEvent","id":"a2","parent_id":null,"tool_name":"finish","summary":null,"action":{"kind":"FinishAction","message":"Done."}}`,
			func(t *testing.T, e ohevents.Event) {
				a := e.(*ohevents.ActionEvent)
				if a.ParentID != nil || a.Summary != nil || ohevents.OrEmpty(a.Summary) != "" {
					t.Errorf("null fields read as %v, %v", a.ParentID, a.Summary)
				}
				if a.Action.Message != "Done." || string(a.Action.Arguments()) != `{"kind":"FinishAction","message":"Done."}` {
					t.Errorf("%+v", a.Action)
				}
			}},
		{"an action the model's call could not be made", `{"kind":"ActionEvent","id":"a3","tool_name":"terminal","action":null}`,
			func(t *testing.T, e ohevents.Event) {
				if a := e.(*ohevents.ActionEvent); a.Action != nil || a.Action.Arguments() != nil {
					t.Errorf("%+v", a.Action)
				}
			}},
		{"an observation", `{"kind":"ObservationEvent","id":"o1","action_id":"a1","tool_call_id":"c1","tool_name":"terminal","observation":{"kind":"MCPToolObservation","content":[{"type":"text","text":"[Tool 'terminal' executed.]"},{"type":"text","text":"hi"}],"is_error":true}}`,
			func(t *testing.T, e ohevents.Event) {
				o := e.(*ohevents.ObservationEvent)
				if o.ActionID != "a1" || !o.Observation.IsError || len(o.Observation.Content) != 2 || o.Observation.Content[1].Text != "hi" {
					t.Errorf("%+v", o)
				}
			}},
		{"a message as a list", `{"kind":"MessageEvent","id":"m1","source":"user","llm_message":{"role":"user","content":[{"type":"text","text":"hello"}]}}`,
			func(t *testing.T, e ohevents.Event) {
				if m := e.(*ohevents.MessageEvent); m.LLMMessage.Content[0].Text != "hello" || m.Source != "user" {
					t.Errorf("%+v", m.LLMMessage)
				}
			}},
		{"a message as a string", `{"kind":"MessageEvent","id":"m2","source":"agent","llm_message":{"role":"assistant","content":"hi","reasoning_content":"hm"}}`,
			func(t *testing.T, e ohevents.Event) {
				if m := e.(*ohevents.MessageEvent); len(m.LLMMessage.Content) != 1 || m.LLMMessage.Content[0].Text != "hi" || ohevents.OrEmpty(m.LLMMessage.ReasoningContent) != "hm" {
					t.Errorf("%+v", m.LLMMessage)
				}
			}},
		{"a rejection", `{"kind":"UserRejectObservation","id":"r1","action_id":"a1","rejection_reason":"no","rejection_source":"user"}`,
			func(t *testing.T, e ohevents.Event) {
				if r := e.(*ohevents.UserRejectObservation); r.ActionID != "a1" || r.RejectionReason != "no" {
					t.Errorf("%+v", r)
				}
			}},
		{"an agent error", `{"kind":"AgentErrorEvent","id":"e1","tool_call_id":"c1","error":"boom"}`,
			func(t *testing.T, e ohevents.Event) {
				if a := e.(*ohevents.AgentErrorEvent); a.ToolCallID != "c1" || a.Error != "boom" {
					t.Errorf("%+v", a)
				}
			}},
		{"a status", `{"kind":"ConversationStateUpdateEvent","id":"s1","key":"execution_status","value":"waiting_for_confirmation"}`,
			func(t *testing.T, e ohevents.Event) {
				if s := e.(*ohevents.ConversationStateUpdateEvent).ExecutionStatus(); s != "waiting_for_confirmation" {
					t.Errorf("status %q", s)
				}
			}},
		{"the full state", `{"kind":"ConversationStateUpdateEvent","id":"s2","key":"full_state","value":{"execution_status":"idle","agent":{}}}`,
			func(t *testing.T, e ohevents.Event) {
				if s := e.(*ohevents.ConversationStateUpdateEvent).ExecutionStatus(); s != "idle" {
					t.Errorf("status %q", s)
				}
			}},
		{"another key", `{"kind":"ConversationStateUpdateEvent","id":"s3","key":"stats","value":{}}`,
			func(t *testing.T, e ohevents.Event) {
				if s := e.(*ohevents.ConversationStateUpdateEvent).ExecutionStatus(); s != "" {
					t.Errorf("status %q", s)
				}
			}},
		{"a pause", `{"kind":"PauseEvent","id":"p1","source":"user"}`,
			func(t *testing.T, e ohevents.Event) { _ = e.(*ohevents.PauseEvent) }},
		{"a condensation", `{"kind":"Condensation","id":"k1","forgotten_event_ids":["a","b"],"summary":"s","summary_offset":1,"llm_response_id":"r"}`,
			func(t *testing.T, e ohevents.Event) {
				if c := e.(*ohevents.Condensation); len(c.ForgottenEventIDs) != 2 || *c.SummaryOffset != 1 {
					t.Errorf("%+v", c)
				}
			}},
		{"a kind of a later server", `{"kind":"BrandNewEvent","id":"n1","timestamp":"t","source":"agent","whatever":[1,2]}`,
			func(t *testing.T, e ohevents.Event) {
				if o := e.(*ohevents.Other); o.Kind != "BrandNewEvent" || o.ID != "n1" || o.Mismatch != nil {
					t.Errorf("%+v", o)
				}
			}},
		{"a known kind whose fields do not fit", `{"kind":"ActionEvent","id":"x1","tool_name":7}`,
			func(t *testing.T, e ohevents.Event) {
				if o := e.(*ohevents.Other); o.Kind != "ActionEvent" || o.ID != "x1" || o.Mismatch == nil {
					t.Errorf("%+v", o)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := ohevents.Decode([]byte(c.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.Raw(), []byte(c.raw)) {
				t.Errorf("raw %s; want the bytes sent", e.Raw())
			}
			c.check(t, e)
		})
	}
}

// TestDecodeNotAnEvent: bytes that are not a JSON object are an error of
// kind bad_event, not an event.
func TestDecodeNotAnEvent(t *testing.T) {
	for _, raw := range []string{``, `[1]`, `"x"`, `{"kind":`, `{"kind":5}`} {
		_, err := ohevents.Decode([]byte(raw))
		var ne *ohevents.NotEventError
		if !errors.As(err, &ne) || ne.Kind() != "bad_event" {
			t.Errorf("%q: %v; want a NotEventError", raw, err)
		}
	}
}

// TestKinds: every kind's type is registered under its own name, as the
// SDK's discriminator names it.
func TestKinds(t *testing.T) {
	for kind, proto := range ohevents.Kinds {
		e, err := ohevents.Decode([]byte(`{"kind":"` + kind + `","id":"i"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, other := e.(*ohevents.Other); other {
			t.Errorf("%s decodes as an Other", kind)
		}
		if got, want := typeName(e), typeName(proto); got != want || want != "*ohevents."+kind {
			t.Errorf("%s decodes as %s; its prototype is %s", kind, got, want)
		}
	}
}
