// Package testhome gives a test binary a home directory of its own. The
// shells that tests start would otherwise read the developer's rc files
// and, closing, append the tests' commands to their history file (bash
// writes HISTFILE on exit), and the bridge would journal temporary files
// in their cache directory.
package testhome

import (
	"fmt"
	"os"
	"path/filepath"
)

// Run points HOME at a new temporary directory (and the XDG base
// directories under it), calls run, removes the directory and returns
// run's code, for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testhome.Run(m.Run)) }
//
// Go's own caches and settings stay where they were (GOCACHE, GOPATH,
// GOMODCACHE and GOENV are pinned first), so a test that builds the bridge does not start cold.
func Run(run func() int) int {
	if err := pinGoDirs(); err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		return 1
	}
	home, err := os.MkdirTemp("", "oh-bridge-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		return 1
	}
	defer os.RemoveAll(home)
	os.Setenv("HOME", home)
	for k, sub := range map[string]string{
		"XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config",
		"XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state",
	} {
		os.Setenv(k, filepath.Join(home, sub))
	}
	return run()
}

// pinGoDirs sets the Go toolchain's directories to what they resolve to
// now, before HOME and XDG_CACHE_HOME move.
func pinGoDirs() error {
	if os.Getenv("GOCACHE") == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("cannot find Go's build cache: %w", err)
		}
		os.Setenv("GOCACHE", filepath.Join(cache, "go-build"))
	}
	if os.Getenv("GOPATH") == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("cannot find GOPATH: %w", err)
		}
		os.Setenv("GOPATH", filepath.Join(home, "go"))
	}
	if os.Getenv("GOENV") == "" {
		config, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("cannot find Go's settings file: %w", err)
		}
		os.Setenv("GOENV", filepath.Join(config, "go", "env"))
	}
	if os.Getenv("GOMODCACHE") == "" {
		os.Setenv("GOMODCACHE", filepath.Join(filepath.SplitList(os.Getenv("GOPATH"))[0], "pkg", "mod"))
	}
	return nil
}
