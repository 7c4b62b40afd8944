//go:build unix

package shellint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// shells lists the shells to test; zsh is skipped only when not installed.
func shells(t *testing.T) []string {
	out := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		out = append(out, "zsh")
	} else {
		t.Log("zsh not installed; zsh subtests skipped")
	}
	return out
}

func eachShell(t *testing.T, fn func(t *testing.T, sh string)) {
	for _, sh := range shells(t) {
		t.Run(sh, func(t *testing.T) {
			t.Parallel()
			fn(t, sh)
		})
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, o Options) *Terminal {
	t.Helper()
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 10 * time.Second
	}
	if o.InterruptGrace == 0 {
		o.InterruptGrace = 500 * time.Millisecond
	}
	if o.TermGrace == 0 {
		o.TermGrace = 500 * time.Millisecond
	}
	if o.Cwd == "" {
		o.Cwd = t.TempDir()
	}
	s, err := Start(testCtx(t), o)
	if err != nil {
		t.Fatalf("Start(%+v): %v", o, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t *testing.T, s *Terminal, cmd string, o RunOptions) *Result {
	t.Helper()
	if o == (RunOptions{}) {
		o.Timeout = 20 * time.Second
	}
	r, err := s.Run(testCtx(t), cmd, o)
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return r
}

func exitCode(r *Result) string {
	if r.ExitCode == nil {
		return "<running>"
	}
	return strconv.Itoa(*r.ExitCode)
}

func TestRunBasics(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		if s.Mode() != ModeIntegrated {
			t.Fatalf("mode = %s, want integrated", s.Mode())
		}
		for _, tc := range []struct {
			name, cmd, want string
			code            int
		}{
			{"true", "true", "", 0},
			{"false", "false", "", 1},
			{"return 3", "f() { return 3; }; f", "", 3},
			{"sigint 130", "sh -c 'kill -INT $$'", "*", 130},
			{"sigterm 143", "sh -c 'kill -TERM $$'", "*", 143},
			{"echo", "echo hi", "hi\n", 0},
			{"stderr", "echo err >&2", "err\n", 0},
			{"no trailing newline", "printf 'no newline'", "no newline", 0},
			{"unicode", `printf 'héllo 世界 🙂\n'`, "héllo 世界 🙂\n", 0},
			{"quotes", `echo "it's" 'a "test"' \$HOME`, "it's a \"test\" $HOME\n", 0},
			{"multi-line", "echo a\necho b\n\necho c", "a\nb\nc\n", 0},
			{"heredoc", "cat <<'EOF'\nline one\n  $NOT_EXPANDED\nEOF\necho after", "line one\n  $NOT_EXPANDED\nafter\n", 0},
			{"if block", "if true; then\n  echo yes\nelse\n  echo no\nfi", "yes\n", 0},
			{"colors stripped", `printf '\e[1;31mred\e[0m\n'`, "red\n", 0},
			{"agent env", `echo $PAGER $GIT_PAGER $TERM $GIT_TERMINAL_PROMPT $DEBIAN_FRONTEND $PYTHONUNBUFFERED $MANPAGER $LESS`,
				"cat cat xterm-256color 0 noninteractive 1 cat -FRX\n", 0},
			{"window width", "tput cols", "250\n", 0},
			{"nonce hidden from children", `env | grep -c BR_NONCE`, "0\n", 1},
		} {
			r := run(t, s, tc.cmd, RunOptions{})
			if (tc.want != "*" && r.Output != tc.want) || exitCode(r) != strconv.Itoa(tc.code) || r.Running {
				t.Errorf("%s: Run(%q) = %q exit %s, want %q exit %d", tc.name, tc.cmd, r.Output, exitCode(r), tc.want, tc.code)
			}
		}
	})
}

func TestStatePersists(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		dir := t.TempDir()
		odd := filepath.Join(dir, `we;ird\dir`)
		if err := os.Mkdir(odd, 0o755); err != nil {
			t.Fatal(err)
		}
		r := run(t, s, "cd "+shellQuote(odd)+" && export FOO=bar && BAZ=local", RunOptions{})
		if exitCode(r) != "0" || r.Cwd != odd {
			t.Fatalf("cd: exit %s cwd %q, want %q", exitCode(r), r.Cwd, odd)
		}
		r = run(t, s, `pwd; echo "$FOO $BAZ"; sh -c 'echo child:$FOO'`, RunOptions{})
		if want := odd + "\nbar local\nchild:bar\n"; r.Output != want {
			t.Fatalf("got %q, want %q", r.Output, want)
		}
		if s.Cwd() != odd {
			t.Fatalf("Cwd() = %q", s.Cwd())
		}
		r = run(t, s, "true", RunOptions{Cwd: dir})
		if r.Cwd != dir {
			t.Fatalf("RunOptions.Cwd: cwd %q, want %q", r.Cwd, dir)
		}
	})
}

func TestSyntaxErrorRecovers(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		r := run(t, s, "echo 'unterminated", RunOptions{Timeout: 10 * time.Second})
		if r.Reason != "exited" || exitCode(r) == "0" || !strings.Contains(r.Output, "unmatched") && !strings.Contains(r.Output, "unexpected EOF") {
			t.Fatalf("syntax error: %+v", r)
		}
		r = run(t, s, "echo works", RunOptions{})
		if r.Output != "works\n" || exitCode(r) != "0" {
			t.Fatalf("after syntax error: %q exit %s", r.Output, exitCode(r))
		}
	})
}

func TestSpoofedMarkersAreText(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		// The next seq is 1: guess it, with and without a nonce, and fake
		// the prompt marker too.
		cmd := `printf '\e]633;D;0;fake\a'; printf '\e]633;D;7;0123456789abcdef;1\a'; printf '\e]633;A;x\a'; echo after; sleep 0.3; echo end; false`
		r := run(t, s, cmd, RunOptions{})
		if r.Output != "after\nend\n" || exitCode(r) != "1" {
			t.Fatalf("spoof ended the command early or leaked: %q exit %s", r.Output, exitCode(r))
		}
	})
}

func TestLargeOutput(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh, HeadBytes: 2 << 20, TailBytes: 2 << 20})
		// 1 MiB exactly (16 bytes per line).
		r := run(t, s, `yes 0123456789abcde | head -c 1048576`, RunOptions{})
		if len(r.Output) != 1<<20 || r.TruncatedBytes != 0 || exitCode(r) != "0" {
			t.Fatalf("1 MiB: got %d bytes, truncated %d, exit %s", len(r.Output), r.TruncatedBytes, exitCode(r))
		}
		if strings.Count(r.Output, "0123456789abcde\n") != 1<<16 {
			t.Fatal("1 MiB output corrupted")
		}
		s2 := start(t, Options{Shell: sh, HeadBytes: 64 << 10, TailBytes: 256 << 10})
		r = run(t, s2, `seq 1 200000`, RunOptions{})
		if r.TruncatedBytes == 0 || !strings.Contains(r.Output, "bytes truncated ...]") ||
			!strings.HasPrefix(r.Output, "1\n2\n3\n") || !strings.HasSuffix(r.Output, "199999\n200000\n") {
			t.Fatalf("capped output: truncated %d, head %q tail %q", r.TruncatedBytes, r.Output[:20], r.Output[len(r.Output)-20:])
		}
		if int64(len(r.Output)) > 64<<10+256<<10+100 || r.TotalBytes != int64(len(r.Output))-int64(len(truncationNotice(r.TruncatedBytes)))+r.TruncatedBytes {
			t.Fatalf("capped output size %d, total %d, truncated %d", len(r.Output), r.TotalBytes, r.TruncatedBytes)
		}
	})
}

func TestHugeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB through a PTY")
	}
	s := start(t, Options{Shell: "bash"})
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	t0 := time.Now()
	r := run(t, s, `yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -c 100000000`, RunOptions{Timeout: 60 * time.Second})
	el := time.Since(t0)
	close(stop)
	wg.Wait()
	if exitCode(r) != "0" || r.TotalBytes != 100000000 {
		t.Fatalf("exit %s total %d", exitCode(r), r.TotalBytes)
	}
	t.Logf("100 MB in %v (%.0f MB/s), peak heap in use %.1f MiB (base %.1f MiB), returned %d bytes",
		el, 100/el.Seconds(), float64(peak)/(1<<20), float64(base.HeapInuse)/(1<<20), len(r.Output))
	if peak > base.HeapInuse+48<<20 {
		t.Fatalf("peak heap %d MiB: output is not bounded", peak>>20)
	}
}

func TestReadAndSendInput(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		r := run(t, s, `printf 'name? '; read x; echo "got:$x"`, RunOptions{NoOutputTimeout: 300 * time.Millisecond})
		if !r.Running || r.Output != "name? " || r.Reason != "no_output_timeout" {
			t.Fatalf("before input: %+v", r)
		}
		if s.State() != StateRunning || s.Info().Command == "" {
			t.Fatalf("state %s info %+v", s.State(), s.Info())
		}
		if _, err := s.Run(testCtx(t), "echo no", RunOptions{}); !isKind(err, "terminal_busy") {
			t.Fatalf("Run while busy: %v", err)
		}
		if err := s.SendInput(testCtx(t), []byte("hello\r")); err != nil {
			t.Fatal(err)
		}
		r, err := s.Output(testCtx(t), r.Seq, RunOptions{Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// The terminal echoes typed input, as a human would see it.
		if r.Running || exitCode(r) != "0" || r.Output != "hello\ngot:hello\n" {
			t.Fatalf("after input: %q exit %s", r.Output, exitCode(r))
		}
	})
}

func isKind(err error, kind string) bool {
	var k interface{ Kind() string }
	return errors.As(err, &k) && k.Kind() == kind
}

func TestInterruptAndKill(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		if _, err := s.Interrupt(testCtx(t)); !isKind(err, "no_running_command") {
			t.Fatalf("Interrupt when idle: %v", err)
		}
		r := run(t, s, "echo started; sleep 100", RunOptions{Yield: 200 * time.Millisecond})
		if !r.Running || r.Reason != "yield" {
			t.Fatalf("yield: %+v", r)
		}
		r, err := s.Interrupt(testCtx(t))
		if err != nil || exitCode(r) != "130" || r.Escalation != "ctrl_c" || r.Reason != "interrupted" {
			t.Fatalf("Interrupt: %+v %v", r, err)
		}
		// Ctrl-C ignored: SIGTERM must finish it.
		if r := run(t, s, `sh -c 'trap "" INT; echo ready; sleep 100'`, RunOptions{NoOutputTimeout: 200 * time.Millisecond}); !r.Running {
			t.Fatalf("trap INT: %+v", r)
		}
		r, err = s.Interrupt(testCtx(t))
		if err != nil || exitCode(r) != "143" || r.Escalation != "sigterm" {
			t.Fatalf("Interrupt escalation: %+v %v", r, err)
		}
		// A pipeline is one process group; Kill takes it down at once.
		if r := run(t, s, "sleep 100 | cat", RunOptions{Yield: 200 * time.Millisecond}); !r.Running {
			t.Fatalf("pipeline: %+v", r)
		}
		t0 := time.Now()
		r, err = s.Kill(testCtx(t))
		if err != nil || exitCode(r) != "137" || r.Escalation != "sigkill" || time.Since(t0) > 3*time.Second {
			t.Fatalf("Kill pipeline: %+v %v", r, err)
		}
		r = run(t, s, "echo alive", RunOptions{})
		if r.Output != "alive\n" {
			t.Fatalf("after kill: %q", r.Output)
		}
	})
}

func TestHardTimeout(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		t0 := time.Now()
		r := run(t, s, "echo start; sleep 100", RunOptions{Timeout: 500 * time.Millisecond})
		if r.Running || r.Reason != "timeout" || exitCode(r) != "130" || !strings.HasPrefix(r.Output, "start\n") || time.Since(t0) > 5*time.Second {
			t.Fatalf("hard timeout: %+v", r)
		}
		if r := run(t, s, "echo next", RunOptions{}); r.Output != "next\n" {
			t.Fatalf("after timeout: %q", r.Output)
		}
	})
}

func TestSoftTimeoutThenPoll(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		r := run(t, s, "echo a; sleep 0.8; echo b; sleep 0.8; echo c", RunOptions{NoOutputTimeout: 300 * time.Millisecond})
		if !r.Running || r.Output != "a\n" || r.ExitCode != nil {
			t.Fatalf("first: %+v", r)
		}
		all := r.Output
		for i := 0; r.Running; i++ {
			if i > 20 {
				t.Fatal("never finished")
			}
			var err error
			r, err = s.Output(testCtx(t), r.Seq, RunOptions{NoOutputTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			all += r.Output
		}
		if all != "a\nb\nc\n" || exitCode(r) != "0" {
			t.Fatalf("polled %q exit %s", all, exitCode(r))
		}
		// A finished command polls as finished with nothing new.
		r, err := s.Output(testCtx(t), r.Seq, RunOptions{})
		if err != nil || r.Output != "" || exitCode(r) != "0" {
			t.Fatalf("re-poll: %+v %v", r, err)
		}
		if _, err := s.Output(testCtx(t), 99, RunOptions{}); !isKind(err, "unknown_command") {
			t.Fatalf("unknown seq: %v", err)
		}
	})
}

func TestNestedShellAndExit(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		r := run(t, s, "bash --norc --noprofile", RunOptions{NoOutputTimeout: 300 * time.Millisecond})
		if !r.Running {
			t.Fatalf("nested shell finished early: %+v", r)
		}
		if err := s.SendInput(testCtx(t), []byte("echo inner; exit 4\r")); err != nil {
			t.Fatal(err)
		}
		r, err := s.Output(testCtx(t), r.Seq, RunOptions{Timeout: 10 * time.Second})
		if err != nil || exitCode(r) != "4" || !strings.Contains(r.Output, "inner") {
			t.Fatalf("nested exit: %+v %v", r, err)
		}
		if r := run(t, s, "echo outer", RunOptions{}); r.Output != "outer\n" {
			t.Fatalf("outer shell after nested: %q", r.Output)
		}
	})
}

func TestShellExitMarksDead(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		r := run(t, s, "echo bye; exit 9", RunOptions{})
		// An interactive bash says "exit" as it leaves, as it would to a
		// person who typed the command.
		want := map[string]string{"bash": "bye\nexit\n", "zsh": "bye\n"}[sh]
		if exitCode(r) != "9" || r.Reason != "shell_exited" || r.Output != want {
			t.Fatalf("exit 9: %+v", r)
		}
		if s.State() != StateDead {
			t.Fatalf("state %s", s.State())
		}
		if _, err := s.Run(testCtx(t), "true", RunOptions{}); !isKind(err, "terminal_dead") {
			t.Fatalf("Run on dead: %v", err)
		}
		s2 := start(t, Options{Shell: sh})
		r = run(t, s2, "kill -9 $$", RunOptions{})
		if exitCode(r) != "137" || s2.State() != StateDead {
			t.Fatalf("kill -9 $$: %+v state %s", r, s2.State())
		}
	})
}

func TestUserRCOverridesPrompt(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		home := t.TempDir()
		marker := filepath.Join(home, "pc-ran")
		rc := fmt.Sprintf("PS1='custom> '\nPROMPT_COMMAND='PS1=\"changed> \"; touch %s'\nRC_LOADED=yes\n", marker)
		if sh == "zsh" {
			rc = fmt.Sprintf("PS1='custom> '\nprecmd() { PS1='changed> '; touch %s; }\nRC_LOADED=yes\n", marker)
		}
		name := map[string]string{"bash": ".bashrc", "zsh": ".zshrc"}[sh]
		if err := os.WriteFile(filepath.Join(home, name), []byte(rc), 0o644); err != nil {
			t.Fatal(err)
		}
		s := start(t, Options{Shell: sh, Env: map[string]string{"HOME": home}})
		if s.Mode() != ModeIntegrated {
			t.Fatalf("mode %s", s.Mode())
		}
		for i := range 3 {
			r := run(t, s, "echo $RC_LOADED", RunOptions{Timeout: 5 * time.Second})
			if r.Output != "yes\n" || exitCode(r) != "0" {
				t.Fatalf("run %d: %+v", i, r)
			}
		}
		// A command that replaces the hooks itself does not break the next one.
		if sh == "bash" {
			run(t, s, `PROMPT_COMMAND='PS1="x> "'; PS1='y> '`, RunOptions{Timeout: 5 * time.Second})
		} else {
			run(t, s, `precmd_functions=(); PS1='y> '`, RunOptions{Timeout: 5 * time.Second})
		}
		if r := run(t, s, "sh -c 'kill -INT $$'", RunOptions{Timeout: 5 * time.Second}); exitCode(r) != "130" {
			t.Fatalf("after hook override: %+v", r)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("user's prompt hook did not run: %v", err)
		}
	})
}

func TestAltScreenDetected(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		alt := make(chan struct{})
		var once sync.Once
		s.Subscribe(func(e Event) {
			if e.State != nil && e.State.AltScreen {
				once.Do(func() { close(alt) })
			}
		})
		r := run(t, s, `printf '\e[?1049h'; echo full; printf '\e[?1049l'`, RunOptions{})
		if !r.AltScreen {
			t.Fatalf("alt screen not reported: %+v", r)
		}
		r = run(t, s, `echo plain`, RunOptions{})
		if r.AltScreen {
			t.Fatal("alt screen reported for plain output")
		}
		select {
		case <-alt:
		case <-time.After(10 * time.Second):
			t.Fatal("no state event with the alt screen")
		}
	})
}

func TestRawStreamAndStateEvents(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var raw []byte
	var next int64
	var states []string
	gap := false
	s := start(t, Options{Shell: "bash", OnEvent: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if o := e.Output; o != nil {
			if o.Offset != next || o.Lost != 0 {
				gap = true
			}
			next = o.Offset + int64(len(o.Data))
			raw = append(raw, o.Data...)
		}
		if st := e.State; st != nil {
			states = append(states, fmt.Sprintf("%s/%d/%s", st.State, st.Seq, exitStr(st.ExitCode)))
		}
	}})
	run(t, s, "echo streamed", RunOptions{})
	run(t, s, "exit 5", RunOptions{})
	ohtest.WaitWithin(t, 10*time.Second, "dead state event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(states) > 0 && strings.HasPrefix(states[len(states)-1], "dead")
	})
	mu.Lock()
	defer mu.Unlock()
	if gap {
		t.Fatal("raw stream had a gap")
	}
	if !strings.Contains(string(raw), "echo streamed\r\n\x1b]633;C\astreamed\r\n") || !strings.Contains(string(raw), "\x1b]633;D;0\a") || strings.Contains(string(raw), s.nonce) {
		t.Fatalf("raw stream lacks output or markers: %q", raw)
	}
	want := "[starting/0/- idle/0/- running/1/- idle/1/0 running/2/- idle/2/5 dead/0/5]"
	if fmt.Sprint(states) != want {
		t.Fatalf("states %v, want %s", states, want)
	}
}

func exitStr(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

func TestHostileRCFallsBack(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		t.Run("exec", func(t *testing.T) {
			home := t.TempDir()
			name := map[string]string{"bash": ".bashrc", "zsh": ".zshrc"}[sh]
			os.WriteFile(filepath.Join(home, name), []byte("exec sleep 1000\n"), 0o644)
			s := start(t, Options{Shell: sh, Env: map[string]string{"HOME": home}, ReadyTimeout: time.Second})
			if s.Mode() != ModeNoRC {
				t.Fatalf("mode %s, want norc", s.Mode())
			}
			if r := run(t, s, "echo ok", RunOptions{}); r.Output != "ok\n" {
				t.Fatalf("norc run: %+v", r)
			}
		})
		t.Run("hang everywhere", func(t *testing.T) {
			home := t.TempDir()
			name := map[string]string{"bash": ".bashrc", "zsh": ".zshrc"}[sh]
			os.WriteFile(filepath.Join(home, name), []byte("sleep 1000\n"), 0o644)
			s := start(t, Options{Shell: sh, Env: map[string]string{"HOME": home}, ReadyTimeout: time.Second, testHangNoRC: true})
			if s.Mode() != ModeFallback || s.State() != StateIdle {
				t.Fatalf("mode %s state %s, want fallback idle", s.Mode(), s.State())
			}
			testFallbackSession(t, s)
		})
	})
}

func TestForcedFallback(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Shell: "bash", Mode: ModeFallback})
	testFallbackSession(t, s)
}

func testFallbackSession(t *testing.T, s *Terminal) {
	t.Helper()
	dir := t.TempDir()
	r := run(t, s, "cd "+shellQuote(dir)+" && export FB=1 && echo moved", RunOptions{})
	if r.Output != "moved\n" || exitCode(r) != "0" || r.Cwd != dir || r.Mode != ModeFallback {
		t.Fatalf("fallback cd: %+v", r)
	}
	r = run(t, s, `pwd; echo "FB=$FB"; exit 3`, RunOptions{})
	if r.Output != dir+"\nFB=1\n" || exitCode(r) != "3" {
		t.Fatalf("fallback persistence: %q exit %s", r.Output, exitCode(r))
	}
	r = run(t, s, `read x; echo "got:$x"`, RunOptions{NoOutputTimeout: 300 * time.Millisecond})
	if err := s.SendInput(testCtx(t), []byte("in\r")); err != nil {
		t.Fatal(err)
	}
	if r, _ = s.Output(testCtx(t), r.Seq, RunOptions{Timeout: 5 * time.Second}); !strings.HasSuffix(r.Output, "got:in\n") {
		t.Fatalf("fallback input: %+v", r)
	}
	r = run(t, s, "sleep 100", RunOptions{Timeout: 300 * time.Millisecond})
	if exitCode(r) != "130" || r.Reason != "timeout" {
		t.Fatalf("fallback timeout: %+v", r)
	}
	if s.State() != StateIdle {
		t.Fatalf("state %s", s.State())
	}
}

func TestCloseLeavesNoProcesses(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		r := run(t, s, "sleep 1000 & echo pid=$!", RunOptions{})
		_, pid, _ := strings.Cut(r.Output, "pid=")
		bg, err := strconv.Atoi(strings.TrimSpace(pid))
		if err != nil {
			t.Fatalf("bg pid: %q", r.Output)
		}
		r = run(t, s, "sleep 1000", RunOptions{Yield: 200 * time.Millisecond})
		if !r.Running {
			t.Fatalf("fg sleep: %+v", r)
		}
		shell := s.PID()
		if n := len(sessionMembers(shell)); n < 3 {
			t.Fatalf("expected shell + 2 sleeps in session %d, found %d", shell, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if left := sessionMembers(shell); len(left) > 0 {
			t.Fatalf("processes left in session %d: %v", shell, left)
		}
		if st, err := readStat(bg); err == nil && st.state != "Z" {
			t.Fatalf("background sleep %d survived (%s)", bg, st.state)
		}
		if _, err := os.Stat(s.runDir); !os.IsNotExist(err) {
			t.Fatalf("run dir %s not removed: %v", s.runDir, err)
		}
		if s.State() != StateDead {
			t.Fatalf("state %s", s.State())
		}
	})
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    Options
		kind string
	}{
		{Options{Shell: "fish"}, "invalid_option"},
		{Options{Shell: "/nonexistent/zsh"}, "shell_not_found"},
		{Options{Cwd: "/nonexistent/dir"}, "invalid_option"},
		{Options{Cols: -1}, "invalid_option"},
		{Options{Mode: "weird"}, "invalid_option"},
	} {
		_, err := Start(context.Background(), tc.o)
		if !isKind(err, tc.kind) {
			t.Errorf("Start(%+v) = %v, want kind %s", tc.o, err, tc.kind)
		}
	}
}

func TestResize(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Shell: "bash", Cols: 100, Rows: 30})
	if r := run(t, s, "stty size", RunOptions{}); r.Output != "30 100\n" {
		t.Fatalf("initial size %q", r.Output)
	}
	if err := s.Resize(132, 40); err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, "stty size", RunOptions{}); r.Output != "40 132\n" {
		t.Fatalf("resized %q", r.Output)
	}
	if err := s.Resize(0, 1); !isKind(err, "invalid_option") {
		t.Fatalf("bad resize: %v", err)
	}
}

func TestLineEditingKept(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh, LineEditing: true})
		for _, cmd := range []string{"echo one", "echo 'two\nlines'", "printf 'no nl'"} {
			r := run(t, s, cmd, RunOptions{})
			want := map[string]string{"echo one": "one\n", "echo 'two\nlines'": "two\nlines\n", "printf 'no nl'": "no nl"}[cmd]
			if r.Output != want || exitCode(r) != "0" {
				t.Fatalf("%q: %+v", cmd, r)
			}
		}
	})
}
