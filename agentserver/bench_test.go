package agentserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// streamServer is an agent-server reduced to what Connect reads, whose
// sockets send the same n events to every subscriber as fast as they
// can (the session socket in its frames): the session's own cost per
// event shows against a bare reader of the same frames.
func streamServer(b *testing.B, events [][]byte) *httptest.Server {
	id := "8c1a1f7e-3b0c-4a57-9d4e-5d2f5d3e9a01"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /server_info", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"title":"OpenHands Agent Server","version":"1.58.2","uptime":1,"idle_time":0}`))
	})
	mux.HandleFunc("GET /api/conversations/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":%q,"execution_status":"running"}`, id)
	})
	serve := func(frames [][]byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			ctx := r.Context()
			for _, e := range frames {
				if err := c.Write(ctx, websocket.MessageText, e); err != nil {
					return
				}
			}
			c.Read(ctx) // until the client goes
		}
	}
	mux.HandleFunc("GET /sockets/events/{id}", serve(events))
	durable := [][]byte{fmt.Appendf(nil, `{"type":"sync","from_seq":-1,"through_seq":%d}`, len(events)-1)}
	for i, e := range events {
		durable = append(durable, fmt.Appendf(nil, `{"type":"durable","seq":%d,"event":%s}`, i, e))
	}
	mux.HandleFunc("GET /sockets/session/{id}", serve(durable))
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
// Conversation (parse, drop repeats, follow the state, report status),
// beside a bare coder/websocket reader of the same frames in the same
// run; on the session socket and on the events socket.
func BenchmarkEventStream(b *testing.B) {
	const n = 20000
	events := observationEvents(n)
	srv := streamServer(b, events)
	for _, c := range []struct {
		name   string
		path   string
		frames int
		events bool
	}{{"session", "/sockets/session/x?after_seq=-1", n + 1, false}, {"events", "/sockets/events/x", n, true}} {
		b.Run(c.name, func(b *testing.B) {
			var session, bare time.Duration
			for range b.N {
				var got atomic.Int64
				done := make(chan struct{})
				start := time.Now()
				o := agentserver.Options{
					ServerURL: srv.URL, ConversationID: "8c1a1f7e-3b0c-4a57-9d4e-5d2f5d3e9a01",
					OnEvent: func(ohevents.Event) {
						if got.Add(1) == n {
							close(done)
						}
					},
				}
				if c.events {
					agentserver.UseEventsSocket(&o)
				}
				s, err := agentserver.Connect(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				<-done
				session += time.Since(start)
				s.Close()

				start = time.Now()
				conn, _, err := websocket.Dial(context.Background(), strings.Replace(srv.URL, "http", "ws", 1)+c.path, nil)
				if err != nil {
					b.Fatal(err)
				}
				conn.SetReadLimit(64 << 20)
				for range c.frames {
					if _, _, err := conn.Read(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				bare += time.Since(start)
				conn.CloseNow()
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*n) }
			b.ReportMetric(per(session)/1000, "µs/event")
			b.ReportMetric(per(bare)/1000, "bare-µs/event")
			b.ReportMetric(per(session)/per(bare), "ratio")
		})
	}
}
