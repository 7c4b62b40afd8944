//go:build unix

package shellint

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCtrlCBetweenCommandsOfALoop: a shell without a line editor
// sometimes goes on with a loop when the Ctrl-C comes as one command
// hands over to the next. The interrupt sees the next command's group
// take the terminal and sends the second Ctrl-C then, not after the
// grace period (a minute here, longer than the test may take).
func TestCtrlCBetweenCommandsOfALoop(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		ticks := make(chan struct{}, 1000)
		s := start(t, Options{Shell: sh, InterruptGrace: time.Minute, OnEvent: func(ev Event) {
			if ev.Text != nil {
				for range strings.Count(ev.Text.Text, "tick") {
					ticks <- struct{}{}
				}
			}
		}})
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		for i := range 30 {
			for len(ticks) > 0 {
				<-ticks
			}
			done := make(chan *Result, 1)
			go func() {
				r, _ := s.Run(ctx, `for i in $(seq 1 200); do echo tick; : $i; sleep 0.1; done`, RunOptions{})
				done <- r
			}()
			// Right after an echo: the shell is between two commands.
			for range 1 + i%3 {
				select {
				case <-ticks:
				case <-ctx.Done():
					t.Fatalf("trial %d: the loop never ticked", i)
				}
			}
			if _, err := s.Interrupt(ctx); err != nil {
				t.Fatalf("trial %d: the interrupt did not end the loop: %v", i, err)
			}
			if r := <-done; r == nil || r.Escalation != "ctrl_c" || r.Running {
				t.Fatalf("trial %d: %+v, want the loop ended by Ctrl-C", i, r)
			}
		}
	})
}
