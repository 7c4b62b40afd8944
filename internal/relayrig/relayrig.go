//go:build linux

// Package relayrig builds the relay's "cloud" for tests, in a machine of
// package netns beside a real agent-server that listens there: the relay,
// and nginx in front of both under one session's path prefix with the
// headers a cloud's proxy sends, as docs/relay.md's proxy configuration
// puts them. The Go topology test (cmd/oh-bridge) and the VS Code
// end-to-end run (through cmd/relayrig) build the same cloud with it.
package relayrig

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/netns"
)

// Ports in the cloud's own namespace, where nothing else listens.
const (
	AgentServerPort  = 18431
	RelayAgentsPort  = 18432
	RelayEditorsPort = 18433
	ProxyPort        = 8080
	// The relay `oh-bridge relay install` (and VS Code's "Install Relay
	// on the Server") puts there, on its default ports
	// (relayinstall.DefaultAgents, DefaultEditors), behind the proxy's
	// ".../relay2/".
	InstalledAgentsPort  = 8931
	InstalledEditorsPort = 8932
)

// Cloud is the agent-server's machine with the relay and the proxy.
type Cloud struct {
	M *netns.Machine
	// Prefix is the session's path prefix at the proxy, "/s/{session}".
	Prefix string
	// SecretFile holds the relay's pairing secret.
	SecretFile string
	// Bin is the oh-bridge binary the relay runs as.
	Bin       string
	stopRelay func()
}

// Missing says what the rig needs that this host lacks, "" when nothing.
func Missing() string {
	if m := netns.Missing(); m != "" {
		return m
	}
	for _, tool := range []string{"nginx", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " (apt-get install nginx-light nftables)"
		}
	}
	return ""
}

// Start starts the relay and nginx in m, in front of the agent-server on
// AgentServerPort there, and waits until the proxy answers for the
// server. Both stop when the test ends.
func Start(t T, m *netns.Machine, bin string) *Cloud {
	t.Helper()
	c := &Cloud{M: m, Prefix: "/s/abc", Bin: bin}
	dir, err := os.MkdirTemp("", "relayrig-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.SecretFile = filepath.Join(dir, "relay-secret")
	out, err := exec.Command(bin, "relay", "secret").Output()
	if err != nil {
		t.Fatalf("%s relay secret: %v", bin, err)
	}
	if err := os.WriteFile(c.SecretFile, out, 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	c.StartRelay(t)

	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(nginxConf(dir, m.Addr, c.Prefix)), 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	Run(t, m.Command("nginx", "-c", confFile, "-p", dir), "nginx")
	hc := &http.Client{Transport: &http.Transport{DialContext: m.DialContext}, Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := hc.Get(c.AgentURL() + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx in front of the agent-server did not answer %s/ready in 30 s (last: %v)", c.AgentURL(), err)
		}
		// Polled: nginx and the server say nothing when they are ready.
		time.Sleep(100 * time.Millisecond)
	}
}

// StartRelay starts the relay on its ports (again, after StopRelay), and
// waits for it to say it listens.
func (c *Cloud) StartRelay(t T) {
	t.Helper()
	relay := c.M.Command(c.Bin, "relay", "--secret-file", c.SecretFile,
		"--agents", fmt.Sprintf("127.0.0.1:%d", RelayAgentsPort), "--editors", fmt.Sprintf("127.0.0.1:%d", RelayEditorsPort))
	var lines <-chan string
	lines, c.stopRelay = Run(t, relay, "the relay")
	select {
	case l := <-lines:
		if !strings.Contains(l, "editors' side") {
			t.Fatalf("the relay said %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the relay did not start in 20 s")
	}
}

// StopRelay stops the relay: SIGINT, and SIGKILL after 5 s.
func (c *Cloud) StopRelay() { c.stopRelay() }

// RelayURL is the relay's editors' side, through the proxy.
func (c *Cloud) RelayURL() string {
	return fmt.Sprintf("http://%s:%d%s/relay", c.M.Addr, ProxyPort, c.Prefix)
}

// AgentURL is the agent-server, through the proxy.
func (c *Cloud) AgentURL() string {
	return fmt.Sprintf("http://%s:%d%s/agent", c.M.Addr, ProxyPort, c.Prefix)
}

// InstalledRelayURL is where the proxy sends ".../relay2/": the relay
// `oh-bridge relay install` starts on InstalledEditorsPort.
func (c *Cloud) InstalledRelayURL() string {
	return fmt.Sprintf("http://%s:%d%s/relay2", c.M.Addr, ProxyPort, c.Prefix)
}

// Dial connects from inside the cloud, for an http.Transport.
func (c *Cloud) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.M.DialContext(ctx, network, addr)
}

// nginxConf is the proxy: the relay's editors' side under
// {prefix}/relay/ with every header the relay reads, the installed
// relay's under {prefix}/relay2/ with X-Forwarded-Prefix alone, and the
// agent-server under {prefix}/agent/ (uploads up to 64 MiB: the relay's
// binary).
func nginxConf(dir, addr, prefix string) string {
	return fmt.Sprintf(`user root;
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
    location %[4]s/relay2/ {
      proxy_pass http://127.0.0.1:%[7]d/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-Prefix %[4]s/relay2;
      proxy_read_timeout 1h;
    }
    location %[4]s/agent/ {
      proxy_pass http://127.0.0.1:%[6]d/;
      client_max_body_size 64m;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_read_timeout 1h;
    }
  }
}
`, dir, addr, ProxyPort, prefix, RelayEditorsPort, AgentServerPort, InstalledEditorsPort)
}
