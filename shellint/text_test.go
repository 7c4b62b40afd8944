//go:build unix

package shellint

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTextEvents: the subscribers' TextEvents of a command hold exactly
// the text its Result gives, in order, before the state event that ends
// it, in every mode; a look-alike of our end mark (without the nonce) and
// escape sequences are text or dropped as they are in the Result.
func TestTextEvents(t *testing.T) {
	t.Parallel()
	const cmd = `printf 'one\r\n\033[31mred\033[0m\n'; printf '\033]633;D;0\007\033]633;A\007after\n'; printf 'bar 1\rbar 2\n'; (exit 3)`
	eachShell(t, func(t *testing.T, sh string) {
		for _, m := range []struct {
			name string
			opts Options
		}{{"integrated", Options{}}, {"line editing", Options{LineEditing: true}}, {"fallback", Options{Mode: ModeFallback}}} {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				o := m.opts
				o.Shell = sh
				var mu sync.Mutex
				var texts []TextEvent
				ended := map[int]bool{}
				endedCh := make(chan int, 64) // the commands' ends, in order
				var outOfOrder []int
				o.OnEvent = func(ev Event) {
					mu.Lock()
					defer mu.Unlock()
					switch {
					case ev.Text != nil:
						if ended[ev.Text.Seq] {
							outOfOrder = append(outOfOrder, ev.Text.Seq)
						}
						texts = append(texts, *ev.Text)
					case ev.State != nil && ev.State.State == StateIdle && ev.State.ExitCode != nil:
						ended[ev.State.Seq] = true
						select {
						case endedCh <- ev.State.Seq:
						default: // never block the terminal's events
						}
					}
				}
				s := start(t, o)
				r := run(t, s, cmd, RunOptions{})
				if exitCode(r) != "3" {
					t.Fatalf("exit %s, want 3", exitCode(r))
				}
				for seq := 0; seq != r.Seq; {
					select {
					case seq = <-endedCh:
					case <-time.After(10 * time.Second):
						t.Fatalf("no idle state event for command %d", r.Seq)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				var b strings.Builder
				for _, e := range texts {
					if e.Seq != r.Seq {
						t.Errorf("a TextEvent of command %d, want %d: %q", e.Seq, r.Seq, e.Text)
					}
					if e.Lost != 0 {
						t.Errorf("Lost %d with a subscriber that keeps up", e.Lost)
					}
					b.WriteString(e.Text)
				}
				if b.String() != r.Output {
					t.Errorf("TextEvents say %q, the Result %q", b.String(), r.Output)
				}
				if !strings.Contains(r.Output, "after\n") || strings.Contains(r.Output, "\x1b") {
					t.Errorf("output %q: want the text after a forged end mark, and no escapes", r.Output)
				}
				if len(outOfOrder) > 0 {
					t.Errorf("text of commands %v came after their end", outOfOrder)
				}
			})
		}
	})
}
