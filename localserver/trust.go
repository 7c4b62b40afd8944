package localserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

// What the bridge trusts on this machine's ports.
//
// Any user of the machine may listen on a free port of 127.0.0.1, and an
// agent-server's answer to /server_info proves nothing: another user's
// program can answer as one, and then receive what the bridge sends a
// server (the person's LLM key, a session key, the MCP endpoint's token,
// with which it runs commands as the person). So a server on a local port
// is the person's when the socket that takes the connection is owned by
// the person, or by root (who can read the person's keys anyway, and under
// whom Docker's published ports listen), or by a user the person
// confirmed for that port. The check is made on every connection, after
// it is made and before a byte is written (sockowner.CheckedDial): a
// server that goes away and leaves its port to someone else between two
// requests is refused at the next one. A server on another machine is
// one the person named; there is no owner to check, and it is theirs to
// trust.

// Trust decides whether a server on this machine's loopback is the
// person's. The zero Trust trusts the person's and root's only; a Choices
// adds the owners the person confirmed.
type Trust struct {
	// Choices keeps the owners the person confirmed for good ("" path:
	// none kept).
	Choices *Choices

	mu   sync.Mutex
	once map[int]int // port → uid confirmed for this connection only

	transportOnce sync.Once
	transport     *http.Transport
}

// person is the Trust of a nil *Trust: the person's and root's sockets.
var person = &Trust{}

// UntrustedError is a server on a local port that is not the person's:
// who holds the port, and how to trust it if the person does.
type UntrustedError struct {
	URL    string
	Port   int
	Owner  sockowner.Owner
	Source Source // where it was found ("" when it was named)
	// Unknown: the owner could not be found on this system (Owner is
	// empty), rather than found to be someone else.
	Unknown bool
	// Choices is the file where a confirmation is kept ("" when none).
	Choices string
}

func (e *UntrustedError) Error() string {
	var who string
	if e.Unknown {
		who = "and this system does not tell who runs it"
	} else {
		who = "but it is run by " + e.Owner.Describe() + ", not by you (" + personWords() + ")"
	}
	s := fmt.Sprintf("something listens on %s as an agent-server could, %s: it may be another user's program posing as one, so no key, token or command is sent to it. ", hostPort(e.URL), who)
	s += "If it is a server you trust, confirm it when the editor asks, or run `oh-bridge trust-server " + e.URL + "`"
	if e.Choices != "" {
		s += fmt.Sprintf(" (kept in %s)", e.Choices)
	}
	return s + "; otherwise stop it, or start your own agent-server on another port and set its URL"
}

// Kind is "server_not_trusted".
func (e *UntrustedError) Kind() string { return "server_not_trusted" }

// Data names the server and its owner, for a face to ask the person.
func (e *UntrustedError) Data() map[string]any {
	d := map[string]any{"serverUrl": e.URL, "port": e.Port}
	if !e.Unknown {
		d["owner"] = OwnerData(e.Owner)
	}
	return d
}

// OwnerData is an owner as the faces show it.
func OwnerData(o sockowner.Owner) map[string]any {
	o = o.Resolve()
	d := map[string]any{"uid": o.UID, "user": o.UserName(), "description": o.Describe()}
	if o.PID > 0 {
		d["pid"] = o.PID
		d["program"] = o.Program
		d["command"] = o.Command
	}
	return d
}

func personWords() string {
	o := sockowner.Owner{UID: os.Getuid()}
	if n := o.UserName(); n != "" {
		return fmt.Sprintf("user %s, uid %d", n, o.UID)
	}
	return fmt.Sprintf("uid %d", o.UID)
}

func hostPort(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// IsLocal says whether rawURL names a server on this machine's loopback.
func IsLocal(rawURL string) bool {
	_, _, ok := localPort(rawURL)
	return ok
}

// localPort is the loopback address and port a URL names, ok false for a
// URL of another machine. "localhost" is loopback.
func localPort(raw string) (netip.Addr, int, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return netip.Addr{}, 0, false
	}
	host := u.Hostname()
	addr, err := netip.ParseAddr(host)
	if strings.EqualFold(host, "localhost") {
		addr, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err != nil || !addr.Unmap().IsLoopback() {
		return netip.Addr{}, 0, false
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	return addr.Unmap(), port, true
}

// trusts says whether owner may be talked to on port.
func (t *Trust) trusts(owner sockowner.Owner, port int) bool {
	if owner.IsPersonOrRoot() {
		return true
	}
	if t == nil {
		return false
	}
	t.mu.Lock()
	uid, ok := t.once[port]
	t.mu.Unlock()
	if ok && uid == owner.UID {
		return true
	}
	return t.Choices != nil && t.Choices.TrustsServer(port, owner.UID)
}

// AllowsUID says whether a process of uid may call the bridge's own
// endpoint: the person's, root's, and those of a user whose agent-server
// the person confirmed (its agent calls the tools).
func (t *Trust) AllowsUID(uid int) bool {
	if uid == os.Getuid() || uid == 0 {
		return true
	}
	if t == nil {
		return false
	}
	t.mu.Lock()
	for _, u := range t.once {
		if u == uid {
			t.mu.Unlock()
			return true
		}
	}
	t.mu.Unlock()
	return t.Choices != nil && t.Choices.TrustsUID(uid)
}

// Check looks at who listens where rawURL points, before anything is sent
// there: nil for a server of the person's (or one on another machine),
// *UntrustedError for another user's, *NotListeningError when nothing
// listens.
func (t *Trust) Check(rawURL string) (sockowner.Owner, error) {
	addr, port, ok := localPort(rawURL)
	if !ok {
		return sockowner.Owner{}, nil
	}
	o, listening, err := sockowner.Listening(addr, port)
	switch {
	case err != nil && t.confirmedPort(port):
		return o, nil
	case err != nil:
		return o, &UntrustedError{URL: rawURL, Port: port, Unknown: true, Choices: t.choicesPath()}
	case !listening:
		return o, &NotListeningError{URL: rawURL}
	case !t.trusts(o, port):
		o = o.Resolve()
		return o, &UntrustedError{URL: rawURL, Port: port, Owner: o, Choices: t.choicesPath()}
	}
	return o, nil
}

// NotListeningError: nothing listens where a URL points.
type NotListeningError struct{ URL string }

func (e *NotListeningError) Error() string { return "nothing listens on " + hostPort(e.URL) }

// Kind is "server_unreachable".
func (e *NotListeningError) Kind() string { return "server_unreachable" }

func (t *Trust) choicesPath() string {
	if t == nil || t.Choices == nil {
		return ""
	}
	return t.Choices.Path
}

// ConfirmOnce trusts the owner of rawURL's port for as long as this Trust
// lives; Confirm keeps it in the choices file too. Both take the owner
// the person was shown: if another one holds the port now, nothing is
// confirmed.
func (t *Trust) ConfirmOnce(rawURL string, uid int) error {
	return t.confirm(rawURL, uid, false)
}

// Confirm trusts, from now on, the owner of rawURL's port (see
// ConfirmOnce).
func (t *Trust) Confirm(rawURL string, uid int) error {
	return t.confirm(rawURL, uid, true)
}

func (t *Trust) confirm(rawURL string, uid int, keep bool) error {
	addr, port, ok := localPort(rawURL)
	if !ok {
		return fmt.Errorf("%s is not a server on this machine (http://127.0.0.1:PORT): there is no owner to confirm", rawURL)
	}
	o, listening, err := sockowner.Listening(addr, port)
	if err == nil && !listening {
		return &NotListeningError{URL: rawURL}
	}
	if err != nil {
		uid = -1 // the system cannot tell: the port is confirmed
	}
	if err == nil && o.UID != uid {
		return fmt.Errorf("%s is now run by %s, not by the uid %d you were shown: nothing is confirmed; look again", hostPort(rawURL), o.Describe(), uid)
	}
	t.mu.Lock()
	if t.once == nil {
		t.once = map[int]int{}
	}
	t.once[port] = uid
	t.mu.Unlock()
	if keep && t.Choices != nil {
		return t.Choices.TrustServer(port, uid)
	}
	return nil
}

// policy is the per-connection check of CheckedDial.
func (t *Trust) policy(owner sockowner.Owner, remote netip.AddrPort) error {
	if t.trusts(owner, int(remote.Port())) {
		return nil
	}
	return &UntrustedError{URL: "http://" + remote.String(), Port: int(remote.Port()), Owner: owner.Resolve(), Choices: t.choicesPath()}
}

// unknown decides about a loopback connection whose owner cannot be
// found. Where the system cannot tell at all (ErrUnsupported: neither
// Linux nor macOS), it goes through: Find does not take a server found
// there without the person's confirmation (Check), and a server the
// person named or the bridge started is theirs. Where it can tell and
// did not find the socket, it is refused unless its port was confirmed.
func (t *Trust) unknown(remote netip.AddrPort, err error) error {
	if errors.Is(err, sockowner.ErrUnsupported) {
		return nil
	}
	if t.confirmedPort(int(remote.Port())) {
		return nil
	}
	return &UntrustedError{URL: "http://" + remote.String(), Port: int(remote.Port()), Unknown: true, Choices: t.choicesPath()}
}

// confirmedPort: the person confirmed the port itself, on a system that
// does not tell who holds it.
func (t *Trust) confirmedPort(port int) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	uid, ok := t.once[port]
	t.mu.Unlock()
	return (ok && uid == -1) || (t.Choices != nil && t.Choices.TrustsPort(port))
}

// HTTPClient is a client for agent-servers whose every connection to a
// loopback address is checked first (timeout 0: none but the request's).
func (t *Trust) HTTPClient(timeout time.Duration) *http.Client {
	if t == nil {
		t = person
	}
	t.transportOnce.Do(func() {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil // a proxy would be the peer checked, not the server
		tr.DialContext = t.DialContext()
		t.transport = tr
	})
	return &http.Client{Transport: t.transport, Timeout: timeout}
}

// DialContext is the checked dial, for a transport of the caller's.
func (t *Trust) DialContext() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return sockowner.CheckedDial(&net.Dialer{Timeout: 10 * time.Second}, t.policy, t.unknown)
}
