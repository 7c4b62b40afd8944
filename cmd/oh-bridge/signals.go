package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// shutdownSignals end every mode cleanly: an editor or agent stops the
// bridge with SIGTERM, a terminal with SIGINT, a closed terminal or ssh
// session with SIGHUP.
var shutdownSignals = []os.Signal{syscall.SIGTERM, os.Interrupt, syscall.SIGHUP}

// onSignals returns a context that ends at the first shutdown signal, so
// the mode shuts down as on its client's request: commands end, the
// terminals' process groups and sessions are killed (nohup jobs too),
// their temporary directories go. A second signal ends the process at
// once. exitCode is then 128 plus the signal's number (143 for SIGTERM,
// 130 for SIGINT, 129 for SIGHUP), as a shell reports a process a signal
// ended, or -1 while no signal came.
func onSignals() (ctx context.Context, exitCode func() int, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, shutdownSignals...)
	var code atomic.Int32
	code.Store(-1)
	go func() {
		select {
		case sig := <-ch:
			if s, ok := sig.(syscall.Signal); ok {
				code.Store(128 + int32(s))
			}
			signal.Reset(shutdownSignals...)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() int { return int(code.Load()) }, func() {
		signal.Stop(ch)
		cancel()
	}
}
