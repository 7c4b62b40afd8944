package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
)

// acpClient is a bare ACP client on newline-delimited JSON: it answers
// permission requests with "allow always" and counts session updates.
type acpClient struct {
	in      io.WriteCloser
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan json.RawMessage
	updates int
}

func startACP(b *testing.B, env ...string) *acpClient {
	cmd := exec.Command(bin, "acp", "--config", "", "--log-level", "error")
	cmd.Env = append(os.Environ(), env...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	c := &acpClient{in: in, waiting: map[int]chan json.RawMessage{}}
	go c.read(out)
	return c
}

func (c *acpClient) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		switch {
		case m.Method == "session/update":
			c.mu.Lock()
			c.updates++
			c.mu.Unlock()
		case m.Method == "session/request_permission":
			c.send(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "result": map[string]any{
				"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}}})
		case m.Method == "" && m.ID != nil:
			c.mu.Lock()
			ch := c.waiting[*m.ID]
			delete(c.waiting, *m.ID)
			c.mu.Unlock()
			if m.Error != nil {
				ch <- m.Error
			} else {
				ch <- m.Result
			}
		}
	}
}

func (c *acpClient) send(m any) {
	data, _ := json.Marshal(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in.Write(append(data, '\n'))
}

func (c *acpClient) call(b *testing.B, method string, params any) json.RawMessage {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan json.RawMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case res := <-ch:
		return res
	case <-time.After(60 * time.Second):
		b.Fatalf("%s: no answer in 60 s", method)
		return nil
	}
}

// BenchmarkACPTurn: one prompt turn through `oh-bridge acp` and the
// agent-server stand-in, whose scripted agent runs terminal `echo hi` and
// then answers: session/prompt to its end_turn, every update streamed on
// the way. The baseline, from the same turns: the turn as the agent-server
// times it, from the user's message event to its "finished" state event
// (the scripted agent, its MCP call to the bridge's terminal). The
// difference is what the ACP face and the dial cost.
func BenchmarkACPTurn(b *testing.B) {
	if err := agentservertest.Available(); err != nil {
		b.Skip(err)
	}
	n := max(b.N, 30)
	var script [][]map[string]any
	for range n + 3 {
		script = append(script,
			[]map[string]any{{"tool": "terminal", "arguments": map[string]any{"command": "echo hi"}}},
			[]map[string]any{{"message": "ok"}})
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "script.json")
	record := filepath.Join(dir, "record.jsonl")
	data, _ := json.Marshal(map[string]any{"turns": script})
	os.WriteFile(file, data, 0o644)
	// The stand-in: what is measured is the bridge's own cost, which a
	// model's latency would drown; its scripted agent answers at once.
	peer, err := agentservertest.Launch("--script", file, "--record", record)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(peer.Stop)

	c := startACP(b, "OH_BRIDGE_SERVER_URL="+peer.URL, "LLM_MODEL=bench/scripted")
	c.call(b, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(c.call(b, "session/new", map[string]any{"cwd": b.TempDir(), "mcpServers": []any{}}), &sess)
	if sess.SessionID == "" {
		b.Fatal("session/new gave no session id")
	}
	turn := func(i int) time.Duration {
		start := time.Now()
		var res struct {
			StopReason string `json:"stopReason"`
		}
		json.Unmarshal(c.call(b, "session/prompt", map[string]any{"sessionId": sess.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": fmt.Sprint("turn ", i)}}}), &res)
		if res.StopReason != "end_turn" {
			b.Fatalf("turn %d ended with %q", i, res.StopReason)
		}
		return time.Since(start)
	}
	const warm = 3 // the terminal starts, the permission is given
	for i := range warm {
		turn(i)
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range n {
		lat = append(lat, turn(i))
	}
	b.StopTimer()
	c.mu.Lock()
	updates := c.updates
	c.mu.Unlock()
	server := serverTurns(b, record)
	if len(server) < n+warm {
		b.Fatalf("the stand-in recorded %d turns, want %d", len(server), n+warm)
	}
	server = server[warm:]
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(lat, 0.5)), "acp-turn-p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "acp-turn-p99-ms")
	b.ReportMetric(ms(percentile(server, 0.5)), "server-turn-p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.5)-percentile(server, 0.5)), "acp-overhead-p50-ms")
	b.ReportMetric(float64(updates)/float64(n+warm), "updates/turn")
}

// serverTurns reads the stand-in's record: each turn from the user's
// message event to the "finished" state event, by their timestamps.
func serverTurns(b *testing.B, record string) []time.Duration {
	data, err := os.ReadFile(record)
	if err != nil {
		b.Fatal(err)
	}
	var out []time.Duration
	var start time.Time
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r struct {
			Type string `json:"type"`
			Body struct {
				Kind      string          `json:"kind"`
				Source    string          `json:"source"`
				Timestamp string          `json:"timestamp"`
				Value     json.RawMessage `json:"value"`
			} `json:"body"`
		}
		if json.Unmarshal(line, &r) != nil || r.Type != "event" {
			continue
		}
		t, err := time.ParseInLocation("2006-01-02T15:04:05.999999", r.Body.Timestamp, time.Local)
		if err != nil {
			continue
		}
		switch {
		case r.Body.Kind == "MessageEvent" && r.Body.Source == "user":
			start = t
		case r.Body.Kind == "ConversationStateUpdateEvent" && string(r.Body.Value) == `"finished"` && !start.IsZero():
			out = append(out, t.Sub(start))
			start = time.Time{}
		}
	}
	return out
}
