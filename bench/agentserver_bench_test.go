package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// BenchmarkV1AgentStep: the V1 loop through the compiled bridge and the
// real agent-server (1.58.2), as an editor drives it: openhands/connect
// makes the conversation (the bridge's MCP endpoint its agent's only
// tools), whose scripted model calls terminal `echo hi` once per step.
// Reported:
//   - step: from one ObservationEvent reaching the editor to the next (the
//     server's orchestration, its LLM call to the scripted model, its MCP
//     call to the bridge's terminal, the events back);
//   - mcp-leg: the call as the agent-server times it (the ActionEvent's and
//     ObservationEvent's timestamps);
//   - event-delivery: an event's timestamp to its openhands/did_receive_event
//     at the editor (the server's socket, the session, JSON-RPC), for the
//     events the bare client below got live too;
//
// beside, in the same run, the same tools/call made directly over MCP HTTP
// (raw, no client library) on the same bridge, and the same events read
// live by a bare websocket client on the server's session socket, opened
// just after the bridge's: the server's share of the delivery (timestamp
// to the bare client), and the editor's arrival minus the bare client's,
// event by event. The server writes an event to its sockets in the order
// they subscribed, the bridge's first, so that difference is the bridge's
// cost less the server's lag between two sockets: a lower bound.
func BenchmarkV1AgentStep(b *testing.B) {
	srv := realServer(b)
	const steps = 60
	var turns []scriptedllm.Turn
	// Each command differs: the SDK's stuck detector ends a conversation
	// that repeats one action with one observation.
	for i := range steps {
		turns = append(turns, scriptedllm.Turn{ToolCalls: []scriptedllm.ToolCall{
			scriptedllm.Call("terminal", map[string]any{"command": fmt.Sprint("echo hi ", i), "summary": "say hi"})}})
	}
	turns = append(turns, scriptedllm.Turn{ToolCalls: []scriptedllm.ToolCall{
		scriptedllm.Call("finish", map[string]any{"message": "done"})}})
	model := scriptedllm.Start(b, turns...)

	p, _ := startOpenHandsBridge(b)
	url, token := mcpHTTP(b, p)
	direct := rawHTTP(b, url, token)
	for range 20 {
		direct.echo(b)
	}
	base := make([]time.Duration, 200)
	for i := range base {
		base[i] = direct.echo(b)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ResetTimer()
	var conn struct{ ConversationID string }
	if err := p.client.Call(ctx, "openhands/connect", map[string]any{
		"serverUrl": srv.URL, "sessionApiKey": srv.Key, "llm": scriptedLLM(model), "task": "echo",
	}, &conn); err != nil {
		b.Fatal(err)
	}
	bare := followBare(b, srv, conn.ConversationID)
	actions := map[string]time.Time{}
	var stepGaps, legs []time.Duration
	atEditor := map[string][2]time.Time{} // by event id: its timestamp, its arrival
	var lastObs time.Time
	for done := 0; done < steps; {
		wait, cancel := context.WithTimeout(context.Background(), time.Minute)
		m, err := p.client.AwaitNotification(wait, "openhands/did_receive_event", nil)
		cancel()
		if err != nil {
			b.Fatalf("after %d steps: %v", done, err)
		}
		arrived := time.Now()
		var n struct{ Event serverEvent }
		json.Unmarshal(m.Params, &n)
		e := n.Event
		stamp, ok := e.stamp()
		if !ok {
			continue // the state snapshot a socket starts with has no stamp of this form
		}
		if _, seen := atEditor[e.ID]; !seen {
			atEditor[e.ID] = [2]time.Time{stamp, arrived}
		}
		switch e.Kind {
		case "ActionEvent":
			actions[e.ID] = stamp
		case "ObservationEvent":
			legs = append(legs, stamp.Sub(actions[e.ActionID]))
			if !lastObs.IsZero() {
				stepGaps = append(stepGaps, arrived.Sub(lastObs))
			}
			lastObs = arrived
			done++
		}
	}
	b.StopTimer()
	model.Wait(2 * time.Minute)
	// Paired once the run is over, so that an event the bare client read
	// after the editor got it counts too.
	var delivery, bareDelivery, added []time.Duration
	for id, t := range atEditor {
		if bt, ok := bare.at(id); ok {
			delivery = append(delivery, t[1].Sub(t[0]))
			bareDelivery = append(bareDelivery, bt.Sub(t[0]))
			added = append(added, t[1].Sub(bt))
		}
	}
	b.ReportMetric(msOf(percentile(stepGaps, 0.5)), "step-p50-ms")
	b.ReportMetric(msOf(percentile(stepGaps, 0.99)), "step-p99-ms")
	b.ReportMetric(msOf(percentile(legs, 0.5)), "mcp-leg-p50-ms")
	b.ReportMetric(msOf(percentile(delivery, 0.5)), "event-delivery-p50-ms")
	if len(added) < steps {
		b.Fatalf("only %d events reached both the editor and the bare socket live", len(added))
	}
	b.ReportMetric(msOf(percentile(bareDelivery, 0.5)), "bare-socket-delivery-p50-ms")
	b.ReportMetric(msOf(percentile(added, 0.5)), "editor-minus-bare-p50-ms")
	b.ReportMetric(msOf(percentile(base, 0.5)), "direct-mcp-p50-ms")
}
