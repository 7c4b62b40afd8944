//go:build linux

package netns

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func need(t *testing.T) {
	t.Helper()
	if m := Missing(); m != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the namespace tests need %s", m)
		}
		t.Skipf("needs %s", m)
	}
}

// TestPairAndRefuse: the two machines reach each other over the veth; a
// connection into the laptop is refused once it refuses inbound, while
// its own connection out still works; loopback is each machine's own.
func TestPairAndRefuse(t *testing.T) {
	need(t)
	p := NewPair(t, "cloud", "laptop")
	cloud, laptop := p.A, p.B

	// A server in the laptop, reached from the cloud.
	ln, err := laptop.Listen("tcp", laptop.Addr+":7000")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "hi\n")
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := cloud.DialContext(ctx, "tcp", laptop.Addr+":7000")
	if err != nil {
		t.Fatalf("before the rule, the cloud reaches the laptop: %v", err)
	}
	c.Close()

	// A server in the cloud, for the laptop's way out.
	cln, err := cloud.Listen("tcp", cloud.Addr+":7001")
	if err != nil {
		t.Fatal(err)
	}
	defer cln.Close()
	go func() {
		for {
			c, err := cln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "out\n")
			c.Close()
		}
	}()

	laptop.RefuseInbound(t)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if c, err := cloud.DialContext(ctx2, "tcp", laptop.Addr+":7000"); err == nil {
		c.Close()
		t.Fatal("a connection into the laptop went through after it refused inbound")
	}
	c, err = laptop.DialContext(context.Background(), "tcp", cloud.Addr+":7001")
	if err != nil {
		t.Fatalf("the laptop's own connection out: %v", err)
	}
	got, _ := io.ReadAll(c)
	c.Close()
	if strings.TrimSpace(string(got)) != "out" {
		t.Fatalf("the laptop read %q from the cloud", got)
	}

	// Loopback is the machine's own: the laptop's 7000 is not on the
	// cloud's 127.0.0.1.
	if c, err := cloud.DialContext(ctx, "tcp", "127.0.0.1:7000"); err == nil {
		c.Close()
		t.Fatal("the cloud's loopback reached the laptop's server")
	}
}
