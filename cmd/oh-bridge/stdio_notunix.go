//go:build !unix

package main

import "os"

// pollable is f as it is: an inherited Windows pipe handle cannot be
// switched to the overlapped I/O the runtime's poller needs, so stdin and
// stdout are read and written with blocking calls.
func pollable(_ int, f *os.File) *os.File { return f }
