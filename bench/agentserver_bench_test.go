package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
)

// BenchmarkV1AgentStep: the V1 loop through the compiled bridge and the
// agent-server stand-in. Its scripted agent calls terminal `echo hi` once
// per step; the bridge dialed it with openhands/connect and serves it the
// tool over MCP. Reported:
//   - step: from one ObservationEvent reaching the editor to the next (the
//     stand-in's turn, its MCP call, the bridge's terminal, the events back);
//   - mcp-leg: the call as the agent-server times it (the ActionEvent's and
//     ObservationEvent's timestamps);
//   - event-delivery: an event's timestamp to its openhands/did_receive_event
//     at the editor (the stand-in's socket, the session, JSON-RPC);
//
// beside, in the same run, the same tools/call made directly over MCP HTTP
// (raw, no client library) on the same bridge.
func BenchmarkV1AgentStep(b *testing.B) {
	if err := agentservertest.Available(); err != nil {
		b.Skip(err)
	}
	steps := max(b.N, 100)
	var turns [][]map[string]any
	for range steps {
		turns = append(turns, []map[string]any{{"tool": "terminal", "arguments": map[string]any{"command": "echo hi"}}})
	}
	turns = append(turns, []map[string]any{{"finish": "done"}})
	script := filepath.Join(b.TempDir(), "script.json")
	data, _ := json.Marshal(map[string]any{"turns": turns})
	os.WriteFile(script, data, 0o644)
	// The stand-in: what is measured is the bridge's own cost, which a
	// model's latency would drown; its scripted agent answers at once.
	peer, err := agentservertest.Launch("--script", script)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(peer.Stop)

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

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ResetTimer()
	if err := p.client.Call(ctx, "openhands/connect", map[string]any{
		"serverUrl": peer.URL, "llm": map[string]any{"model": "bench/scripted"}, "task": "echo",
	}, nil); err != nil {
		b.Fatal(err)
	}
	type event struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		Timestamp string `json:"timestamp"`
		ActionID  string `json:"action_id"`
	}
	actions := map[string]time.Time{}
	var stepGaps, legs, delivery []time.Duration
	var lastObs time.Time
	for done := 0; done < steps; {
		m, err := p.client.AwaitNotification(ctx, "openhands/did_receive_event", nil)
		if err != nil {
			b.Fatal(err)
		}
		arrived := time.Now()
		var n struct{ Event event }
		json.Unmarshal(m.Params, &n)
		e := n.Event
		stamp, err := time.ParseInLocation("2006-01-02T15:04:05.999999", e.Timestamp, time.Local)
		if err != nil {
			continue // the state snapshot a socket starts with has a stamp too; others must
		}
		delivery = append(delivery, arrived.Sub(stamp))
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
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(stepGaps, 0.5)), "step-p50-ms")
	b.ReportMetric(ms(percentile(stepGaps, 0.99)), "step-p99-ms")
	b.ReportMetric(ms(percentile(legs, 0.5)), "mcp-leg-p50-ms")
	b.ReportMetric(ms(percentile(delivery, 0.5)), "event-delivery-p50-ms")
	b.ReportMetric(ms(percentile(base, 0.5)), "direct-mcp-p50-ms")
}
