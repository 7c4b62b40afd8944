package relayinstall

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
)

// fakeServer answers the agent-server's bash with uname and home, and
// its upload with status; it counts what was run and uploaded.
func fakeServer(t *testing.T, uname string, uploadStatus int) (*agentserver.Client, *[]string) {
	t.Helper()
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/bash/execute_bash_command":
			var in struct{ Command string }
			_ = json.NewDecoder(r.Body).Decode(&in)
			seen = append(seen, "bash "+in.Command)
			out := ""
			if strings.HasPrefix(in.Command, "uname") {
				out = uname + "\n/home/agent\n"
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"exit_code": 0, "stdout": out, "stderr": ""})
		case "/api/file/upload":
			seen = append(seen, "upload "+r.URL.Query().Get("path"))
			w.WriteHeader(uploadStatus)
			_, _ = w.Write([]byte(`{}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := agentserver.NewClient(srv.URL, "", nil, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c, &seen
}

func here() string {
	goos := map[string]string{"linux": "Linux", "darwin": "Darwin"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	return goos + " " + arch
}

func TestPlanChangesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the relay's machine runs a unix")
	}
	c, seen := fakeServer(t, here(), http.StatusOK)
	bin := filepath.Join(t.TempDir(), "oh-bridge")
	if err := os.WriteFile(bin, make([]byte, 3<<20), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(context.Background(), c, Options{Server: "https://cloud.example/s/abc/agent", PublicURL: "https://cloud.example/s/abc/relay", Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Join(p.Words(), "\n")
	for _, want := range []string{"/home/agent/.oh-bridge/bin/oh-bridge", "(3.0 MB)", "127.0.0.1:8931", "127.0.0.1:8932", "https://cloud.example/s/abc/relay", "/home/agent/.oh-bridge/relay-secret"} {
		if !strings.Contains(words, want) {
			t.Errorf("the plan does not say %q:\n%s", want, words)
		}
	}
	if len(*seen) != 1 || !strings.HasPrefix((*seen)[0], "bash uname") {
		t.Errorf("preparing did more than ask: %q", *seen)
	}
}

func TestOtherPlatform(t *testing.T) {
	c, seen := fakeServer(t, "Linux riscv64", http.StatusOK)
	_, err := Prepare(context.Background(), c, Options{Server: "s", PublicURL: "https://cloud.example/s/abc/relay"})
	var e *Error
	if !errors.As(err, &e) || e.Kind() != KindPlatform || !strings.Contains(err.Error(), "linux/riscv64") || !strings.Contains(err.Error(), "--binary") {
		t.Fatalf("another platform: %v", err)
	}
	if strings.Contains(err.Error(), "npm package") || !strings.Contains(err.Error(), "GOOS=linux GOARCH=riscv64 go build") {
		t.Errorf("a platform no package carries: %v", err)
	}
	if len(*seen) != 1 {
		t.Errorf("a refused install did more than ask: %q", *seen)
	}
	// A platform a package of ours carries is named with it.
	other := map[string]string{"amd64": "aarch64", "arm64": "x86_64"}[runtime.GOARCH]
	want := map[string]string{"amd64": "oh-bridge-darwin-arm64", "arm64": "oh-bridge-darwin-x64"}[runtime.GOARCH]
	c, _ = fakeServer(t, "Darwin "+other, http.StatusOK)
	_, err = Prepare(context.Background(), c, Options{Server: "s", PublicURL: "https://cloud.example/s/abc/relay"})
	if !errors.As(err, &e) || e.Kind() != KindPlatform || !strings.Contains(err.Error(), "the npm package "+want+" carries it") {
		t.Fatalf("another platform with a package: %v", err)
	}
}

// TestProxyRefusesTheBinary: a proxy's body limit is named, with its fix.
func TestProxyRefusesTheBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the relay's machine runs a unix")
	}
	c, _ := fakeServer(t, here(), http.StatusRequestEntityTooLarge)
	bin := filepath.Join(t.TempDir(), "oh-bridge")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(context.Background(), c, Options{Server: "s", PublicURL: "https://cloud.example/s/abc/relay", Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.Install(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Kind() != KindFailed || !strings.Contains(err.Error(), "HTTP 413") || !strings.Contains(err.Error(), "client_max_body_size") {
		t.Fatalf("a refused upload: %v", err)
	}
}

func TestNoPublicURL(t *testing.T) {
	c, seen := fakeServer(t, here(), http.StatusOK)
	if _, err := Prepare(context.Background(), c, Options{Server: "s"}); err == nil || !strings.Contains(err.Error(), "proxy exposes") {
		t.Fatalf("no public URL: %v", err)
	}
	if len(*seen) != 0 {
		t.Errorf("asked the server without a URL for the relay: %q", *seen)
	}
}
