// Package helperstop is how the repository's helper commands for tests
// that are not Go (realserver, scriptedllm, relayrig) learn that their
// caller is done with them: their standard input, a pipe from the
// caller, reaches its end (the caller ended, however it ended), or
// SIGTERM or SIGINT comes.
package helperstop

import (
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Asked returns a channel closed once in reaches its end or SIGTERM or
// SIGINT arrives, and a release that stops listening for the signals.
func Asked(in io.Reader) (asked <-chan struct{}, release func()) {
	done := make(chan struct{})
	var once sync.Once
	end := func() { once.Do(func() { close(done) }) }
	go func() {
		_, _ = io.Copy(io.Discard, in)
		end()
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			end()
		case <-quit:
		}
	}()
	var stopOnce sync.Once
	return done, func() {
		stopOnce.Do(func() {
			signal.Stop(sigs)
			close(quit)
		})
	}
}
