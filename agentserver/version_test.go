package agentserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// TestServerVersions: /server_info's version decides whether the bridge
// speaks to a server. A 1.x older than the oldest it supports is refused
// in words naming both versions and how to upgrade; another major
// version as before; both with the kind unsupported_api_version.
func TestServerVersions(t *testing.T) {
	for _, c := range []struct {
		version string
		words   []string // none: accepted
	}{
		{"1.49.1", nil},
		{"1.58.2", nil},
		{"v1.50.0", nil},
		{"1.50.0rc1", nil},
		{"1.49.1.post1", nil},
		{"1.100.0", nil},
		{"1.49.0", []string{"is version 1.49.0, older than 1.49.1, the oldest the bridge supports", "uv tool upgrade openhands-agent-server", "pip install --upgrade openhands-agent-server"}},
		{"1.45.3", []string{"is version 1.45.3, older than 1.49.1"}},
		{"1.43.1", []string{"is version 1.43.1, older than 1.49.1"}},
		{"1.49", []string{"is version 1.49, older than 1.49.1"}},
		{"0.62.0", []string{"speaks API version 0.62.0", "the agent-server API of version 1 (1.x)"}},
		{"2.0.0", []string{"speaks API version 2.0.0", "update the agent-server or the bridge"}},
		{"unknown", []string{"speaks API version unknown"}},
	} {
		t.Run(c.version, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/server_info" {
					http.NotFound(w, r)
					return
				}
				fmt.Fprintf(w, `{"title":"OpenHands Agent Server","version":%q,"uptime":1,"idle_time":0}`, c.version)
			}))
			defer srv.Close()
			c2, err := agentserver.NewClient(srv.URL, "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			info, err := c2.ServerInfo(context.Background())
			if c.words == nil {
				if err != nil || info.Version != c.version {
					t.Errorf("refused: %v", err)
				}
				return
			}
			var ve *ohevents.VersionError
			if !errors.As(err, &ve) || ve.Kind() != "unsupported_api_version" {
				t.Fatalf("got %v (%T); want a VersionError", err, err)
			}
			for _, w := range append(c.words, srv.URL) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			if d := ve.Data(); d["serverVersion"] != c.version || d["oldestSupported"] != ohevents.OldestSupported {
				t.Errorf("data %v", d)
			}
		})
	}
}

// TestOldServerRefused: the stand-in told to be 1.21.0, an agent-server
// from before the session socket, is refused at Connect, in words naming
// its version, the oldest the bridge supports and how to upgrade, with
// the kind unsupported_api_version; no conversation is started on it.
func TestOldServerRefused(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.jsonl")
	old := agentservertest.Start(t, "--version", "1.21.0", "--record", record)
	_, err := agentserver.Connect(context.Background(), agentserver.Options{ServerURL: old.URL, Task: "hi",
		LLM: json.RawMessage(`{"model":"m"}`),
		MCP: func(context.Context) (agentserver.MCPServer, error) {
			return agentserver.MCPServer{URL: "http://127.0.0.1:9/mcp"}, nil
		}})
	var ve *ohevents.VersionError
	if !errors.As(err, &ve) || !ve.Old || ve.Kind() != "unsupported_api_version" {
		t.Fatalf("got %v (%T); want an old server's VersionError", err, err)
	}
	for _, w := range []string{old.URL, "is version 1.21.0, older than " + ohevents.OldestSupported, "upgrade it"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	data, _ := os.ReadFile(record)
	if strings.Contains(string(data), `"POST"`) {
		t.Errorf("the bridge sent a request to the old server:\n%s", data)
	}
}
