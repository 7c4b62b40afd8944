package agentserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestRealSocketCuts: no event is lost or delivered twice across a
// reconnect. The real agent-server's agent works through twelve steps
// (each a message with a think call, every other one a terminal call
// too, run by the bridge), and its socket is cut twice in each: once
// while the agent waits on its model, then, as the step's events come,
// either right after an event was delivered or in the middle of a frame.
// At the end the events delivered are the server's log, in its order,
// each once, with nothing dropped as a repeat: the session socket
// resumes after the last durable event's seq.
//
// The same run on the events socket (the bridge's fallback) shows why:
// each reconnect resends events the bridge already has (it resumes a
// little before the last one's time), which the bridge must drop by id.
//
// The model gets no request but the agent's: the bridge's conversations
// are made with autotitle false, so the server asks it for no title (the
// bridge names the conversation after its first message).
func TestRealSocketCuts(t *testing.T) {
	for _, lock := range []string{realserver.Latest, realserver.Canvas} {
		t.Run(lock+"/session socket", func(t *testing.T) { cutMidTurn(t, lock, false) })
	}
	t.Run(realserver.Latest+"/events socket", func(t *testing.T) { cutMidTurn(t, realserver.Latest, true) })
}

func cutMidTurn(t *testing.T, lock string, eventsSocket bool) {
	srv := sharedServer(t, lock)
	b := newBridge(t)
	const steps = 12
	tools := []string{"file_editor", "task_tracker", "terminal", "finish", "think"}
	holds := make([]chan struct{}, steps+1)
	var turns []scriptedllm.Turn
	for i := range steps + 1 {
		holds[i] = make(chan struct{})
		turn := scriptedllm.Turn{Tools: tools, Hold: holds[i], Content: fmt.Sprintf("Step %d.", i),
			ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call("think", map[string]any{"thought": fmt.Sprintf("Step %d comes next.", i)})}}
		if i%2 == 0 {
			turn.ToolCalls = append(turn.ToolCalls, scriptedllm.Call("terminal", map[string]any{"command": fmt.Sprintf("echo step %d", i), "summary": "count"}))
		}
		if i == steps {
			turn.ToolCalls = []scriptedllm.ToolCall{scriptedllm.Call("finish", map[string]any{"message": "Counted."})}
		}
		turns = append(turns, turn)
	}
	model := scriptedllm.Start(t, turns...)
	px := newProxy(t, strings.TrimPrefix(srv.URL, "http://"))
	r := newRecorder()
	var cutAfterEvent atomic.Bool
	r.afterEvent = func() {
		if cutAfterEvent.CompareAndSwap(true, false) {
			px.cut()
		}
	}
	o := connectOptions(b, px.URL(), r)
	o.SessionAPIKey = srv.Key
	o.LLM = scriptedLLM(model)
	o.Task = "Count the steps."
	if eventsSocket {
		agentserver.UseEventsSocket(&o)
	}
	start := time.Now()
	conv := connect(t, o)

	cuts := 0
	reconnected := func() {
		t.Helper()
		r.await(t, fmt.Sprintf("reconnect %d", cuts), func(_ []json.RawMessage, st []agentserver.Status) bool {
			return reconnects(st) >= cuts && last(st).State == agentserver.StateConnected
		})
	}
	for i := range steps + 1 {
		select {
		case <-model.Reached(i):
		case <-time.After(2 * time.Minute):
			t.Fatalf("the agent never asked its model for step %d", i)
		}
		if i < steps {
			// Mid-turn: the agent waits on its model.
			r.awaitExecution(t, "running")
			px.cut()
			cuts++
			reconnected()
			if i%2 == 0 {
				cutAfterEvent.Store(true)
			} else {
				px.cutMidFrame()
			}
			cuts++
		}
		close(holds[i])
		if i < steps {
			reconnected()
		}
	}
	model.Wait(time.Minute)
	r.awaitExecution(t, "finished")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logged := allEvents(t, srv.URL, srv.Key, conv.ConversationID())
	want := ids(logged)
	r.await(t, "every event of the log", func(ev []json.RawMessage, _ []agentserver.Status) bool {
		got := map[string]bool{}
		for _, id := range ids(ev) {
			got[id] = true
		}
		return !slices.ContainsFunc(want, func(id string) bool { return !got[id] })
	})
	if !eventsSocket {
		if err := conv.CaughtUp(ctx); err != nil {
			t.Errorf("CaughtUp: %v", err)
		}
	}
	elapsed := time.Since(start)

	// What was delivered, less the state snapshots the log does not keep.
	inLog := map[string]bool{}
	for _, id := range want {
		inLog[id] = true
	}
	var got []string
	for _, e := range r.snapshot() {
		p := parse(e)
		if inLog[p.ID] {
			got = append(got, p.ID)
		} else if p.Kind != "ConversationStateUpdateEvent" || p.Key != "full_state" {
			t.Errorf("delivered %s (%s), which is not in the log", describe(e), p.ID)
		}
	}
	st := r.snapshotStatuses()
	t.Logf("%d cuts, %d reconnects, %d events in the log, %d delivered, %d repeats dropped, %v",
		cuts, reconnects(st), len(want), len(got), conv.Repeats(), elapsed.Round(time.Millisecond))
	if cuts < 20 || reconnects(st) < cuts {
		t.Errorf("%d cuts and %d reconnects; want at least 20 of each", cuts, reconnects(st))
	}
	if conv.OnEventsSocket() != eventsSocket {
		t.Errorf("on the events socket: %v; want %v", conv.OnEventsSocket(), eventsSocket)
	}
	if eventsSocket {
		// Every event once, after dropping the repeats by id; the order
		// is told, not held to.
		sameOnce(t, persisted(r.snapshot()), logged)
		if conv.Repeats() == 0 {
			t.Errorf("the events socket resent nothing across %d reconnects", reconnects(st))
		}
		index := map[string]int{}
		for i, id := range want {
			index[id] = i
		}
		late, highest := 0, -1
		for _, id := range got {
			if index[id] < highest {
				late++
			}
			highest = max(highest, index[id])
		}
		t.Logf("%d of %d events came after a later one of the log", late, len(got))
	} else {
		// Each once; and in the log's order but for the state updates:
		// 1.49.1 publishes the update a message causes before the
		// message itself, where its log has them the other way round
		// (1.58.2 keeps the log's order).
		kinds := map[string]string{}
		for _, e := range r.snapshot() {
			p := parse(e)
			kinds[p.ID] = p.Kind
		}
		substantive := func(ids []string) []string {
			return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return kinds[id] == "ConversationStateUpdateEvent" })
		}
		sameOnce(t, persisted(r.snapshot()), logged)
		if g, w := substantive(got), substantive(want); !slices.Equal(g, w) {
			t.Errorf("delivered %d events, the log has %d; in order (state updates aside), each once:\n got %q\nwant %q", len(got), len(want), g, w)
		}
		if n := conv.Repeats(); n != 0 {
			t.Errorf("the session socket resent %d events already delivered", n)
		}
	}

	// No title request reached the model: it saw the agent's requests
	// only, each offering the agent's tools. The bridge named the
	// conversation after its first message, as the server does without
	// an LLM.
	for i, req := range model.Requests() {
		if len(req.Tools) == 0 {
			t.Errorf("request %d to the model offered no tools (a title request?)", i+1)
		}
	}
	if n := len(model.Requests()); n != steps+1 {
		t.Errorf("the model got %d requests; want the agent's %d", n, steps+1)
	}
	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Conversation(ctx, conv.ConversationID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Title != o.Task {
		t.Errorf("the conversation's title is %q; want its first message, %q", info.Title, o.Task)
	}
}

// reconnects counts the stream's returns after a drop.
func reconnects(st []agentserver.Status) int {
	n := 0
	for i := 1; i < len(st); i++ {
		if st[i].State == agentserver.StateConnected && st[i-1].State == agentserver.StateReconnecting {
			n++
		}
	}
	return n
}
