package sockowner_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/rogue"
	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

var loopback = netip.MustParseAddr("127.0.0.1")

func TestListeningOwnSocket(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp"} { // tcp: a dual-stack socket on ::
		l, err := net.Listen(network, ":0")
		if network == "tcp4" {
			l.Close()
			l, err = net.Listen(network, "127.0.0.1:0")
		}
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		o, ok, err := sockowner.Listening(loopback, port)
		if err != nil || !ok {
			t.Fatalf("%s: Listening = %v, %v", network, ok, err)
		}
		o = o.Resolve()
		if o.UID != os.Getuid() || o.PID != os.Getpid() || !o.IsPersonOrRoot() {
			t.Errorf("%s: owner %+v, want uid %d pid %d", network, o, os.Getuid(), os.Getpid())
		}
		if !strings.Contains(o.Describe(), "process") {
			t.Errorf("Describe = %q", o.Describe())
		}
	}
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, ok, err := sockowner.Listening(loopback, port); ok || err != nil {
		t.Errorf("a closed port: ok %v, err %v", ok, err)
	}
}

func TestPeerBothWays(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() { c, _ := l.Accept(); accepted <- c }()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()
	for _, conn := range []net.Conn{c, s} {
		o, err := sockowner.Peer(conn.LocalAddr().(*net.TCPAddr).AddrPort(), conn.RemoteAddr().(*net.TCPAddr).AddrPort())
		if err != nil || o.UID != os.Getuid() {
			t.Errorf("Peer of %s: %+v, %v", conn.LocalAddr(), o, err)
		}
	}
}

// The server of another user is seen as theirs, and CheckedDial refuses
// it before a byte is written.
func TestAnotherUsersServer(t *testing.T) {
	r := rogue.Start(t, 0, "1.49.1")
	o, ok, err := sockowner.Listening(loopback, r.Port)
	if err != nil || !ok {
		t.Fatalf("Listening: %v %v", ok, err)
	}
	if o.UID != rogue.UID || o.IsPersonOrRoot() {
		t.Errorf("owner %+v, want uid %d", o, rogue.UID)
	}
	o = o.Resolve()
	if o.PID == 0 || !strings.Contains(o.Command, "python3") {
		t.Errorf("root sees every process: want the rogue's pid and command, got %+v", o)
	}
	refused := errors.New("refused")
	var asked sockowner.Owner
	hc := &http.Client{Transport: &http.Transport{DialContext: sockowner.CheckedDial(nil, func(p sockowner.Owner, _ netip.AddrPort) error {
		asked = p
		if p.IsPersonOrRoot() {
			return nil
		}
		return refused
	}, nil)}}
	req, _ := http.NewRequest("GET", r.URL()+"/server_info", nil)
	req.Header.Set("X-Session-API-Key", "the-secret-key")
	_, err = hc.Do(req)
	if !errors.Is(err, refused) {
		t.Fatalf("the request to another user's server: %v, want the policy's refusal", err)
	}
	if asked.UID != rogue.UID {
		t.Errorf("the policy was asked about %+v", asked)
	}
	r.CheckNothingReceived(t, "the-secret-key")

	// The same client talks to the person's own server.
	own := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	go own.Serve(l)
	defer own.Close()
	resp, err := hc.Get("http://" + l.Addr().String())
	if err != nil {
		t.Fatalf("the person's own server: %v", err)
	}
	resp.Body.Close()
}
