//go:build linux

// Package netns builds, for tests, machines of our own on one host:
// network namespaces joined by a veth pair, with addresses of our own and
// loopback-only traffic otherwise. The relay's tests put a "cloud" (the
// agent-server, the relay, nginx) and a "laptop" (the bridge, a
// workspace, no inbound connection) in two of them. It needs root and
// iproute2 (and nftables for Refuse).
package netns

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// T is what the machines need of a test: testing.TB has it, and so does
// a command that builds them for a test that is not Go (cmd/relayrig).
type T interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Machine is one network namespace.
type Machine struct {
	Name string
	// Addr is its address on the veth pair.
	Addr string
	dev  string
}

// Pair is two machines joined by a veth pair on 10.199.N.0/24.
type Pair struct {
	A, B *Machine
}

// Missing says what a test needs that this host lacks, "" when nothing.
func Missing() string {
	if os.Geteuid() != 0 {
		return "root (network namespaces)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "ip (apt-get install iproute2)"
	}
	return ""
}

// NewPair makes two namespaces named after a and b (with a random tail,
// so runs do not meet), joined by a veth pair, loopback up in each. They
// are removed when the test ends.
func NewPair(t T, a, b string) *Pair {
	t.Helper()
	tail := strings.ToLower(rand.Text()[:6])
	net3 := 1 + int(tail[0])%250
	p := &Pair{
		A: &Machine{Name: "ohb-" + a + "-" + tail, Addr: fmt.Sprintf("10.199.%d.1", net3), dev: "ohb" + tail + "a"},
		B: &Machine{Name: "ohb-" + b + "-" + tail, Addr: fmt.Sprintf("10.199.%d.2", net3), dev: "ohb" + tail + "b"},
	}
	for _, m := range []*Machine{p.A, p.B} {
		run(t, "ip", "netns", "add", m.Name)
		name := m.Name
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
		run(t, "ip", "-n", m.Name, "link", "set", "lo", "up")
	}
	run(t, "ip", "link", "add", p.A.dev, "netns", p.A.Name, "type", "veth", "peer", "name", p.B.dev, "netns", p.B.Name)
	for _, m := range []*Machine{p.A, p.B} {
		run(t, "ip", "-n", m.Name, "addr", "add", m.Addr+"/24", "dev", m.dev)
		run(t, "ip", "-n", m.Name, "link", "set", m.dev, "up")
	}
	return p
}

// Dev is the machine's end of the veth pair, for `ip -n NAME link set
// DEV down` from a test that is not Go.
func (m *Machine) Dev() string { return m.dev }

// LinkDown and LinkUp cut and restore the veth pair, as a network that
// drops: established connections see nothing until it is back.
func (m *Machine) LinkDown(t T) { run(t, "ip", "-n", m.Name, "link", "set", m.dev, "down") }
func (m *Machine) LinkUp(t T)   { run(t, "ip", "-n", m.Name, "link", "set", m.dev, "up") }

// RefuseInbound drops every connection into the machine over the veth
// pair; its own connections out, and their answers, pass.
func (m *Machine) RefuseInbound(t T) {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatalf("nft is needed to refuse inbound connections: apt-get install nftables")
	}
	rules := fmt.Sprintf(`table inet ohb {
  chain input {
    type filter hook input priority 0; policy accept;
    iifname "%s" ct state established,related accept
    iifname "%s" drop
  }
}
`, m.dev, m.dev)
	cmd := exec.Command("ip", "netns", "exec", m.Name, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft in %s: %v\n%s", m.Name, err, out)
	}
}

// Refuses says whether a connection from other into the machine fails:
// the machine listens on a port of its veth address, and other dials it
// (2 s at most), as a test proves RefuseInbound holds.
func (m *Machine) Refuses(other *Machine) (bool, error) {
	probe, err := m.Listen("tcp", m.Addr+":7000")
	if err != nil {
		return false, fmt.Errorf("listening in %s: %w", m.Name, err)
	}
	defer probe.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := other.DialContext(ctx, "tcp", m.Addr+":7000")
	if err == nil {
		conn.Close()
		return false, nil
	}
	return true, nil
}

// Command is exec.Command run inside the machine.
func (m *Machine) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", m.Name, name}, args...)...)
}

// DialContext dials from inside the machine: the socket is made in its
// namespace (a socket keeps the namespace it was made in), on a thread
// that is switched there and back. For an http.Transport.
func (m *Machine) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := m.Do(func() error {
		var err error
		conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return conn, err
}

// Listen listens inside the machine.
func (m *Machine) Listen(network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := m.Do(func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// Do runs f on a thread in the machine's namespace. f must make its
// sockets before it returns and start no goroutine that needs the
// namespace.
func (m *Machine) Do(f func() error) error {
	target, err := os.Open("/var/run/netns/" + m.Name)
	if err != nil {
		return err
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering %s: %w", m.Name, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			// The thread stays locked, and ends with this goroutine:
			// no other goroutine runs in the wrong namespace.
			errc <- fmt.Errorf("leaving %s: %w", m.Name, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func run(t T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
