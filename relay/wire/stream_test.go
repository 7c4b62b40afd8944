package wire

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// flakyLink carries frames from one stream to another and drops them,
// and whatever follows until the next reconnect, when told to.
type flakyLink struct {
	mu   sync.Mutex
	up   bool
	to   chan Frame
	gen  int
	lost int
	down chan struct{} // told when the link fails
}

func (l *flakyLink) sender() func(Frame) error {
	l.mu.Lock()
	gen := l.gen
	l.mu.Unlock()
	return func(f Frame) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.up && l.gen == gen && rand.IntN(20) == 0 {
			// The link fails under this frame.
			l.up = false
			select {
			case l.down <- struct{}{}:
			default:
			}
		}
		if !l.up || l.gen != gen {
			l.lost++
			return errLinkDown
		}
		l.to <- f
		return nil
	}
}

type linkDown struct{}

func (linkDown) Error() string { return "link down" }

var errLinkDown error = linkDown{}

// TestStreamAcrossReconnects writes 2,000 requests on one stream while the
// link under it is cut and restored at random moments; the reader must
// get each exactly once, in order, and the writer must hold nothing once
// all is acknowledged.
func TestStreamAcrossReconnects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := NewStream("s1"), NewStream("s1")
	a.window = 64 << 10 // small, so back-pressure is met too
	link := &flakyLink{up: true, to: make(chan Frame, 16), down: make(chan struct{}, 1)}
	if _, err := a.Attach(link.sender(), 0); err != nil {
		t.Fatal(err)
	}

	// The far end: deliver what arrives, acknowledge it back to a.
	go func() {
		for f := range link.to {
			ack, err := b.Deliver(ctx, f)
			if err != nil {
				t.Errorf("deliver %d: %v", f.N, err)
				return
			}
			if rand.IntN(3) == 0 { // some acknowledgements are lost too
				continue
			}
			a.Ack(ack.N)
		}
	}()

	// The cutter: down, then up with a new link, telling a what b has.
	stop := make(chan struct{})
	var cuts int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-link.down:
			}
			link.mu.Lock()
			link.gen++
			link.mu.Unlock()
			a.Detach()
			cuts++
			link.mu.Lock()
			link.up = true
			link.mu.Unlock()
			// A resend may meet the next failure; that failure's signal
			// brings the next reconnect.
			_, _ = a.Attach(link.sender(), b.Received())
		}
	}()

	const n = 2000
	go func() {
		for i := 1; i <= n; i++ {
			id, _ := jsonrpc.MakeID(float64(i))
			if err := a.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call"}); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	}()
	for i := 1; i <= n; i++ {
		m, err := b.Read(ctx)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		got := m.(*jsonrpc.Request).ID.Raw()
		if fmt.Sprint(got) != fmt.Sprint(i) {
			t.Fatalf("message %d: got id %v (lost, doubled or out of order)", i, got)
		}
	}
	close(stop)
	wg.Wait()
	// Everything read: one more attach carries b's count, and a holds
	// nothing after it.
	link.mu.Lock()
	link.up, link.gen = true, link.gen+1
	link.mu.Unlock()
	_, _ = a.Attach(func(Frame) error { return nil }, b.Received())
	if p := a.Pending(); p != 0 {
		t.Fatalf("%d messages still held after all were received", p)
	}
	if cuts < 10 || link.lost == 0 {
		t.Fatalf("the link was cut %d times and lost %d frames: the test did not test reconnects", cuts, link.lost)
	}
	t.Logf("%d cuts, %d frames lost on the link", cuts, link.lost)
}

// TestStreamWriteWaitsForRoom: with nothing acknowledged, a write past
// the window blocks until an acknowledgement makes room.
func TestStreamWriteWaitsForRoom(t *testing.T) {
	ctx := context.Background()
	a := NewStream("s")
	a.window = 250 // two of the messages below, not three
	sent := make(chan Frame, 10)
	_, _ = a.Attach(func(f Frame) error { sent <- f; return nil }, 0)
	id, _ := jsonrpc.MakeID("x")
	big := &jsonrpc.Request{ID: id, Method: "m", Params: []byte(`"0123456789012345678901234567890123456789012345678901234567890123456789"`)}
	if err := a.Write(ctx, big); err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, big); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Write(ctx, big) }()
	select {
	case err := <-done:
		t.Fatalf("the third write went through with the window full: %v", err)
	case <-time.After(100 * time.Millisecond): // proving a block: nothing to await but its absence
	}
	a.Ack(1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a.Shut(ErrStreamClosed)
	if err := a.Write(ctx, big); err != ErrStreamClosed {
		t.Fatalf("a write after close: %v", err)
	}
}
