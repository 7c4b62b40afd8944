package mcpserver_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/rogue"
	"github.com/oh-bridge/oh-bridge/mcpserver"
)

// postInit is an MCP initialize over HTTP with the token: what a client
// holding a leaked token sends.
const postInit = `
import sys, urllib.request
req = urllib.request.Request(sys.argv[1], data=b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rogue","version":"1"}}}',
    headers={"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
try:
    r = urllib.request.urlopen(req, timeout=10)
    print("STATUS", r.status)
except Exception as e:
    print("FAILED", type(e).__name__, e)
`

// TestEndpointRefusesAnotherUsersProcess: a process of another user
// holding the token is cut off before its request is read; the person's
// own client, and one of a user the person confirmed, get through.
func TestEndpointRefusesAnotherUsersProcess(t *testing.T) {
	srv, _, _ := newServer(t)
	ep, err := srv.ListenHTTP(mcpserver.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(t.Context())
	out, _ := rogue.RunPython(t, postInit, ep.URL, ep.Token)
	if !strings.Contains(out, "FAILED") || strings.Contains(out, "STATUS") {
		t.Fatalf("another user's process with the token: %s", out)
	}
	req, _ := http.NewRequest("POST", ep.URL, bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the person's own client: %v", err)
	}
	resp.Body.Close()

	srv2, _, _ := newServer(t)
	confirmed, err := srv2.ListenHTTP(mcpserver.HTTPOptions{AllowUID: func(uid int) bool { return uid == 0 || uid == rogue.UID }})
	if err != nil {
		t.Fatal(err)
	}
	defer confirmed.Close(t.Context())
	if out, _ := rogue.RunPython(t, postInit, confirmed.URL, confirmed.Token); !strings.Contains(out, "STATUS 200") {
		t.Fatalf("a confirmed user's process: %s", out)
	}
}
