package main

import "os"

// stdio joins stdin and stdout for the JSON-RPC faces; nothing else may
// write to stdout.
type stdio struct{ in, out *os.File }

// newStdio is the process's stdin and stdout, each made pollable where the
// platform allows it (pollable, in stdio_unix.go and stdio_notunix.go).
func newStdio() stdio {
	return stdio{in: pollable(0, os.Stdin), out: pollable(1, os.Stdout)}
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }

// Close closes both descriptors of each side, so the client sees the end
// of our output (the input side as closeInput can).
func (s stdio) Close() error {
	closeInput(s.in)
	err := s.out.Close()
	if s.out != os.Stdout {
		os.Stdout.Close()
	}
	return err
}
