// Package soak runs the bridge under long mixed load (terminal commands,
// edits racing external writes, terminals opened and closed, `git
// checkout` watch storms) and checks that its memory, open files,
// goroutines and child processes come back to where they started: leaks
// that no single-feature test shows, because each leaks a little per call.
//
// It drives the compiled binary, whose RSS, fds, threads and children are
// read from /proc, and the same load in-process, where goleak sees every
// goroutine. `go test ./soak/` runs both at 1/50 of the counts (about 20 s)
// so the code cannot rot; `task soak` (OH_SOAK=1) runs the full ten
// minutes. Curves are written to test-output/soak/ as CSV and SVG.
package soak
