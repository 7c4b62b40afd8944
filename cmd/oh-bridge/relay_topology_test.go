//go:build linux

package main_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/netns"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// Ports in the cloud's own namespace, where nothing else listens.
const (
	cloudAgentServer = 18431
	cloudRelayAgents = 18432
	cloudRelayEdit   = 18433
	cloudProxy       = 8080
)

// cloud is the agent-server's machine: the real agent-server, the relay
// and nginx in front of both under one session's path prefix, as a cloud
// deployment puts them.
type cloud struct {
	m          *netns.Machine
	server     *realserver.Server
	secretFile string
	prefix     string // "/s/{session}"
}

func (c *cloud) relayURL() string {
	return fmt.Sprintf("http://%s:%d%s/relay", c.m.Addr, cloudProxy, c.prefix)
}
func (c *cloud) agentURL() string {
	return fmt.Sprintf("http://%s:%d%s/agent", c.m.Addr, cloudProxy, c.prefix)
}

// needTopology skips (fails in CI) without what the machines need.
func needTopology(t *testing.T) {
	t.Helper()
	missing := netns.Missing()
	for _, tool := range []string{"nginx", "nft"} {
		if missing == "" {
			if _, err := exec.LookPath(tool); err != nil {
				missing = tool + " (apt-get install nginx-light nftables)"
			}
		}
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the relay's topology needs %s", missing)
		}
		t.Skipf("the relay's topology needs %s", missing)
	}
}

// startCloud starts the cloud's programs in m: the real agent-server,
// the relay, nginx. llm is the agent's model, served in the cloud too.
func startCloud(t *testing.T, m *netns.Machine) *cloud {
	t.Helper()
	c := &cloud{m: m, prefix: "/s/abc"}
	dir := t.TempDir()
	c.secretFile = filepath.Join(dir, "relay-secret")
	out, err := exec.Command(bin, "relay", "secret").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.secretFile, out, 0o600); err != nil {
		t.Fatal(err)
	}
	c.server = realserver.Start(t, realserver.Latest, realserver.Options{Port: cloudAgentServer, Command: m.Command, Dial: m.DialContext})

	relay := m.Command(bin, "relay", "--secret-file", c.secretFile,
		"--agents", fmt.Sprintf("127.0.0.1:%d", cloudRelayAgents), "--editors", fmt.Sprintf("127.0.0.1:%d", cloudRelayEdit))
	lines := startLogged(t, relay, "the relay")
	if l := <-lines; !strings.Contains(l, "editors' side") {
		t.Fatalf("the relay said %q", l)
	}

	conf := fmt.Sprintf(`user root;
worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 256; }
http {
  access_log %[1]s/access.log;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  server {
    listen %[2]s:%[3]d;
    location %[4]s/relay/ {
      proxy_pass http://127.0.0.1:%[5]d/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Prefix %[4]s/relay;
      proxy_set_header X-Original-URI $request_uri;
      proxy_read_timeout 1h;
    }
    location %[4]s/agent/ {
      proxy_pass http://127.0.0.1:%[6]d/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_read_timeout 1h;
    }
  }
}
`, dir, m.Addr, cloudProxy, c.prefix, cloudRelayEdit, cloudAgentServer)
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startLogged(t, m.Command("nginx", "-c", confFile, "-p", dir), "nginx")
	hc := &http.Client{Transport: &http.Transport{DialContext: m.DialContext}, Timeout: 2 * time.Second}
	ohtest.WaitFor(t, "nginx in front of the agent-server", func() bool {
		resp, err := hc.Get(c.agentURL() + "/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return c
}

// startLogged starts cmd until the test ends and returns its stdout's
// lines; its stderr is printed when the test fails.
func startLogged(t *testing.T, cmd *exec.Cmd, what string) <-chan string {
	t.Helper()
	out, _ := cmd.StdoutPipe()
	stderr := &logbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("%s:\n%s", what, stderr.String())
		}
	})
	return lines
}

// laptopACP is `oh-bridge acp` on the laptop, given the cloud's
// agent-server and relay through the proxy.
func laptopACP(t *testing.T, m *netns.Machine, c *cloud, llmURL string) *acpProcess {
	t.Helper()
	cmd := m.Command(bin, "acp", "--config", "", "--log-file", "-", "--find-server=false",
		"--server", c.agentURL(), "--relay", c.relayURL(), "--relay-secret-file", c.secretFile)
	cmd.Env = append(os.Environ(), "OH_BRIDGE_SESSION_API_KEY="+c.server.Key,
		"LLM_MODEL="+scriptedModel, "LLM_BASE_URL="+llmURL, "LLM_API_KEY=k")
	return runACPProcess(t, cmd)
}

// TestRelayTopology: a cloud (the real agent-server 1.58.2, the relay,
// nginx with a path prefix) and a laptop (the bridge, its workspace, no
// inbound connection) in network namespaces of their own. A turn of the
// cloud's agent runs its command and lands its edit in the laptop's
// workspace, through the relay the laptop dialed.
func TestRelayTopology(t *testing.T) {
	needTopology(t)
	realserver.Need(t, realserver.Latest)
	pair := netns.NewPair(t, "cloud", "laptop")
	cloudM, laptop := pair.A, pair.B
	laptop.RefuseInbound(t)

	// Nothing reaches into the laptop.
	probe, err := laptop.Listen("tcp", laptop.Addr+":7000")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if conn, err := cloudM.DialContext(ctx, "tcp", laptop.Addr+":7000"); err == nil {
		conn.Close()
		t.Fatal("the cloud connected into the laptop")
	}
	cancel()

	c := startCloud(t, cloudM)
	ws := filepath.Join(t.TempDir(), "laptop-ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	llmLn, err := cloudM.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	llm := scriptedllm.StartOn(t, llmLn,
		terminalCall("echo from-the-cloud-$((6*7)) > landed.txt && cat landed.txt"),
		call("file_editor", map[string]any{"command": "create", "path": filepath.Join(ws, "edited.txt"), "file_text": "edited through the relay\n"}),
		says("Done."))
	llm.AnswerTitles("Relay turn")

	a := laptopACP(t, laptop, c, llm.URL)
	s, err := a.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	a.prompt(s["sessionId"].(string), "Run it.")
	llm.Wait(60 * time.Second)
	if data, err := os.ReadFile(filepath.Join(ws, "landed.txt")); err != nil || strings.TrimSpace(string(data)) != "from-the-cloud-42" {
		t.Fatalf("the command's file in the laptop's workspace: %q %v", data, err)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "edited.txt")); err != nil || string(data) != "edited through the relay\n" {
		t.Fatalf("the edit in the laptop's workspace: %q %v", data, err)
	}
	// The agent read the laptop's own output, and the person was told
	// where the calls come from.
	result, ok := llm.Requests()[1].ToolResult(llm.Requests()[1].Messages[len(llm.Requests()[1].Messages)-1].ToolCallID)
	if !ok || !strings.Contains(result, "from-the-cloud-42") {
		t.Errorf("the agent's view of the command: %q", result)
	}
	if said := a.messages(); !regexp.MustCompile(`through the relay at http://` + regexp.QuoteMeta(cloudM.Addr) + `:\d+/s/abc/relay, as window "laptop-ws — ACP"`).MatchString(said) {
		t.Errorf("the person was not told where the calls come from: %q", said)
	}
}
