package updates_test

import (
	"encoding/json"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/updates"
)

// BenchmarkTrackerEvents: a replayed step (action, observation, message)
// turned into updates and encoded, as a face sends them; beside it, in the
// same run, the least any reader of the events does: decoding each into a
// map and encoding it again.
func BenchmarkTrackerEvents(b *testing.B) {
	events := []json.RawMessage{}
	for _, e := range []map[string]any{
		action("c1", "terminal", map[string]any{"command": "go test ./..."}, "Run the tests."),
		observation("c1", "terminal", "ok  \texample.com/x\t0.012s\n[The command completed with exit code 0.]", false),
		{"id": "m1", "kind": "MessageEvent", "source": "agent", "llm_message": map[string]any{"role": "assistant", "content": text("All tests pass.")}},
	} {
		raw, _ := json.Marshal(e)
		events = append(events, raw)
	}
	b.Run("tracker", func(b *testing.B) {
		var bytes int
		tr := updates.New(updates.Options{Emit: func(u updates.Update) {
			out, _ := json.Marshal(u)
			bytes += len(out)
		}})
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range events {
				ev, _ := ohevents.Decode(e)
				tr.Event(ev)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
	})
	b.Run("baseline-decode-encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range events {
				var m map[string]any
				json.Unmarshal(e, &m)
				json.Marshal(m)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
	})
}
