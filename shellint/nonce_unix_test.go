//go:build unix

package shellint

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nonceModes are the ways a terminal runs commands: the integration with
// the user's rc files and without, typed mode (bash 5.1+; zsh has none)
// and the eval line, a line editor, and fallback (no nonce at all).
// An rc file that exports everything, and our variable by name.
var nonceModes = []struct {
	name      string
	opts      Options
	evalOnly  bool
	exportAll bool
}{
	{name: "integrated", opts: Options{}},
	{name: "rc exporting everything", opts: Options{}, exportAll: true},
	{name: "norc", opts: Options{Mode: ModeNoRC}},
	{name: "eval line", opts: Options{}, evalOnly: true},
	{name: "line editing", opts: Options{LineEditing: true}},
	{name: "fallback", opts: Options{Mode: ModeFallback}},
}

// forgeEnd reads the shell's nonce from its environment block, where it
// used to be, and prints the end of a command with it.
const forgeEnd = `sh -c 'N=$(tr "\0" "\n" </proc/$PPID/environ | sed -n "s/^BR_NONCE=//p"); printf "\033]633;D;0;%s;f10\007" "$N"'; sleep 2; echo LATE; (exit 9)`

// TestForgedEndIsOutput: a child process cannot learn the nonce, so the
// end it forges is plain output and the command reports its own end.
func TestForgedEndIsOutput(t *testing.T) {
	eachNonceMode(t, func(t *testing.T, s *Terminal) {
		r := run(t, s, forgeEnd, RunOptions{})
		if r.Output != "LATE\n" || exitCode(r) != "9" {
			t.Fatalf("the forging command: output %q, exit %s; want \"LATE\\n\", exit 9", r.Output, exitCode(r))
		}
		r = run(t, s, "echo NEXT", RunOptions{})
		if r.Output != "NEXT\n" || exitCode(r) != "0" {
			t.Fatalf("the next command: output %q, exit %s; want \"NEXT\\n\", exit 0", r.Output, exitCode(r))
		}
	})
}

// eachNonceMode runs fn, in parallel, on a terminal of each shell in each
// of nonceModes; without /proc there is no environment block to read.
func eachNonceMode(t *testing.T, fn func(t *testing.T, s *Terminal)) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	eachShell(t, func(t *testing.T, sh string) {
		for _, m := range nonceModes {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				fn(t, startNonceMode(t, sh, m.opts, m.evalOnly, m.exportAll))
			})
		}
	})
}

// TestNonceInNoEnvironment: while a command runs, no process's
// environment block holds the terminal's nonce (the shell's included),
// and no exported variable carries it to a child.
func TestNonceInNoEnvironment(t *testing.T) {
	eachNonceMode(t, func(t *testing.T, s *Terminal) {
		if len(s.nonce) < 16 {
			t.Fatalf("nonce %q", s.nonce)
		}
		// A child of the shell, seeing what any child sees.
		r := run(t, s, "env; echo END", RunOptions{})
		if !strings.HasSuffix(r.Output, "END\n") {
			t.Fatalf("env: %q", r.Output)
		}
		for _, kv := range strings.Split(r.Output, "\n") {
			if strings.Contains(kv, s.nonce) {
				t.Fatalf("a child's environment holds the nonce: %q", kv)
			}
		}
		r = run(t, s, "echo up; sleep 60", RunOptions{NoOutputTimeout: 200 * time.Millisecond})
		if !r.Running || r.Output != "up\n" {
			t.Fatalf("sleep: %+v", r)
		}
		t.Cleanup(func() { s.Interrupt(testCtx(t)) })
		// The session's processes: the shell (in fallback, the
		// command's bash -c) and sleep.
		pids := sessionMembers(s.PID())
		read := map[int]bool{}
		for _, pid := range pids {
			env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
			if err != nil {
				continue
			}
			read[pid] = true
			if bytes.Contains(env, []byte(s.nonce)) {
				t.Errorf("/proc/%d/environ holds the nonce", pid)
			}
		}
		if !read[s.PID()] || len(read) < 2 {
			t.Fatalf("read the environment of %v of the terminal's processes %v (shell %d)", read, pids, s.PID())
		}
		// And nowhere else either.
		all, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, f := range all {
			if env, err := os.ReadFile(f); err == nil && bytes.Contains(env, []byte(s.nonce)) {
				t.Errorf("%s holds the nonce", f)
			}
		}
	})
}

// startNonceMode starts a terminal for a row of nonceModes.
func startNonceMode(t *testing.T, sh string, o Options, evalOnly, exportAll bool) *Terminal {
	t.Helper()
	o.Shell = sh
	if exportAll {
		home := t.TempDir()
		rc := map[string][2]string{
			"bash": {".bashrc", "set -a\nexport __br_nonce\n"},
			"zsh":  {".zshrc", "setopt ALL_EXPORT\nexport __br_nonce\n"},
		}[sh]
		if err := os.WriteFile(filepath.Join(home, rc[0]), []byte(rc[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		o.Env = map[string]string{"HOME": home}
	}
	s := start(t, o)
	s.testEvalOnly = evalOnly
	if exportAll && s.Mode() != ModeIntegrated {
		t.Fatalf("mode %s: the rc file was not read", s.Mode())
	}
	return s
}
