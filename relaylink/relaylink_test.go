package relaylink_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/relay"
	"github.com/oh-bridge/oh-bridge/relaylink"
	"github.com/oh-bridge/oh-bridge/session"
)

const secret = "pairing-secret-for-tests-0123456789"

// cutter is a TCP proxy in front of the relay's editors' side that can
// cut every connection through it, and refuse new ones for a while: the
// laptop's link going down.
type cutter struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   []net.Conn
	to      string // target, changed by retarget
	refused bool
	// dropping loses what the relay sends the bridge, as a network that
	// went dark does before either end notices; dropped counts it.
	dropping bool
	dropped  int
}

func newCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, target: target, to: target}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			refused := c.refused
			c.mu.Unlock()
			if refused {
				in.Close()
				continue
			}
			c.mu.Lock()
			to := c.to
			c.mu.Unlock()
			out, err := net.Dial("tcp", to)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { c.toBridge(in, out); in.Close() }()
		}
	}()
	return c
}

// toBridge copies what the relay sends, unless the network is dark.
func (c *cutter) toBridge(in, out net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 {
			c.mu.Lock()
			dark := c.dropping
			if dark {
				c.dropped += n
			}
			c.mu.Unlock()
			if !dark {
				if _, werr := in.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// retarget sends new connections to another address: a relay that
// restarted.
func (c *cutter) retarget(to string) {
	c.mu.Lock()
	c.to = to
	c.mu.Unlock()
}

// dark starts or ends losing what the relay sends the bridge.
func (c *cutter) dark(on bool) {
	c.mu.Lock()
	c.dropping = on
	c.dropped = 0
	c.mu.Unlock()
}

func (c *cutter) lost() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func (c *cutter) refuse(on bool) {
	c.mu.Lock()
	c.refused = on
	c.mu.Unlock()
}

type rig struct {
	sess   *session.Session
	root   string
	relay  *relay.Relay
	agents *httptest.Server
	cut    *cutter
	link   *relaylink.Link
	states chan error // nil: up
}

func newRig(t *testing.T, grace time.Duration) *rig {
	t.Helper()
	return newRigBeating(t, grace, 0)
}

// newRigBeating is newRig with the bridge's heartbeat every beat (0: the
// default).
func newRigBeating(t *testing.T, grace, beat time.Duration) *rig {
	t.Helper()
	root := t.TempDir()
	sess, err := session.New(session.Options{Roots: session.Candidates("test", root), ShellMode: session.ShellNoRC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	srv := mcpserver.New(sess, mcpserver.Options{Version: "test"})

	var agentHandler http.Handler
	agents := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { agentHandler.ServeHTTP(w, r) }))
	t.Cleanup(agents.Close)
	rl, err := relay.New(relay.Options{Secrets: []string{secret}, AgentBase: agents.URL, Grace: grace, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	agentHandler = rl.AgentHandler()
	editors := httptest.NewServer(rl.EditorHandler())
	t.Cleanup(editors.Close)
	cut := newCutter(t, editors.Listener.Addr().String())

	states := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	link := relaylink.Start(ctx, relaylink.Options{
		URL: "http://" + cut.ln.Addr().String() + "/s/abc/relay", Secret: secret,
		Name: filepath.Base(root), Roots: []string{root}, Version: "test", Host: srv, Heartbeat: beat,
		OnState: func(up bool, err error) {
			if up {
				err = nil
			} else if err == nil {
				err = errors.New("down")
			}
			states <- err
		},
	})
	t.Cleanup(func() { link.Close(); cancel() })
	r := &rig{sess: sess, root: root, relay: rl, agents: agents, cut: cut, link: link, states: states}
	r.waitUp(t)
	return r
}

// waitDown waits for the link to report itself down, and returns why.
func (r *rig) waitDown(t *testing.T) error {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-r.states:
			if err != nil {
				return err
			}
		case <-deadline:
			t.Fatal("the link did not go down in 20 s")
		}
	}
}

func (r *rig) waitUp(t *testing.T) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-r.states:
			if err == nil {
				return
			}
		case <-deadline:
			t.Fatal("the link did not come up in 20 s")
		}
	}
}

// agent connects an MCP client to a bound conversation, as the
// agent-server's agent would, with the token in its headers.
func agent(t *testing.T, url, token string, progress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: ohtest.Bearer(token, nil)}
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, p *mcp.ProgressNotificationClientRequest) { progress(p.Params) }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// callAsync makes a call in the background, for at most within; its
// answer comes on the channel, a client's error as an error result
// ("client error: …").
func callAsync(cs *mcp.ClientSession, p *mcp.CallToolParams, within time.Duration) <-chan *mcp.CallToolResult {
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "client error: " + err.Error()}}}
		}
		done <- res
	}()
	return done
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestThroughTheRelay: an agent elsewhere reaches the window's tools
// through the relay: the same tool list, a command run in the window's
// shell, a file edited in its workspace.
func TestThroughTheRelay(t *testing.T) {
	r := newRig(t, 5*time.Second)
	b, err := r.link.Bind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := agent(t, b.URL, b.Token, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "file_editor,task_tracker,terminal" && got != "terminal,file_editor,task_tracker" {
		t.Fatalf("tools through the relay: %s", got)
	}
	// A numeric progress token, as the agent-server's MCP client sends.
	p := &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "echo hi-$((40+2)) && pwd"}}
	p.SetProgressToken(2)
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(res), "hi-42") || !strings.Contains(text(res), r.root) {
		t.Fatalf("terminal through the relay: %v %q", res.IsError, text(res))
	}
	file := filepath.Join(r.root, "a.txt")
	res = call(t, cs, "file_editor", map[string]any{"command": "create", "path": file, "file_text": "one\n"})
	if res.IsError {
		t.Fatalf("create: %q", text(res))
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "one\n" {
		t.Fatalf("the file in the window's workspace: %q %v", data, err)
	}
	// The window knows the agent by its own name (its terminal is named
	// after it), as when the agent reaches it directly, not by the relay's.
	var agents []string
	for _, a := range r.sess.Agents() {
		agents = append(agents, a.Name)
	}
	if len(agents) != 1 || agents[0] != "agent 1" {
		t.Errorf("the window's agents: %q", agents)
	}
}

// TestCallSurvivesACut: the laptop's link is cut while a command runs;
// the bridge dials again and the agent gets the command's result, once.
func TestCallSurvivesACut(t *testing.T) {
	r := newRig(t, 10*time.Second)
	b, err := r.link.Bind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	progressed := make(chan struct{}, 100)
	cs := agent(t, b.URL, b.Token, func(*mcp.ProgressNotificationParams) { progressed <- struct{}{} })
	marker := filepath.Join(r.root, "started")
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 2)
	go func() {
		p := &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "touch " + marker + "; while [ ! -e " + marker + ".go ]; do sleep 0.05; done; echo finished-$((6*7))"}}
		p.SetProgressToken("p1")
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(cctx, p)
		done <- answer{res, err}
	}()
	waitFile(t, marker)
	r.cut.cut()
	// The command ends while the link is down: its result waits in the
	// bridge's stream for the next link.
	if err := os.WriteFile(marker+".go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r.waitUp(t)
	a := <-done
	if a.err != nil || a.res.IsError || !strings.Contains(text(a.res), "finished-42") {
		t.Fatalf("the call across the cut: %v %+v", a.err, a.res)
	}
	// And the shell is the same one afterwards.
	res := call(t, cs, "terminal", map[string]any{"command": "echo again"})
	if !strings.Contains(text(res), "again") {
		t.Fatalf("after the cut: %q", text(res))
	}
	select {
	case a := <-done:
		t.Fatalf("a second answer: %+v", a)
	default:
	}
}

// TestOpenLostWithTheLink: the network goes dark as an agent's first
// call opens its session to the window, and the link then drops: the
// relay's open never reached the bridge. The bridge's next hello does not
// name the session, and the relay opens it again on the new link: the
// call runs, once.
func TestOpenLostWithTheLink(t *testing.T) {
	r := newRig(t, 10*time.Second)
	b, err := r.link.Bind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := agent(t, b.URL, b.Token, nil)
	r.cut.dark(true)
	marker := filepath.Join(r.root, "ran")
	done := callAsync(cs, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "echo x >> " + marker + "; echo opened-$((6*7))"}}, 30*time.Second)
	// The open and the session's first message, lost (a heartbeat's ping
	// is a few bytes).
	ohtest.WaitFor(t, "the relay to open the session into the dark", func() bool { return r.cut.lost() > 64 })
	r.cut.cut()
	r.cut.dark(false)
	res := <-done
	if res.IsError || !strings.Contains(text(res), "opened-42") {
		t.Fatalf("the call whose open was lost: %q", text(res))
	}
	if data, _ := os.ReadFile(marker); string(data) != "x\n" {
		t.Fatalf("the command ran %d times", strings.Count(string(data), "x"))
	}
	select {
	case a := <-done:
		t.Fatalf("a second answer: %q", text(a))
	default:
	}
}

// TestCallsAsTheWindowComesBack: agents' first calls arrive while the
// window is away and go as it comes back: each opens its session only
// after the bridge has the relay's welcome (an open before it would be
// taken for the welcome, and the link dropped), and each runs. Rounds
// make the race happen.
func TestCallsAsTheWindowComesBack(t *testing.T) {
	r := newRig(t, 10*time.Second)
	for round := range 8 {
		b, err := r.link.Bind(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		agents := make([]*mcp.ClientSession, 4)
		for i := range agents {
			agents[i] = agent(t, b.URL, b.Token, nil)
		}
		r.cut.refuse(true)
		r.cut.cut()
		r.waitDown(t)
		results := make([]<-chan *mcp.CallToolResult, len(agents))
		for i, cs := range agents {
			results[i] = callAsync(cs, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": fmt.Sprintf("echo back-%d-%d", round, i)}}, 30*time.Second)
		}
		r.cut.refuse(false)
		for _, answer := range results {
			res := <-answer
			if got := text(res); res.IsError || !strings.Contains(got, fmt.Sprintf("back-%d-", round)) || strings.Contains(got, "error") {
				t.Fatalf("round %d: a call as the window came back: %q", round, got)
			}
		}
	}
}

// listed is the relay's discovery list of the test secret's windows.
func listed(t *testing.T, editorsURL string) []relay.WindowInfo {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, editorsURL+"/windows", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Windows []relay.WindowInfo }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Windows
}

// TestNamesKeptAcrossARelayRestart: two windows of one workspace, told
// apart by the relay ("ws" and "ws (2)"); the relay restarts and the
// second comes back first: each keeps the name the person was told.
func TestNamesKeptAcrossARelayRestart(t *testing.T) {
	r := newRig(t, 5*time.Second)
	second := relaylink.Start(context.Background(), relaylink.Options{
		URL: "http://" + r.cut.ln.Addr().String() + "/s/abc/relay", Secret: secret,
		Name: filepath.Base(r.root), Roots: []string{r.root}, Version: "test", Host: mcpserver.New(r.sess, mcpserver.Options{Version: "test"}),
	})
	t.Cleanup(second.Close)
	ohtest.WaitFor(t, "the second window's welcome", func() bool { return second.Name() == filepath.Base(r.root)+" (2)" })
	if r.link.Name() != filepath.Base(r.root) {
		t.Fatalf("the first window: %q", r.link.Name())
	}
	// A new relay on a new address, and only the second window may reach
	// it at first.
	fresh, err := relay.New(relay.Options{Secrets: []string{secret}, AgentBase: r.agents.URL, Grace: 5 * time.Second, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	editors := httptest.NewServer(fresh.EditorHandler())
	t.Cleanup(editors.Close)
	r.cut.retarget(editors.Listener.Addr().String())
	r.link.Close()
	r.cut.cut()
	ohtest.WaitFor(t, "the second window on the new relay", func() bool { return len(listed(t, editors.URL)) == 1 })
	if got := second.Name(); got != filepath.Base(r.root)+" (2)" {
		t.Errorf("the second window, back first: %q", got)
	}
}

// TestWindowGoneMidCall: the link is cut and does not come back within
// the grace: the call ends with words saying so.
func TestWindowGoneMidCall(t *testing.T) {
	r := newRig(t, 500*time.Millisecond)
	b, err := r.link.Bind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := agent(t, b.URL, b.Token, nil)
	marker := filepath.Join(r.root, "started")
	done := callAsync(cs, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "touch " + marker + "; sleep 30"}}, time.Minute)
	waitFile(t, marker)
	r.cut.refuse(true)
	r.cut.cut()
	res := <-done
	if !res.IsError || !strings.Contains(text(res), "went away") {
		t.Fatalf("the call when the window went away: %q", text(res))
	}
	meta, _ := json.Marshal(res.Meta)
	if !strings.Contains(string(meta), relay.KindWindowGone) {
		t.Fatalf("its kind: %s", meta)
	}
}

// TestRefused: a wrong pairing secret, a wrong token, a foreign Origin.
func TestRefused(t *testing.T) {
	r := newRig(t, 5*time.Second)
	b, err := r.link.Bind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A wrong token on the agents' side.
	req, _ := http.NewRequest("POST", b.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Authorization", "Bearer "+b.Token+"x")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", resp.StatusCode)
	}
	// A wrong secret on the editors' side.
	states := make(chan error, 10)
	bad := relaylink.Start(context.Background(), relaylink.Options{URL: "http://" + r.cut.ln.Addr().String(), Secret: secret + "x", Name: "x",
		Host: nopHost{}, OnState: func(up bool, err error) { states <- err }})
	defer bad.Close()
	if err := <-states; err == nil || !strings.Contains(err.Error(), "refused the pairing secret") ||
		!strings.HasPrefix(relaylink.Why(err), "the relay refused the pairing secret: copy the secret") {
		t.Fatalf("a wrong secret: %v (in a few words: %q)", err, relaylink.Why(err))
	}
	// A browser page from elsewhere, with the right secret.
	req, _ = http.NewRequest("GET", "http://"+r.cut.ln.Addr().String()+"/link", nil)
	for k, v := range map[string]string{"Authorization": "Bearer " + secret, "Origin": "https://evil.example", "Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} {
		req.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Origin: %d", resp.StatusCode)
	}
}

type nopHost struct{}

func (nopHost) ServeConnection(context.Context, mcp.Transport) error { return nil }
func (nopHost) ToolList() ([]*mcp.Tool, string)                      { return nil, "" }

// waitFile waits for a file the command under test makes.
func waitFile(t *testing.T, path string) {
	t.Helper()
	ohtest.WaitFor(t, path+" to appear", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}
