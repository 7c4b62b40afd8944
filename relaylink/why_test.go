package relaylink_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/relay/wire"
	"github.com/oh-bridge/oh-bridge/relaylink"
)

// firstDown starts a link to url and returns the first failure it
// reports.
func firstDown(t *testing.T, url string) error {
	t.Helper()
	states := make(chan error, 10)
	l := relaylink.Start(context.Background(), relaylink.Options{URL: url, Secret: secret, Name: "x", Host: nopHost{},
		OnState: func(up bool, err error) {
			if !up {
				states <- err
			}
		}})
	defer l.Close()
	select {
	case err := <-states:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the link reported no failure in 20 s")
		return nil
	}
}

// TestWhyTheLinkIsDown: what the person reads while the link is down
// says what happened in a few words, not the WebSocket library's layers.
func TestWhyTheLinkIsDown(t *testing.T) {
	t.Run("the network goes quiet", func(t *testing.T) {
		r := newRigBeating(t, 10*time.Second, 300*time.Millisecond)
		r.cut.dark(true)
		defer r.cut.dark(false)
		err := r.waitDown(t)
		if got, want := relaylink.Why(err), "the relay did not answer the heartbeat within 300ms"; got != want {
			t.Fatalf("the quiet network, in a few words: %q, want %q (the error: %v)", got, want, err)
		}
	})

	t.Run("the relay closes the link, saying why", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			ctx := r.Context()
			if _, _, err := conn.Read(ctx); err != nil { // the hello
				return
			}
			welcome, _ := json.Marshal(wire.Frame{T: wire.TWelcome})
			if conn.Write(ctx, websocket.MessageText, welcome) != nil {
				return
			}
			conn.Close(websocket.StatusGoingAway, "the relay is stopping for an upgrade")
		}))
		defer srv.Close()
		err := firstDown(t, srv.URL)
		if got, want := relaylink.Why(err), "the relay closed it: the relay is stopping for an upgrade"; got != want {
			t.Fatalf("a closed link, in a few words: %q, want %q (the error: %v)", got, want, err)
		}
	})

	t.Run("the address is not a relay's", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		err := firstDown(t, srv.URL+"/s/abc/relya")
		if got, want := relaylink.Why(err), "the address answered HTTP 404, not a relay's WebSocket"; got != want {
			t.Fatalf("a wrong address, in a few words: %q, want %q", got, want)
		}
		if !strings.Contains(err.Error(), srv.URL+"/s/abc/relya") || !strings.Contains(err.Error(), "check the relay's URL") {
			t.Fatalf("a wrong address: %v", err)
		}
		if k, ok := err.(interface{ Kind() string }); !ok || k.Kind() != "relay_unreachable" {
			t.Fatalf("a wrong address: the error's kind is lost: %#v", err)
		}
	})

	t.Run("nothing listens", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		down := firstDown(t, "http://"+addr)
		got := relaylink.Why(down)
		if !strings.HasPrefix(got, "cannot reach it: dial tcp "+addr) || !strings.Contains(got, "connection refused") || strings.Contains(got, "WebSocket dial") {
			t.Fatalf("nothing listening, in a few words: %q (the error: %v)", got, down)
		}
		if !strings.HasPrefix(down.Error(), "cannot reach the relay at http://"+addr+": ") {
			t.Fatalf("nothing listening: %v", down)
		}
	})
}
