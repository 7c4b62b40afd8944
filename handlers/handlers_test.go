package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// serve runs handlers in-process behind rpc, over a pipe, gopls style.
func serve(t *testing.T, cfg handlers.Config) (*handlers.Handlers, *rpctest.Client) {
	t.Helper()
	return serveLogged(t, cfg, nil)
}

// serveLogged is serve with the rpc layer's log going to logger.
func serveLogged(t testing.TB, cfg handlers.Config, logger *slog.Logger) (*handlers.Handlers, *rpctest.Client) {
	t.Helper()
	h := handlers.New(cfg)
	srv := rpc.NewServer(rpc.Options{Methods: h.Methods(), Shutdown: h.Shutdown, Logger: logger})
	h.Bind(srv)
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() { srv.Serve(context.Background(), rpc.NewStream(a, nil, nil)); close(done) }()
	c := rpctest.NewClient(b)
	t.Cleanup(func() { c.Close(); <-done })
	return h, c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func uri(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

func TestInitializeRootsAndCapabilities(t *testing.T) {
	flagRoot, folder, other := t.TempDir(), t.TempDir(), t.TempDir()
	cases := []struct {
		name   string
		flags  []string
		params map[string]any
		want   []string
	}{
		{"flags then folders, no duplicates", []string{flagRoot}, map[string]any{
			"workspaceFolders": []map[string]string{{"uri": uri(folder)}, {"uri": uri(flagRoot)}},
		}, []string{flagRoot, folder}},
		{"rootUri when there are no folders", nil, map[string]any{"rootUri": uri(other)}, []string{other}},
		{"rootPath as a last resort", nil, map[string]any{"rootPath": folder}, []string{folder}},
		{"folders win over rootUri", nil, map[string]any{
			"rootUri": uri(other), "workspaceFolders": []map[string]string{{"uri": uri(folder)}},
		}, []string{folder}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, client := serve(t, handlers.Config{Version: "1.2.3", Roots: c.flags})
			c.params["capabilities"] = map[string]any{
				"workspace":   map[string]any{"applyEdit": true},
				"terminal":    map[string]any{"streaming": true},
				"permissions": map[string]any{"requestPermission": true},
			}
			res, err := client.Initialize(ctxT(t), c.params)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Roots(); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("roots %v, want %v", got, c.want)
			}
			want := handlers.ClientCapabilities{ApplyEdit: true, TerminalStreaming: true, RequestPermission: true}
			if got := h.Capabilities(); got != want {
				t.Fatalf("capabilities %+v, want %+v", got, want)
			}
			var r struct {
				ServerInfo struct{ Name, Version string }
			}
			json.Unmarshal(res, &r)
			if r.ServerInfo.Name != "oh-bridge" || r.ServerInfo.Version != "1.2.3" {
				t.Fatalf("serverInfo %s", res)
			}
		})
	}
	t.Run("no roots at all means the current directory", func(t *testing.T) {
		h, client := serve(t, handlers.Config{})
		if _, err := client.Initialize(ctxT(t), nil); err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		if got := h.Roots(); len(got) != 1 || got[0] != wd {
			t.Fatalf("roots %v, want [%s]", got, wd)
		}
	})
}

func TestInitializeRefusesBadFolders(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		name     string
		params   map[string]any
		code     int64
		fragment string
	}{
		{"not a file URI", map[string]any{"workspaceFolders": []map[string]string{{"uri": "https://example.com/x"}}}, rpc.CodeInvalidParams, `"workspaceFolders[0].uri"`},
		{"remote host", map[string]any{"rootUri": "file://server/share"}, rpc.CodeInvalidParams, `host "server"`},
		{"missing folder", map[string]any{"rootUri": uri("/no/such/folder")}, 1015, "/no/such/folder (from initialize) does not exist"},
		{"a file, not a folder", map[string]any{"rootPath": file}, 1015, "is not a directory"},
		{"wrong type", map[string]any{"workspaceFolders": "here"}, rpc.CodeInvalidParams, `"workspaceFolders"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, client := serve(t, handlers.Config{})
			c.params["capabilities"] = map[string]any{}
			_, err := client.Initialize(ctxT(t), c.params)
			var e *rpc.Error
			if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(e.Message, c.fragment) {
				t.Fatalf("got %v; want code %d mentioning %q", err, c.code, c.fragment)
			}
			if e.Code == 1015 && (e.Data == nil || !strings.Contains(string(*e.Data), `"kind":"invalid_root"`)) {
				t.Fatalf("domain error without data.kind: %+v", e)
			}
			// A refused initialize leaves the session uninitialized.
			err = client.Call(ctxT(t), "bridge/info", nil, nil)
			if !errors.As(err, &e) || e.Code != rpc.CodeServerNotInitialized {
				t.Fatalf("after a failed initialize: %v", err)
			}
		})
	}
}

func TestInfoAndWait(t *testing.T) {
	root := t.TempDir()
	_, client := serve(t, handlers.Config{Version: "9.9.9", Roots: []string{root}})
	client.Initialize(ctxT(t), nil)
	var info struct {
		Version  string
		Roots    []string
		PID      int
		UptimeMs int64
		InFlight int
	}
	if err := client.Call(ctxT(t), "bridge/info", nil, &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != "9.9.9" || len(info.Roots) != 1 || info.Roots[0] != root || info.PID != os.Getpid() || info.InFlight != 1 {
		t.Fatalf("bridge/info = %+v", info)
	}
	// inFlight counts the waits still running.
	client.Start("bridge/wait", map[string]any{"ms": 5000})
	client.Start("bridge/wait", map[string]any{"ms": 5000})
	// The waits are started, not answered: bridge/info says when they run.
	ohtest.Poll(t, 5*time.Second, "inFlight to be 3 with two waits running", func() (int, bool) {
		client.Call(ctxT(t), "bridge/info", nil, &info)
		return info.InFlight, info.InFlight == 3
	})
	var w struct{ WaitedMs int64 }
	if err := client.Call(ctxT(t), "bridge/wait", map[string]any{"ms": 20}, &w); err != nil || w.WaitedMs < 20 {
		t.Fatalf("bridge/wait: %+v %v", w, err)
	}
	err := client.Call(ctxT(t), "bridge/wait", map[string]any{"ms": -1}, nil)
	var e *rpc.Error
	if !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams || !strings.Contains(e.Message, `"ms"`) {
		t.Fatalf("bad ms: %v", err)
	}
}
