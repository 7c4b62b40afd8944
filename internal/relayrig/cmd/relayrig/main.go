//go:build linux

// Command relayrig builds the relay's topology for a test that is not Go
// (the VS Code end-to-end run, extension/e2e): two network namespaces
// joined by a veth pair (package netns), a "cloud" with the real
// agent-server, the relay and nginx in front of both (package relayrig),
// and a "laptop" that refuses every inbound connection, which it proves
// by trying one. Once all answer it prints one line of JSON:
//
//	{"cloud": "ohb-cloud-…", "laptop": "ohb-laptop-…", "cloudAddr": "10.199.N.1", "laptopAddr": "10.199.N.2", "laptopDev": "ohb…b",
//	 "agentUrl": "http://10.199.N.1:8080/s/abc/agent", "relayUrl": "http://10.199.N.1:8080/s/abc/relay",
//	 "installedRelayUrl": "http://10.199.N.1:8080/s/abc/relay2",
//	 "key": "…", "secret": "…", "inboundRefused": true, "startupMs": N}
//
// The caller runs its programs in a machine with `ip netns exec NAME`.
// It keeps everything up until its standard input closes (the caller
// ended, however it ended) or it gets SIGTERM or SIGINT; then it stops
// what it started, removes the namespaces and exits. It needs root,
// iproute2, nftables and nginx (relayrig.Missing); without them it exits 3
// saying which.
//
// Usage: relayrig -bin oh-bridge [-lock agent-server-1.58] [-log FILE]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/internal/helperstop"
	"github.com/oh-bridge/oh-bridge/internal/netns"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/relayrig"
)

// rig stands in for a test: cleanups run last first, and Fatalf ends the
// command after them.
type rig struct {
	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func (r *rig) Helper() {}

func (r *rig) Cleanup(f func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}

func (r *rig) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "relayrig: "+format+"\n", args...)
}

func (r *rig) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *rig) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	r.Logf(format, args...)
	r.done()
	os.Exit(1)
}

func (r *rig) done() {
	r.mu.Lock()
	fs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func main() {
	bin := flag.String("bin", "", "the oh-bridge binary the relay runs as")
	lock := flag.String("lock", realserver.Latest, "the lock file of test/openhands whose environment runs the agent-server")
	logFile := flag.String("log", "", "write the agent-server's output to this file when it stops")
	flag.Parse()
	if *bin == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: relayrig -bin oh-bridge [-lock agent-server-1.58] [-log FILE]")
		os.Exit(2)
	}
	if missing := relayrig.Missing(); missing != "" {
		fmt.Fprintf(os.Stderr, "relayrig: the relay's topology needs %s\n", missing)
		os.Exit(3)
	}
	venv, err := realserver.Venv(*lock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayrig: %v\n", err)
		os.Exit(1)
	}
	r := &rig{}
	asked, release := helperstop.Asked(os.Stdin)
	defer release()

	pair := netns.NewPair(r, "cloud", "laptop")
	cloudM, laptop := pair.A, pair.B
	laptop.RefuseInbound(r)
	refused, err := laptop.Refuses(cloudM)
	if err != nil {
		r.Fatalf("%v", err)
	}

	s, err := realserver.Launch(venv, realserver.Options{Port: relayrig.AgentServerPort, Command: cloudM.Command, Dial: cloudM.DialContext})
	if err != nil {
		r.Fatalf("%v", err)
	}
	r.Cleanup(func() {
		s.Stop()
		if *logFile != "" {
			if err := os.WriteFile(*logFile, []byte(s.Log()), 0o644); err != nil {
				r.Logf("%v", err)
			}
		}
	})
	// A relay the test installs through the server's API runs on after
	// the server (setsid): it ends with the rig.
	installed := s.Home + "/.oh-bridge/bin/oh-bridge relay"
	r.Cleanup(func() { _ = cloudM.Command("pkill", "-f", installed).Run() })
	c := relayrig.Start(r, cloudM, *bin)
	secret, err := os.ReadFile(c.SecretFile)
	if err != nil {
		r.Fatalf("%v", err)
	}
	line, _ := json.Marshal(map[string]any{
		"cloud": cloudM.Name, "laptop": laptop.Name, "cloudAddr": cloudM.Addr, "laptopAddr": laptop.Addr, "laptopDev": laptop.Dev(),
		"agentUrl": c.AgentURL(), "relayUrl": c.RelayURL(), "installedRelayUrl": c.InstalledRelayURL(), "key": s.Key, "secret": strings.TrimSpace(string(secret)),
		"inboundRefused": refused, "startupMs": s.Startup.Milliseconds(),
	})
	fmt.Printf("%s\n", line)
	code := 0
	select {
	case <-asked:
	case <-s.Exited():
		r.Logf("the agent-server ended on its own; its log:\n%s", s.Log())
		code = 1
	}
	r.done()
	os.Exit(code)
}
