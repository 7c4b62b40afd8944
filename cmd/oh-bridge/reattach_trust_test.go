//go:build linux

package main_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/rogue"
	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

// Reattaching, when the conversation's endpoint may no longer be the
// person's alone.

// sendToAgent posts a message to a conversation on the stand-in directly,
// as another of the person's clients would while no bridge runs: the agent
// takes its next turn, and calls its tools at the endpoint it names.
func sendToAgent(t *testing.T, serverURL, id, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "run": true})
	resp, err := http.Post(serverURL+"/api/conversations/"+id+"/events", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestReattachSquattedPort: while no bridge serves a conversation's
// tools, another user's program takes their port, and the agent's next
// call hands it the token. A bridge that loads the conversation sees who
// holds the port, keeps in the record that the token is exposed, shows the
// history and says so, and does not serve that token again, even once the
// port is free; the next prompt goes on in a new conversation, with a new
// endpoint, that starts from the old one's history.
func TestReattachSquattedPort(t *testing.T) {
	p := reattachScript(t)
	ws := t.TempDir()
	env, _ := acpHome(t)
	id := acpConversation(t, p, ws, env)
	port := agentPort(t, p.URL, id)

	r := rogue.Start(t, port, "x")
	sendToAgent(t, p.URL, id, "Run the second command.")
	leak := r.Await(t, "the agent's tool call", func(q rogue.Request) bool { return strings.HasPrefix(q.Headers["Authorization"], "Bearer ") })
	token := strings.TrimPrefix(leak.Headers["Authorization"], "Bearer ")

	load := func() *acpProcess {
		a := startACPProcess(t, p.URL, env)
		if _, err := a.call("session/load", map[string]any{"sessionId": id, "cwd": ws, "mcpServers": []any{}}); err != nil {
			t.Fatalf("session/load: %v", err)
		}
		return a
	}
	second := load()
	if msg := second.messages(); !strings.Contains(msg, "held by user nobody (uid 65534)") || !strings.Contains(msg, "not served again") {
		t.Fatalf("the person was not told: %q", msg)
	}
	home := strings.TrimPrefix(env[1], "XDG_CACHE_HOME=")
	rec, err := os.ReadFile(filepath.Join(home, "oh-bridge", "endpoints", id+".json"))
	if err != nil || !strings.Contains(string(rec), `"exposed"`) {
		t.Fatalf("the record does not keep that the token is exposed: %s %v", rec, err)
	}
	second.kill()

	// The port is free again: still not served.
	r.Stop()
	third := load()
	if msg := third.messages(); !strings.Contains(msg, "not served again") {
		t.Fatalf("the person was not told again: %q", msg)
	}
	if _, listening, _ := sockowner.Listening(netip.MustParseAddr("127.0.0.1"), port); listening {
		t.Fatalf("port %d is served again, with a token another user's program received", port)
	}
	// The next prompt continues in a new conversation: its first command
	// runs through the bridge, at a new endpoint with a new token.
	third.prompt(id, "Go on.")
	awaitCommand(t, p, "first-2")
	conversations := listConversations(t, p.URL)
	var continued string
	for _, c := range conversations {
		if c != id {
			continued = c
		}
	}
	if continued == "" {
		t.Fatalf("no new conversation: %v", conversations)
	}
	if newPort := agentPort(t, p.URL, continued); newPort == port {
		t.Errorf("the new conversation's tools are on the exposed port %d", port)
	}
	first := firstMessage(t, p.URL, continued)
	for _, want := range []string{"<earlier-conversation>", "first-2", "Go on."} {
		if !strings.Contains(first, want) {
			t.Errorf("the new conversation's first message does not carry %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, token) {
		t.Error("the exposed token is in the new conversation's message")
	}
}

// TestReattachForeignToken: a conversation whose agent names a bridge's
// endpoint with a token this bridge never made (another user's program
// made it, by hand) is attached for its history, and nothing serves its
// port.
func TestReattachForeignToken(t *testing.T) {
	p := reattachScript(t)
	ws := t.TempDir()
	env, _ := acpHome(t)
	port := freePort(t)
	body, _ := json.Marshal(map[string]any{
		"agent": map[string]any{"kind": "Agent", "llm": map[string]any{"model": "m"}, "tools": []any{},
			"mcp_config": map[string]any{"oh-bridge": map[string]any{"url": "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp", "headers": map[string]any{"Authorization": "Bearer x"}}}},
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": ws},
	})
	resp, err := http.Post(p.URL+"/api/conversations", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var conv struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&conv)
	resp.Body.Close()
	a := startACPProcess(t, p.URL, env)
	if _, err := a.call("session/load", map[string]any{"sessionId": conv.ID, "cwd": ws, "mcpServers": []any{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if _, listening, _ := sockowner.Listening(netip.MustParseAddr("127.0.0.1"), port); listening {
		t.Fatalf("port %d is served with a token this bridge did not make", port)
	}
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func listConversations(t *testing.T, serverURL string) []string {
	t.Helper()
	resp, err := http.Get(serverURL + "/api/conversations/search?limit=100")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Items []struct{ ID string } }
	json.NewDecoder(resp.Body).Decode(&page)
	var ids []string
	for _, c := range page.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

// firstMessage is the text of a conversation's first user message.
func firstMessage(t *testing.T, serverURL, id string) string {
	t.Helper()
	resp, err := http.Get(serverURL + "/api/conversations/" + id + "/events/search?limit=100")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Items []struct {
			Kind, Source string
			LLMMessage   struct {
				Content []struct{ Text string }
			} `json:"llm_message"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&page)
	for _, e := range page.Items {
		if e.Kind == "MessageEvent" && e.Source == "user" && len(e.LLMMessage.Content) > 0 {
			return e.LLMMessage.Content[0].Text
		}
	}
	return ""
}
