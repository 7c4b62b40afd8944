package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/relayrig"
)

// startProc starts the binary with args until the test ends and returns
// its stdout's lines; its stderr is printed when the test fails.
func startProc(t *testing.T, args ...string) <-chan string {
	t.Helper()
	lines, _ := relayrig.Run(t, exec.Command(bin, args...), args[0])
	return lines
}

func nextLine(t *testing.T, lines <-chan string, what string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("%s: the process ended", what)
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing in 30 s", what)
	}
	return ""
}

// TestRelayCommands: `oh-bridge relay` and `oh-bridge mcp --relay`, the
// compiled binary both times: the workspace dials out to the relay, and
// an MCP client on the relay's agents' side, given the printed
// mcp_config entry, runs a command in the workspace.
func TestRelayCommands(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	out, err := exec.Command(bin, "relay", "secret").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, out, 0o600); err != nil {
		t.Fatal(err)
	}
	relayLines := startProc(t, "relay", "--secret-file", secretFile, "--agents", "127.0.0.1:0", "--editors", "127.0.0.1:0")
	m := regexp.MustCompile(`editors' side (http://\S+)`).FindStringSubmatch(nextLine(t, relayLines, "the relay's first line"))
	if m == nil {
		t.Fatal("the relay did not say where its editors' side is")
	}
	ws := filepath.Join(dir, "ws")
	_ = os.Mkdir(ws, 0o700)
	mcpLines := startProc(t, "mcp", "--workspace", ws, "--relay", m[1], "--relay-secret-file", secretFile)
	var entry map[string]struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(nextLine(t, mcpLines, "the mcp_config entry")), &entry); err != nil {
		t.Fatal(err)
	}
	e := entry["oh-bridge"]
	hc := &http.Client{Transport: ohtest.Headers{Set: e.Headers}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: e.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": "echo via-relay-$((2*21)); pwd"}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(got, "via-relay-42") || !strings.Contains(got, ws) {
		t.Fatalf("through the relay: %q", got)
	}
}

// TestRelayRefusesARemoteAddress: the relay listens on loopback unless
// told otherwise, and says so.
func TestRelayRefusesARemoteAddress(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	_ = os.WriteFile(secretFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	out, err := exec.Command(bin, "relay", "--secret-file", secretFile, "--editors", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--allow-remote") {
		t.Fatalf("a non-loopback address: %v %s", err, out)
	}
	_ = os.Chmod(secretFile, 0o644)
	out, err = exec.Command(bin, "relay", "--secret-file", secretFile).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "secret file") {
		t.Fatalf("a secret file others read: %v %s", err, out)
	}
}
