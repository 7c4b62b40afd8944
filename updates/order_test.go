package updates_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// TestUpdateOrderOverManyTurns plays 1,000 scripted command turns whose
// pieces arrive in random orders: the agent-server's action before or
// after the session starts the call, the command's output before the
// action, split anywhere, trailing the call's end, and the throttled live
// updates firing around the completion. For every call:
//   - nothing follows its completion;
//   - its first output byte is in its card;
//   - its final card holds the output the agent received.
func TestUpdateOrderOverManyTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { playTurns(t, false) })
}

// TestDisplayTerminalOrderOverManyTurns plays the same turns for a client
// with display terminals (_meta.terminal_output): nothing follows a call's
// terminal_exit, and its terminal was sent the output the agent received,
// from the first byte, though some of it trailed the completion.
func TestDisplayTerminalOrderOverManyTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { playTurns(t, true) })
}

// playTurns runs in a synctest bubble: the throttle's clock is the
// bubble's, so a pause between steps lets the throttled updates due by
// then fire, the same way every run.
func playTurns(t *testing.T, display bool) {
	rng := rand.New(rand.NewPCG(7, 11))
	var mu sync.Mutex
	var log []map[string]any
	tr := updates.New(updates.Options{Throttle: time.Millisecond, TerminalOutput: display, Emit: func(u updates.Update) {
		b, _ := json.Marshal(u)
		var m map[string]any
		json.Unmarshal(b, &m)
		mu.Lock()
		log = append(log, m)
		mu.Unlock()
	}})
	obs := tr.Observer()
	const term = "agent-1"
	offset := int64(0)
	// output is a piece of the stream as the terminal delivers it: the raw
	// bytes, then the command's text in them.
	output := func(seq int, raw, text string) {
		obs.OnTerminal(session.TerminalEvent{TerminalID: term, Output: &session.TerminalOutput{Offset: offset, Data: []byte(raw)}})
		offset += int64(len(raw))
		if text != "" {
			obs.OnTerminal(session.TerminalEvent{TerminalID: term, Text: &session.TerminalText{Seq: seq, Text: text}})
		}
	}
	ended := func(seq int) {
		code := 0
		obs.OnTerminal(session.TerminalEvent{TerminalID: term, State: &session.TerminalStateEvent{State: session.TerminalIdle, Seq: seq, ExitCode: &code}})
	}
	const turns = 1000
	agentGot := map[string]string{}
	for i := range turns {
		id := fmt.Sprintf("call-%d", i)
		cmd := fmt.Sprintf("echo turn %d", i)
		args := map[string]any{"command": cmd}
		raw, _ := json.Marshal(args)
		lines := 1 + rng.IntN(5)
		var body strings.Builder
		for l := range lines {
			fmt.Fprintf(&body, "turn %d line %d\n", i, l)
		}
		agentOutput := strings.TrimSuffix(body.String(), "\n")
		agentGot[id] = agentOutput
		// The stream: the prompt's marks, the command's output cut into
		// random pieces, its end mark and the idle state.
		seq := i + 1
		stream := []func(){func() { output(seq, "\x1b]633;C\x07", "") }}
		rest := body.String()
		for rest != "" {
			n := 1 + rng.IntN(len(rest))
			piece := rest[:n]
			stream = append(stream, func() { output(seq, piece, piece) })
			rest = rest[n:]
		}
		stream = append(stream, func() { output(seq, "\x1b]633;D;0\x07\x1b]633;A\x07$ ", ""); ended(seq) })
		start := session.CallEvent{ID: int64(i + 1), Agent: "agent-1", Tool: "terminal", Args: raw, TerminalID: term}
		end := start
		end.Ended = true
		end.Observation = &ohtools.Observation{
			Content: []ohtools.Content{{Text: agentOutput + "\n[The command completed with exit code 0.]"}},
			Command: &ohtools.CommandInfo{TerminalID: term, Command: cmd, ExitCode: 0, Output: agentOutput},
		}
		action := event(t, map[string]any{"id": "ev-" + id, "kind": "ActionEvent", "source": "agent", "tool_name": "terminal",
			"tool_call_id": id, "action": map[string]any{"kind": "MCPToolAction", "data": args}})
		observation := event(t, observation(id, "terminal", agentOutput+"\n[The command completed with exit code 0.]", false))

		// The order: the session starts the call; its output streams; the
		// session ends it; the observation follows. The action lands at a
		// random point before the observation, and up to three pieces of
		// the stream trail the call's end, some after the observation.
		steps := []func(){func() { obs.OnCall(start) }}
		steps = append(steps, stream...)
		trail := rng.IntN(min(3, len(stream)) + 1)
		cut := len(steps) - trail
		tail := append([]func(){}, steps[cut:]...)
		steps = append(steps[:cut], func() { obs.OnCall(end) })
		steps = append(steps, func() { tr.Event(observation) })
		at := rng.IntN(len(steps)) // before the observation
		steps = append(steps[:at], append([]func(){func() { tr.Event(action) }}, steps[at:]...)...)
		steps = append(steps, tail...)
		for _, step := range steps {
			step()
			if rng.IntN(8) == 0 {
				time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond) // a random moment: throttled updates due by then fire
			}
		}
	}
	// Past the throttle, every update still pending fires.
	time.Sleep(20 * time.Millisecond)
	synctest.Wait()

	mu.Lock()
	defer mu.Unlock()
	done := map[string]bool{}
	final := map[string]string{}
	lives := 0
	seen := map[string]bool{}
	for n, u := range log {
		id, _ := u["toolCallId"].(string)
		if id == "" {
			continue
		}
		seen[id] = true
		if done[id] {
			t.Fatalf("update %d for %s follows its completion: %v", n, id, u)
		}
		if display {
			// The terminal's text so far stands in for the card's.
			meta, _ := u["_meta"].(map[string]any)
			if out, ok := meta["terminal_output"].(map[string]any); ok {
				final[id] += out["data"].(string)
				u = map[string]any{"content": []any{map[string]any{"content": map[string]any{"text": final[id]}}}}
			}
			if st, _ := u["status"].(string); st == "completed" || st == "failed" {
				if meta["terminal_exit"] == nil {
					t.Fatalf("update %d completes %s without exiting its terminal: %v", n, id, u)
				}
				done[id] = true
				final[id] = strings.TrimSuffix(final[id], "\n") // the agent's text is trimmed
				continue
			}
		}
		if st, _ := u["status"].(string); st == "completed" || st == "failed" {
			done[id] = true
			final[id] = contentText(u)
		} else if live := contentText(u); live != "" {
			// A live card shows the output from its first byte on.
			first := "turn " + strings.TrimPrefix(id, "call-") + " line 0"
			if !strings.HasPrefix(live, first[:min(len(first), len(live))]) {
				t.Fatalf("update %d for %s shows %q, which does not start with its first output %q", n, id, live, first)
			}
			lives++
		}
	}
	if lives < turns/10 {
		t.Errorf("only %d live output updates in %d turns: the live card went unchecked", lives, turns)
	}
	for i := range turns {
		id := fmt.Sprintf("call-%d", i)
		if !done[id] {
			t.Fatalf("%s never completed (seen: %v)", id, seen[id])
		}
		first := fmt.Sprintf("turn %d line 0", i)
		if !strings.HasPrefix(final[id], first) {
			t.Fatalf("%s's final card %q lacks its first output %q", id, final[id], first)
		}
		if final[id] != agentGot[id] {
			t.Fatalf("%s's final card is %q; the agent received %q", id, final[id], agentGot[id])
		}
	}
}
