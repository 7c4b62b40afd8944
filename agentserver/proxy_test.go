package agentserver_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections to a server, and can cut them all, as a
// network drop would: at once, or in the middle of the next chunk a
// socket (a connection upgraded to WebSocket) gets from the server.
type proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	conns    []net.Conn
	midFrame bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go func() { p.toClient(c, s); c.Close() }()
	}
}

// toClient copies what the server sends, cutting a socket's stream in
// the middle of a chunk when asked to.
func (p *proxy) toClient(c, s net.Conn) {
	buf := make([]byte, 64<<10)
	upgraded := false
	for {
		n, err := s.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			switch {
			case !upgraded:
				upgraded = bytes.HasPrefix(chunk, []byte("HTTP/1.1 101 "))
			case n > 1 && p.takeMidFrame():
				c.Write(chunk[:n/2])
				p.cut()
				return
			}
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) takeMidFrame() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	armed := p.midFrame
	p.midFrame = false
	return armed
}

// cutMidFrame cuts every connection in the middle of the next chunk a
// socket gets from the server.
func (p *proxy) cutMidFrame() {
	p.mu.Lock()
	p.midFrame = true
	p.mu.Unlock()
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
