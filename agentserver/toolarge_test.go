package agentserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/agentserver"
)

// TestEventTooLargeForTheSessionSocket: the session socket drops the
// connection (1013 frame_too_large) at an event over its 4 MiB frames,
// and would at every resume; the conversation goes on on the events
// socket, which sends the event whole, and delivers each event once.
func TestEventTooLargeForTheSessionSocket(t *testing.T) {
	const id = "8c1a1f7e-3b0c-4a57-9d4e-5d2f5d3e9a02"
	var events [][]byte
	for i := range 4 {
		events = append(events, fmt.Appendf(nil, `{"id":"e%d","kind":"MessageEvent","timestamp":"2026-11-27T10:00:0%d.000000"}`, i, i))
	}
	var sessions atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /server_info", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"title":"OpenHands Agent Server","version":"1.58.2","uptime":1,"idle_time":0}`))
	})
	mux.HandleFunc("GET /api/conversations/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":%q,"execution_status":"running"}`, id)
	})
	mux.HandleFunc("GET /api/conversations/{id}/events/count", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, len(events))
	})
	mux.HandleFunc("GET /sockets/session/{id}", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		sessions.Add(1)
		ctx := r.Context()
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"sync","from_seq":-1,"through_seq":3}`))
		if r.URL.Query().Get("after_seq") == "-1" {
			for i, e := range events[:2] {
				c.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"type":"durable","seq":%d,"event":%s}`, i, e))
			}
		}
		c.Close(websocket.StatusTryAgainLater, "frame_too_large") // event 2
	})
	mux.HandleFunc("GET /sockets/events/{id}", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		if r.URL.Query().Get("resend_mode") != "since" {
			t.Errorf("the events socket was opened with %s; want a resume since a time", r.URL.RawQuery)
		}
		for _, e := range events { // from before the last event seen
			c.Write(ctx, websocket.MessageText, e)
		}
		c.Read(ctx)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	r := newRecorder()
	s := connect(t, agentserver.Options{ServerURL: srv.URL, ConversationID: id, OnEvent: r.onEvent, OnStatus: r.onStatus,
		MinBackoff: 1, MaxBackoff: 1})
	r.await(t, "the four events", func(ev []json.RawMessage, _ []agentserver.Status) bool { return len(ev) >= 4 })
	if err := s.CaughtUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ids(r.snapshot()); !slices.Equal(got, []string{"e0", "e1", "e2", "e3"}) {
		t.Errorf("delivered %q", got)
	}
	if !s.OnEventsSocket() || sessions.Load() != 1 || s.Repeats() != 2 {
		t.Errorf("on the events socket: %v, after %d session sockets, %d repeats; want true, 1 and 2 (e0 and e1 resent)", s.OnEventsSocket(), sessions.Load(), s.Repeats())
	}
}
