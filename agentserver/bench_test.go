package agentserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/agentserver"
)

// streamServer is an agent-server reduced to what Connect reads, whose
// event socket sends the same n events to every subscriber as fast as it
// can: the session's own cost per event shows against a bare reader of
// the same frames.
func streamServer(b *testing.B, events [][]byte) *httptest.Server {
	id := "8c1a1f7e-3b0c-4a57-9d4e-5d2f5d3e9a01"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /server_info", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"title":"OpenHands Agent Server","version":"1.43.1","uptime":1,"idle_time":0}`))
	})
	mux.HandleFunc("GET /api/conversations/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":%q,"execution_status":"running"}`, id)
	})
	mux.HandleFunc("GET /sockets/events/{id}", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for _, e := range events {
			if err := c.Write(ctx, websocket.MessageText, e); err != nil {
				return
			}
		}
		c.Read(ctx) // until the client goes
	})
	s := httptest.NewServer(mux)
	b.Cleanup(s.Close)
	return s
}

// observationEvents are n distinct ObservationEvents as the agent-server
// sends them for a terminal call, about 1 KiB each.
func observationEvents(n int) [][]byte {
	out := make([][]byte, n)
	output := strings.Repeat("line of output\\n", 40)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"id":"ev-%08d","timestamp":"2026-11-23T09:00:00.%06d","source":"environment","tool_name":"terminal","tool_call_id":"toolu_%d","action_id":"act-%d","observation":{"kind":"MCPToolObservation","content":[{"cache_prompt":false,"type":"text","text":"[Tool 'terminal' executed.]"},{"cache_prompt":false,"type":"text","text":"%s[The command completed with exit code 0.]"}],"is_error":false,"tool_name":"terminal"},"kind":"ObservationEvent"}`, i, i%1000000, i, i, output)
	}
	return out
}

// BenchmarkEventStream: events from the socket to OnEvent through a
// Session (parse, dedupe by id, follow the state, report status), beside
// a bare coder/websocket reader of the same frames in the same run.
func BenchmarkEventStream(b *testing.B) {
	const n = 20000
	events := observationEvents(n)
	srv := streamServer(b, events)
	var session, bare time.Duration
	for range b.N {
		var got atomic.Int64
		done := make(chan struct{})
		start := time.Now()
		s, err := agentserver.Connect(context.Background(), agentserver.Options{
			ServerURL: srv.URL, ConversationID: "8c1a1f7e-3b0c-4a57-9d4e-5d2f5d3e9a01",
			OnEvent: func(json.RawMessage) {
				if got.Add(1) == n {
					close(done)
				}
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		<-done
		session += time.Since(start)
		s.Close()

		start = time.Now()
		c, _, err := websocket.Dial(context.Background(), strings.Replace(srv.URL, "http", "ws", 1)+"/sockets/events/x", nil)
		if err != nil {
			b.Fatal(err)
		}
		c.SetReadLimit(64 << 20)
		for range n {
			if _, _, err := c.Read(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		bare += time.Since(start)
		c.CloseNow()
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*n) }
	b.ReportMetric(per(session)/1000, "µs/event")
	b.ReportMetric(per(bare)/1000, "bare-µs/event")
	b.ReportMetric(per(session)/per(bare), "ratio")
}
