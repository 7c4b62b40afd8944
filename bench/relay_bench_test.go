//go:build linux

package bench

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/netns"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/relay"
	"github.com/oh-bridge/oh-bridge/relaylink"
	"github.com/oh-bridge/oh-bridge/session"
)

// The relay's benchmarks (issue 33): a "cloud" and a "laptop" network
// namespace joined by a veth pair; the relay in the cloud, the window's
// bridge (its session and MCP server, in process) dialing it from the
// laptop; an MCP client (the official Go SDK's) as the agent, in the
// cloud. The baseline is the same client calling the same session's own
// local endpoint (mcpserver's HTTP endpoint on loopback), in the same run.

const benchSecret = "bench-pairing-secret-0123456789abcdef"

type relayRig struct {
	viaRelay, local *mcp.ClientSession
	relay           *relay.Relay
	cloud, laptop   *netns.Machine
	agentsURL       string
	editorsURL      string
}

func needNetns(b *testing.B) {
	if m := netns.Missing(); m != "" {
		if os.Getenv("CI") != "" {
			b.Fatalf("the relay's benchmarks need %s", m)
		}
		b.Skipf("the relay's benchmarks need %s", m)
	}
}

// serveIn serves h on a listener made in m.
func serveIn(b *testing.B, m *netns.Machine, addr string, h http.Handler) string {
	ln, err := m.Listen("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func dialing(m *netns.Machine, rt http.RoundTripper) *http.Client {
	t := &http.Transport{DialContext: m.DialContext, MaxIdleConnsPerHost: 16}
	if rt != nil {
		return &http.Client{Transport: rt}
	}
	return &http.Client{Transport: t}
}

func newRelayRig(b *testing.B) *relayRig {
	needNetns(b)
	pair := netns.NewPair(b, "cloud", "laptop")
	rig := &relayRig{cloud: pair.A, laptop: pair.B}
	sess, err := session.New(session.Options{Roots: session.Candidates("bench", b.TempDir()), ShellMode: session.ShellNoRC})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close(context.Background()) })

	r, err := relay.New(relay.Options{Secrets: []string{benchSecret}, MaxWindows: 1000, MaxConversations: 1000})
	if err != nil {
		b.Fatal(err)
	}
	rig.relay = r
	rig.agentsURL = serveIn(b, rig.cloud, "127.0.0.1:0", r.AgentHandler())
	r.SetAgentBase(rig.agentsURL)
	rig.editorsURL = serveIn(b, rig.cloud, rig.cloud.Addr+":0", r.EditorHandler())

	link := benchWindow(b, rig.editorsURL, rig.laptop, "bench", sess)
	bound, err := link.Bind(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	rig.viaRelay = connectAgent(b, bound.URL, dialing(rig.cloud, ohtest.Bearer(bound.Token, &http.Transport{DialContext: rig.cloud.DialContext})))

	ep, err := mcpserver.New(sess, mcpserver.Options{Version: "bench"}).ListenHTTP(mcpserver.HTTPOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ep.Close(context.Background()) })
	rig.local = connectAgent(b, ep.URL, &http.Client{Transport: ohtest.Bearer(ep.Token, nil)})
	return rig
}

// benchWindow registers sess as a window with the relay at editors,
// dialing from laptop.
func benchWindow(b *testing.B, editors string, laptop *netns.Machine, name string, sess *session.Session) *relaylink.Link {
	link, err := relaylink.Dial(context.Background(), relaylink.Options{URL: editors, Secret: benchSecret, Name: name,
		Host: mcpserver.New(sess, mcpserver.Options{Version: "bench"}), HTTPClient: dialing(laptop, nil)}, 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(link.Close)
	return link
}

func connectAgent(b *testing.B, url string, hc *http.Client) *mcp.ClientSession {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func timedCall(b *testing.B, cs *mcp.ClientSession, command, want string) time.Duration {
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": command}})
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, want) {
		b.Fatalf("%s: %q", command, text)
	}
	return d
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRelayAddedTime: terminal `echo hi` through the relay over the
// veth pair, and to the same session's local endpoint, interleaved.
// Goal: the relay adds at most 1 ms at p50.
func BenchmarkRelayAddedTime(b *testing.B) {
	rig := newRelayRig(b)
	for range 20 { // warm both paths (shells, connections)
		timedCall(b, rig.viaRelay, "echo hi", "hi")
		timedCall(b, rig.local, "echo hi", "hi")
	}
	var viaRelay, local []time.Duration
	b.ResetTimer()
	for b.Loop() {
		viaRelay = append(viaRelay, timedCall(b, rig.viaRelay, "echo hi", "hi"))
		local = append(local, timedCall(b, rig.local, "echo hi", "hi"))
	}
	r, l := median(viaRelay), median(local)
	b.ReportMetric(float64(r.Microseconds()), "relay-p50-µs")
	b.ReportMetric(float64(l.Microseconds()), "local-p50-µs")
	b.ReportMetric(float64((r - l).Microseconds()), "added-p50-µs")
}

// BenchmarkRelayOutput: a command that prints 100 MB, through the relay
// and to the local endpoint. The agent reads OpenHands' truncated text;
// the output itself is the laptop's. Goal: ≥ 0.8x.
func BenchmarkRelayOutput(b *testing.B) {
	rig := newRelayRig(b)
	const cmd = "head -c 100000000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo done-100mb"
	var viaRelay, local []time.Duration
	for b.Loop() {
		viaRelay = append(viaRelay, timedCall(b, rig.viaRelay, cmd, "done-100mb"))
		local = append(local, timedCall(b, rig.local, cmd, "done-100mb"))
	}
	r, l := median(viaRelay), median(local)
	b.ReportMetric(100/r.Seconds(), "relay-MB/s")
	b.ReportMetric(100/l.Seconds(), "local-MB/s")
	b.ReportMetric(l.Seconds()/r.Seconds(), "ratio")
}
