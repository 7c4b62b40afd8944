package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// The real agent-server (1.58.2) is started once, by the first benchmark
// that asks, and stopped by TestMain after the last: a start costs 10 to
// 40 s. Each benchmark has conversations of its own on it.
var shared struct {
	once sync.Once
	srv  *realserver.Server
	err  error
}

// realServer is the package's agent-server. It is skipped outside CI, and
// fails in CI, when `task openhands` has not installed it.
func realServer(b *testing.B) *realserver.Server {
	b.Helper()
	venv := realserver.Need(b, realserver.Latest)
	shared.once.Do(func() {
		shared.srv, shared.err = realserver.Launch(venv, realserver.Options{})
		if shared.err == nil {
			b.Logf("%s started in %v", realserver.Latest, shared.srv.Startup.Round(time.Millisecond))
		}
	})
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("the agent-server's log:\n%s", tailOf(shared.srv.Log(), 8000))
		}
	})
	return shared.srv
}

// stopRealServer stops the shared server, if a benchmark started it.
func stopRealServer() {
	if shared.srv != nil {
		shared.srv.Stop()
	}
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// scriptedLLM is the agent's LLM spec for the scripted model: LiteLLM's
// OpenAI path to it, no retries.
func scriptedLLM(m *scriptedllm.Server) map[string]any {
	return map[string]any{"model": "openai/oh-scripted", "base_url": m.URL, "api_key": "sk-scripted",
		"num_retries": 0, "usage_id": "agent"}
}

// serverEvent is what the benchmarks read of an agent-server event.
type serverEvent struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	ActionID  string `json:"action_id"`
	ToolName  string `json:"tool_name"`
}

// stamp is the event's timestamp: the server writes its local time
// without a zone, to the microsecond.
func (e serverEvent) stamp() (time.Time, bool) {
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999", e.Timestamp, time.Local)
	return t, err == nil
}

// serverEvents reads the conversation's whole log over REST.
func serverEvents(b *testing.B, srv *realserver.Server, id string) []serverEvent {
	b.Helper()
	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var out []serverEvent
	page := ""
	for {
		p, err := c.SearchEvents(context.Background(), id, page, 100)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range p.Items {
			var e serverEvent
			json.Unmarshal(ev.Raw(), &e)
			out = append(out, e)
		}
		if p.NextPageID == nil {
			return out
		}
		page = *p.NextPageID
	}
}

// wireTimer is a reverse proxy in front of the bridge's MCP endpoint that
// times each tools/call as a client beside the bridge would: from the
// request leaving the proxy to the last byte of the bridge's answer (the
// Streamable HTTP response, whose stream ends with the call's result). It
// counts every request the agent-server's MCP client makes, by method.
type wireTimer struct {
	URL  string
	base http.RoundTripper

	mu      sync.Mutex
	calls   map[string][]time.Duration // by op (see mcpOp)
	methods map[string]int
}

type opKey struct{}

func startWireTimer(b *testing.B, target string) *wireTimer {
	u, err := url.Parse(target)
	if err != nil {
		b.Fatal(err)
	}
	w := &wireTimer{base: &http.Transport{MaxIdleConnsPerHost: 8}, calls: map[string][]time.Duration{}, methods: map[string]int{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
		},
		FlushInterval: -1, // server-sent events go through as they come
		Transport:     w,
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		method, op := r.Method, ""
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			method, op = mcpOp(body)
		}
		w.mu.Lock()
		w.methods[method]++
		w.mu.Unlock()
		proxy.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), opKey{}, op)))
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	w.URL = "http://" + ln.Addr().String() + u.Path
	return w
}

// mcpOp names a POSTed MCP message: its JSON-RPC method, and for a
// tools/call the op ("terminal", "file_editor view", …).
func mcpOp(body []byte) (method, op string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Command string `json:"command"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "(not JSON)", ""
	}
	if m.Method != "tools/call" {
		return m.Method, ""
	}
	if m.Params.Name == "file_editor" {
		return m.Method, "file_editor " + m.Params.Arguments.Command
	}
	return m.Method, m.Params.Name
}

func (w *wireTimer) RoundTrip(r *http.Request) (*http.Response, error) {
	op, _ := r.Context().Value(opKey{}).(string)
	start := time.Now()
	resp, err := w.base.RoundTrip(r)
	if err != nil || op == "" {
		return resp, err
	}
	resp.Body = &timedBody{ReadCloser: resp.Body, length: resp.ContentLength,
		stream: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		done: func() {
			d := time.Since(start)
			w.mu.Lock()
			w.calls[op] = append(w.calls[op], d)
			w.mu.Unlock()
		}}
	return resp, nil
}

// timedBody calls done once the answer is read whole: for server-sent
// events, the event that carries the JSON-RPC result (the client may
// close the stream then, before its end); otherwise the body's end.
type timedBody struct {
	io.ReadCloser
	length int64
	stream bool
	done   func()
	once   sync.Once
	seen   []byte
}

func (t *timedBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.seen = append(t.seen, p[:n]...)
	switch {
	case err == io.EOF,
		!t.stream && t.length >= 0 && int64(len(t.seen)) >= t.length,
		t.stream && bytes.HasSuffix(t.seen, []byte("\n\n")) &&
			(bytes.Contains(t.seen, []byte(`"result":`)) || bytes.Contains(t.seen, []byte(`"error":`))):
		t.once.Do(t.done)
	}
	return n, err
}

// snapshot is the calls timed and the requests counted so far.
func (w *wireTimer) snapshot() (map[string][]time.Duration, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls := map[string][]time.Duration{}
	for k, v := range w.calls {
		calls[k] = append([]time.Duration(nil), v...)
	}
	methods := map[string]int{}
	for k, v := range w.methods {
		methods[k] = v
	}
	return calls, methods
}

// describeCounts is "k1 n1, k2 n2" in key order, for a log line.
func describeCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// bareSocket follows a conversation on the server's session socket with
// nothing but a websocket reader, for the time each live event arrives
// there: the baseline of the bridge's event delivery.
type bareSocket struct {
	mu      sync.Mutex
	arrived map[string]time.Time // by event id
}

func followBare(b *testing.B, srv *realserver.Server, id string) *bareSocket {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/sockets/session/" + id + "?after_seq=-1"
	conn, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		b.Fatal(err)
	}
	conn.SetReadLimit(-1)
	auth, _ := json.Marshal(map[string]string{"type": "auth", "session_api_key": srv.Key})
	if err := conn.Write(ctx, websocket.MessageText, auth); err != nil {
		b.Fatal(err)
	}
	s := &bareSocket{arrived: map[string]time.Time{}}
	go func() {
		defer conn.CloseNow()
		through := -1 << 31 // the replay's end: later events are live
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			t := time.Now()
			var f struct {
				Type       string `json:"type"`
				Seq        int    `json:"seq"`
				ThroughSeq int    `json:"through_seq"`
				Event      struct {
					ID string `json:"id"`
				} `json:"event"`
			}
			json.Unmarshal(data, &f)
			switch {
			case f.Type == "sync":
				through = f.ThroughSeq
			case f.Type == "durable" && f.Seq > through && f.Event.ID != "":
				s.mu.Lock()
				s.arrived[f.Event.ID] = t
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// at is when the event arrived live on the bare socket.
func (s *bareSocket) at(id string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.arrived[id]
	return t, ok
}
