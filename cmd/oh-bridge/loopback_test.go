//go:build unix

package main_test

import (
	"bufio"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// What a real program reached on the network: strace's log of its
// connections, and a proxy on loopback that refuses what it would fetch.

// straceConnects reads an strace log: the inet addresses connected or
// sent to, and those not on loopback, with their lines.
func straceConnects(t *testing.T, log string) (inet, outside []string) {
	f, err := os.Open(log)
	if err != nil {
		t.Fatalf("no strace log: %v", err)
	}
	defer f.Close()
	v4 := regexp.MustCompile(`sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)`)
	v6 := regexp.MustCompile(`sa_family=AF_INET6, sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"`)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := v4.FindStringSubmatch(sc.Text())
		if m == nil {
			m = v6.FindStringSubmatch(sc.Text())
		}
		if m == nil {
			continue
		}
		where := net.JoinHostPort(m[2], m[1])
		if !slices.Contains(inet, where) {
			inet = append(inet, where)
		}
		if ip := net.ParseIP(m[2]); ip == nil || !(ip.IsLoopback() || ip.IsUnspecified()) {
			outside = append(outside, sc.Text())
		}
	}
	return inet, outside
}

// proxyTrap is an HTTP proxy on loopback that refuses every request and
// keeps its first line. The CLI's update check (urllib), git and LiteLLM
// (httpx) all take their proxy from the environment, so what they would
// fetch from the Internet ends here, and the name is never even looked
// up; NO_PROXY keeps the scripted model direct.
type proxyTrap struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func startProxyTrap(t *testing.T) *proxyTrap {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxyTrap{addr: ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				p.mu.Lock()
				p.seen = append(p.seen, strings.TrimSpace(line))
				p.mu.Unlock()
				c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return p
}

func (p *proxyTrap) env() map[string]string {
	u := "http://" + p.addr
	return map[string]string{
		"HTTPS_PROXY": u, "https_proxy": u, "HTTP_PROXY": u, "http_proxy": u, "ALL_PROXY": u, "all_proxy": u,
		"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
	}
}

// check logs what was refused, and fails on anything but the known calls
// home: a new one is worth knowing.
func (p *proxyTrap) check(t *testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("the proxy refused: %q", p.seen)
	for _, s := range p.seen {
		if !slices.Contains(cliPhonesHome, s) {
			t.Errorf("the CLI tried to reach %q, which it did not before", s)
		}
	}
}
