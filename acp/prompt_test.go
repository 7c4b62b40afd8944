package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// TestStopReasons follows a turn through the agent's states to the stop
// reason ACP is told.
func TestStopReasons(t *testing.T) {
	cases := []struct {
		name      string
		states    []string // execution statuses; "failed" is the connection's state
		cancelled bool
		errorCode string
		want      string // stop reason, or "error: <substring>"
	}{
		{"finished", []string{"running", "finished"}, false, "", "end_turn"},
		{"an earlier turn's finished is not this one's", []string{"finished", "running", "finished"}, false, "", "end_turn"},
		{"rejected in confirmation mode", []string{"waiting_for_confirmation", "idle"}, false, "", "end_turn"},
		{"paused by the person elsewhere", []string{"running", "paused"}, false, "", "end_turn"},
		{"cancelled", []string{"running", "paused"}, true, "", "cancelled"},
		{"cancelled, though the agent finished first", []string{"running", "finished"}, true, "", "cancelled"},
		{"stuck", []string{"running", "stuck"}, false, "", "end_turn"},
		{"iterations", []string{"running", "error"}, false, "MaxIterationsReached", "max_turn_requests"},
		{"an error", []string{"running", "error"}, false, "LLMBadRequestError", "error: LLMBadRequestError"},
		{"an error after cancel", []string{"running", "error"}, true, "x", "cancelled"},
		{"the server went away", []string{"running", "failed"}, false, "", "error: connection to the agent-server was lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &acpSession{id: "c"}
			tr := newTurn()
			tr.cancelled = c.cancelled
			s.turn = tr
			if c.errorCode != "" {
				raw, _ := json.Marshal(map[string]string{"kind": "ConversationErrorEvent", "code": c.errorCode, "detail": "d"})
				ev, err := ohevents.Decode(raw)
				if err != nil {
					t.Fatal(err)
				}
				s.event(ev)
			}
			for i, st := range c.states {
				if i == 0 && st == "finished" {
					// Seen before the turn began running: it must not end it.
					s.status(agentserver.Status{State: agentserver.StateConnected, ExecutionStatus: st})
					select {
					case <-tr.done:
						t.Fatal("the turn ended on a state from before it ran")
					default:
					}
					continue
				}
				if st == "failed" {
					s.status(agentserver.Status{State: agentserver.StateFailed, Error: "EOF"})
					continue
				}
				s.status(agentserver.Status{State: agentserver.StateConnected, ExecutionStatus: st})
			}
			select {
			case <-tr.done:
			default:
				t.Fatal("the turn did not end")
			}
			got := tr.stop
			if tr.err != nil {
				got = "error: " + tr.err.Error()
			}
			if got != c.want && !(strings.HasPrefix(c.want, "error: ") && strings.Contains(got, strings.TrimPrefix(c.want, "error: "))) {
				t.Errorf("stop = %q, want %q", got, c.want)
			}
		})
	}
}

func TestPromptText(t *testing.T) {
	var blocks []contentBlock
	json.Unmarshal([]byte(`[{"type":"text","text":"Fix this:"},
		{"type":"resource","resource":{"uri":"file:///w/a.go","text":"package a"}},
		{"type":"resource_link","uri":"file:///w/b.go","name":"b.go"},
		{"type":"image","data":"AAAA","mimeType":"image/png"}]`), &blocks)
	want := "Fix this:\n<context uri=\"file:///w/a.go\">\npackage a\n</context>\n[b.go](file:///w/b.go)"
	if got := promptText(blocks); got != want {
		t.Errorf("promptText = %q, want %q", got, want)
	}
}
