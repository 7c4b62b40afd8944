package rpctest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/testhome"
)

// NewProcessClient is a Client on a child process's stdio: it reads the
// process's stdout and writes to its stdin; Close closes stdin, which ends
// a bridge's session.
func NewProcessClient(stdout io.Reader, stdin io.WriteCloser) *Client {
	return NewClient(struct {
		io.Reader
		io.Writer
		io.Closer
	}{stdout, stdin, stdin})
}

// BuildBridge compiles the oh-bridge command package at pkg (a directory,
// e.g. "../cmd/oh-bridge") into dir and returns the binary's path.
func BuildBridge(pkg, dir string) (string, error) {
	bin := filepath.Join(dir, "oh-bridge")
	var stderr bytes.Buffer
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Stderr = &stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("cannot build oh-bridge: %v\n%s", err, stderr.String())
	}
	return bin, nil
}

// RunWithBridge is a TestMain: it builds the oh-bridge command at pkg into
// a temporary directory, sets *bin to the binary, runs the tests and
// removes the directory, all with a home directory of the test binary's
// own (testhome.Run). It returns the exit code for os.Exit.
func RunWithBridge(m *testing.M, pkg string, bin *string) int {
	return testhome.Run(func() int { return runWithBridge(m, pkg, bin) })
}

func runWithBridge(m *testing.M, pkg string, bin *string) int {
	dir, err := os.MkdirTemp("", "oh-bridge-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = BuildBridge(pkg, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
