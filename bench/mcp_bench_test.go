package bench

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The MCP benchmarks call the `terminal` tool with `echo hi`, through
// `oh-bridge mcp` on stdio and through the editor bridge's HTTP endpoint,
// beside terminal/run of the same command on the editor bridge in the same
// run (goal: MCP adds at most 150 µs). mcpserver's own benchmark runs the
// official Go SDK's client in process.

// mcpHTTP starts the editor bridge's MCP endpoint.
func mcpHTTP(b *testing.B, p *proc) (string, string) {
	var ep struct{ URL, Token string }
	if err := p.client.Call(context.Background(), "mcp/start", nil, &ep); err != nil {
		b.Fatal(err)
	}
	return ep.URL, ep.Token
}

func (p *proc) timedRun(b *testing.B, id string) time.Duration {
	t := time.Now()
	if r := p.run(b, id, "echo hi"); r.Output != "hi\n" {
		b.Fatalf("echo hi: %+v", r)
	}
	return time.Since(t)
}

// rawMCP speaks MCP without a client library, as rawPeer speaks JSON-RPC:
// pre-encoded requests, answers read on the calling goroutine, so the
// figures are the bridge's, not a client's.
type rawMCP struct {
	call func(b *testing.B) string // one tools/call of terminal `echo hi`; returns the answer
	ping func(b *testing.B) string // one MCP ping: the transport's own cost
}

const pingCall = `{"jsonrpc":"2.0","id":8,"method":"ping"}`

const echoCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo hi"}}}`

func rawInit(name string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
}

func rawStdio(b *testing.B, home string) rawMCP {
	cmd := exec.Command("env", "HOME="+home, bin, "mcp", "--workspace", b.TempDir(), "--log-level", "error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	r := bufio.NewReaderSize(stdout, 1<<16)
	send := func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	read := func() string {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	send(rawInit("bench-raw-stdio"))
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return rawMCP{
		call: func(b *testing.B) string { send(echoCall); return read() },
		ping: func(b *testing.B) string { send(pingCall); return read() },
	}
}

func rawHTTP(b *testing.B, url, token string) rawMCP {
	post, err := rawSession(url, token, "bench-raw-http")
	if err != nil {
		b.Fatal(err)
	}
	send := func(b *testing.B, body string) string {
		answer, err := post(body)
		if err != nil {
			b.Fatal(err)
		}
		return answer
	}
	return rawMCP{
		call: func(b *testing.B) string { return send(b, echoCall) },
		ping: func(b *testing.B) string { return send(b, pingCall) },
	}
}

// rawSession opens an MCP session on the HTTP endpoint at url with no
// client library (initialize, then notifications/initialized); post sends
// one more message in it and returns the answer's body.
func rawSession(url, token, name string) (post func(body string) (string, error), err error) {
	client := &http.Client{}
	session := ""
	post = func(body string) (string, error) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if session == "" {
			session = resp.Header.Get("Mcp-Session-Id")
		}
		data, err := io.ReadAll(resp.Body)
		return string(data), err
	}
	if _, err := post(rawInit(name)); err != nil {
		return nil, err
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return nil, err
	}
	return post, nil
}

func (m rawMCP) pingOnce(b *testing.B) time.Duration {
	t := time.Now()
	answer := m.ping(b)
	d := time.Since(t)
	if !strings.Contains(answer, `"result":{}`) {
		b.Fatalf("ping: %s", answer)
	}
	return d
}

func (m rawMCP) echo(b *testing.B) time.Duration {
	t := time.Now()
	answer := m.call(b)
	d := time.Since(t)
	if !strings.Contains(answer, `"text":"hi\n[The command completed with exit code 0.]`) || strings.Contains(answer, `"isError":true`) {
		b.Fatalf("terminal echo hi: %s", answer)
	}
	return d
}

// BenchmarkMCPTerminalEcho: the three paths interleaved, so that host load
// hits them alike; the MCP calls are made without a client library.
func BenchmarkMCPTerminalEcho(b *testing.B) {
	p, id, home := startTerminalBridge(b)
	url, token := mcpHTTP(b, p)
	overHTTP := rawHTTP(b, url, token)
	overStdio := rawStdio(b, home)
	for range 20 { // warm up: shells started, connections open
		p.timedRun(b, id)
		overHTTP.echo(b)
		overStdio.echo(b)
	}
	run := make([]time.Duration, b.N)
	viaHTTP := make([]time.Duration, b.N)
	viaStdio := make([]time.Duration, b.N)
	pingHTTP := make([]time.Duration, b.N)
	pingStdio := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		run[i] = p.timedRun(b, id)
		viaStdio[i] = overStdio.echo(b)
		viaHTTP[i] = overHTTP.echo(b)
		pingStdio[i] = overStdio.pingOnce(b)
		pingHTTP[i] = overHTTP.pingOnce(b)
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration { return percentile(d, 0.5) }
	b.ReportMetric(us(med(run)), "terminal-run-p50-µs")
	b.ReportMetric(us(percentile(run, 0.99)), "terminal-run-p99-µs")
	b.ReportMetric(us(med(viaStdio)), "mcp-stdio-p50-µs")
	b.ReportMetric(us(percentile(viaStdio, 0.99)), "mcp-stdio-p99-µs")
	b.ReportMetric(us(med(viaHTTP)), "mcp-http-p50-µs")
	b.ReportMetric(us(percentile(viaHTTP, 0.99)), "mcp-http-p99-µs")
	b.ReportMetric(us(med(viaStdio)-med(run)), "mcp-stdio-added-µs")
	b.ReportMetric(us(med(viaHTTP)-med(run)), "mcp-http-added-µs")
	// A ping is the transport alone: the Go SDK's JSON-RPC, and for HTTP
	// net/http and Streamable HTTP.
	b.ReportMetric(us(med(pingStdio)), "mcp-stdio-ping-p50-µs")
	b.ReportMetric(us(med(pingHTTP)), "mcp-http-ping-p50-µs")
}

// BenchmarkMCPTenSessions: ten MCP sessions over HTTP, each an agent with
// its own shell, calling `echo hi` at once; beside the pool's eight
// terminals (its limit) doing terminal/run at once on the same bridge.
// Reports latency and the bridge's memory (its shells not included).
func BenchmarkMCPTenSessions(b *testing.B) {
	const n, pool = 10, 8
	p, first, _ := startTerminalBridge(b)
	ids := []string{first}
	for len(ids) < pool {
		var open struct{ TerminalID string }
		if err := p.client.Call(context.Background(), "terminal/open", map[string]any{"shell": "bash"}, &open); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, open.TerminalID)
	}
	for _, id := range ids {
		p.timedRun(b, id)
	}
	idle, _ := statusMB(p.cmd.Process.Pid, "VmRSS")
	url, token := mcpHTTP(b, p)
	sessions := make([]rawMCP, n)
	for i := range sessions {
		sessions[i] = rawHTTP(b, url, token)
		sessions[i].echo(b)
	}
	var mu sync.Mutex
	var viaMCP, viaRun []time.Duration
	round := func(n int, f func(i int) time.Duration, into *[]time.Duration) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := f(i)
				mu.Lock()
				*into = append(*into, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.ResetTimer()
	for range b.N {
		round(n, func(i int) time.Duration { return sessions[i].echo(b) }, &viaMCP)
		round(pool, func(i int) time.Duration { return p.timedRun(b, ids[i]) }, &viaRun)
	}
	b.StopTimer()
	rss, _ := statusMB(p.cmd.Process.Pid, "VmRSS")
	hwm, _ := statusMB(p.cmd.Process.Pid, "VmHWM")
	b.ReportMetric(us(percentile(viaMCP, 0.5)), "mcp-p50-µs")
	b.ReportMetric(us(percentile(viaMCP, 0.99)), "mcp-p99-µs")
	b.ReportMetric(us(percentile(viaRun, 0.5)), "8-terminal-run-p50-µs")
	b.ReportMetric(us(percentile(viaRun, 0.99)), "8-terminal-run-p99-µs")
	b.ReportMetric(idle, "rss-before-MB")
	b.ReportMetric(rss, "rss-10-sessions-MB")
	b.ReportMetric(hwm, "peak-rss-MB")
	b.ReportMetric((rss-idle)/n*1024, "KB-per-session")
}
