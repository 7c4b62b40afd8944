//go:build !unix

package main

import "os"

// pollable is f as it is: an inherited Windows pipe handle cannot be
// switched to the overlapped I/O the runtime's poller needs, so stdin and
// stdout are read and written with blocking calls.
func pollable(_ int, f *os.File) *os.File { return f }

// closeInput leaves stdin open. Closing a pipe that a goroutine is reading
// waits for that read to end; Go cancels it with CancelIoEx, which a
// synchronous pipe read need not honour (under Wine it does not, and the
// bridge hung at exit). The process exits right after Close, which ends
// the read in any case.
func closeInput(*os.File) {}
