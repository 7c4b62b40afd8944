//go:build linux

package acp_test

import (
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

var cancelRounds = flag.Int("cancel-rounds", 30, "rounds of TestNoToolCallAfterCancel (200 to hunt the race)")

// TestNoToolCallAfterCancel: the agent's first tool call waits on a
// permission question, the person cancels the turn, the client answers the
// question "cancelled", and the agent's script has a second tool call
// next. The stand-in's interrupt acts up to 200 ms late (--interrupt-delay),
// so the agent could take that step first. The client must be told of no
// new tool call after it cancelled (no tool_call, no tool_call_update of a
// call it was not shown), neither call runs, the prompt answers
// "cancelled", and the agent never gets to the second call. Rounds
// alternate the two orders clients use: session/cancel then the answer
// (Zed, CodeCompanion), and the answer then session/cancel (agent-shell),
// with a random pause between.
func TestNoToolCallAfterCancel(t *testing.T) {
	ws := t.TempDir()
	first, second := filepath.Join(ws, "first.txt"), filepath.Join(ws, "second.txt")
	script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo first > " + first}}},
		{{"tool": "file_editor", "arguments": map[string]any{"command": "create", "path": second, "file_text": "second\n"}}},
		{{"message": "Done."}},
	}})
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(scriptFile, script, 0o644)
	// The stand-in: an interrupt that lands late (--interrupt-delay), which
	// the real server cannot be made to do on demand.
	peer := agentservertest.Start(t, "--script", scriptFile, "--interrupt-delay", "0.2")

	// log is everything the client saw and did, in order: a session's
	// updates, the moment it cancelled (its first word of it), and the
	// prompt's answer (noted once Call returns: an update read just
	// after the answer may be noted before it, never the other way round).
	type entry struct {
		session          string
		cancel, answered bool
		update           struct {
			SessionUpdate string `json:"sessionUpdate"`
			ToolCallID    string `json:"toolCallId"`
		}
		raw json.RawMessage
	}
	var (
		mu        sync.Mutex
		log       []entry
		cancelled = map[string]bool{}
	)
	mark := func(session string) {
		mu.Lock()
		defer mu.Unlock()
		if !cancelled[session] {
			cancelled[session] = true
			log = append(log, entry{session: session, cancel: true})
		}
	}
	var cl *rpctest.Client
	var round int
	cl = serveACPWith(t, peer.URL, func(method string, params json.RawMessage) (any, *rpc.Error) {
		if method != "session/request_permission" {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "this client does not serve " + method}
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(params, &p)
		mu.Lock()
		cancelFirst := round%2 == 0
		mu.Unlock()
		// A random pause between the cancel and the answer, either way
		// round: the race is the point, not a wait.
		pause := time.Duration(rand.IntN(30)) * time.Millisecond
		mark(p.SessionID)
		if cancelFirst {
			cl.Notify("session/cancel", map[string]any{"sessionId": p.SessionID})
			time.Sleep(pause)
		} else {
			go func() {
				time.Sleep(pause)
				cl.Notify("session/cancel", map[string]any{"sessionId": p.SessionID})
			}()
		}
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	})
	cl.DivertNotifications(func(m rpctest.Message) {
		if m.Method != "session/update" {
			return
		}
		var p struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		e := entry{session: p.SessionID, raw: p.Update}
		json.Unmarshal(p.Update, &e.update)
		mu.Lock()
		log = append(log, e)
		mu.Unlock()
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := cl.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for i := range *cancelRounds {
		mu.Lock()
		round = i
		mu.Unlock()
		var sess struct {
			SessionID string `json:"sessionId"`
		}
		if err := cl.Call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, &sess); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, sess.SessionID)
		var stop struct {
			StopReason string `json:"stopReason"`
		}
		if err := cl.Call(ctx, "session/prompt", map[string]any{"sessionId": sess.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": "Write both files."}}}, &stop); err != nil {
			t.Fatalf("round %d: session/prompt: %v", i, err)
		}
		mu.Lock()
		log = append(log, entry{session: sess.SessionID, answered: true})
		mu.Unlock()
		if stop.StopReason != "cancelled" {
			t.Errorf("round %d: stopReason %q, want cancelled", i, stop.StopReason)
		}
		for _, f := range []string{first, second} {
			if _, err := os.Stat(f); err == nil {
				t.Fatalf("round %d: %s was written: a call of the cancelled turn ran", i, f)
			}
		}
		if err := cl.Call(ctx, "session/close", map[string]any{"sessionId": sess.SessionID}, nil); err != nil {
			t.Fatalf("round %d: session/close: %v", i, err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	bad := 0
	for i, id := range sessions {
		if !cancelled[id] {
			t.Errorf("round %d: the client was never asked about the first call", i)
			continue
		}
		shown := map[string]bool{}
		after, over := false, false
		var late []string
		for _, e := range log {
			switch {
			case e.session != id:
			case e.cancel:
				after = true
			case e.answered:
				over = true
			case over:
				t.Errorf("round %d: an update came after the prompt's answer: %s", i, e.raw)
			case e.update.SessionUpdate == "tool_call" && !after:
				shown[e.update.ToolCallID] = true
			case after && (e.update.SessionUpdate == "tool_call" ||
				e.update.SessionUpdate == "tool_call_update" && !shown[e.update.ToolCallID]):
				late = append(late, string(e.raw))
			}
		}
		if len(late) > 0 {
			bad++
			if bad <= 3 {
				t.Errorf("round %d: after the cancel the client was told of a new tool call:\n%s", i, late)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cancelled turns announced a new tool call after the cancel", bad, len(sessions))
	}
	// The agent took no next step: the stand-in says so of each call that
	// got its answer. (By now every round's agent has long stopped.)
	steps := 0
	for {
		if _, err := peer.WaitLine(`TOOL_RESULT {"tool": "file_editor"`, 0); err != nil {
			break
		}
		steps++
	}
	if steps > 0 {
		t.Errorf("in %d of %d cancelled turns the agent made its second call before the interrupt reached it", steps, len(sessions))
	}
}
