//go:build unix

package shellint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stateRow is one piece of the state a person's interactive shell keeps
// between two commands: set runs first, then check's output must be want.
// The zsh fields, when set, replace the bash ones. A want starting with
// "..." only has to end the output.
type stateRow struct {
	name                  string
	set, check, want      string
	zshSet, zshCheck, zsh string
}

func (r stateRow) forShell(sh string) (set, check, want string) {
	set, check, want = r.set, r.check, r.want
	if sh == "zsh" {
		if r.zshSet != "" {
			set = r.zshSet
		}
		if r.zshCheck != "" {
			check = r.zshCheck
		}
		if r.zsh != "" {
			want = r.zsh
		}
	}
	return set, check, want
}

// TestStateSurvivesBetweenCommands runs each row's two commands as two
// agent commands in a fresh terminal: whatever the machinery runs between
// them must leave the state as a person's shell would.
func TestStateSurvivesBetweenCommands(t *testing.T) {
	t.Parallel()
	rows := []stateRow{
		{name: "exit status", set: "false", check: "echo $?", want: "1\n"},
		{name: "exit status of a function", set: "f() { return 3; }; f", check: "echo $?", want: "3\n"},
		{name: "last argument", set: "echo one two >/dev/null", check: "echo $_", want: "two\n"},
		{name: "pipe statuses", set: "true | false | true", check: "echo ${PIPESTATUS[@]}", want: "0 1 0\n",
			zshCheck: "echo $pipestatus"},
		{name: "shell variable", set: "V=plain", check: `echo "$V"; sh -c 'echo "child:$V"'`, want: "plain\nchild:\n"},
		{name: "exported variable", set: "export E=exp", check: `sh -c 'echo "$E"'`, want: "exp\n"},
		{name: "function", set: "f() { echo from-f; }", check: "f", want: "from-f\n"},
		{name: "alias", set: "alias ll='echo aliased'", check: "ll", want: "aliased\n"},
		{name: "set -o option", set: "set -o pipefail", check: "false | true; echo $?", want: "1\n"},
		{name: "shopt / setopt", set: "shopt -s extglob", check: "shopt -q extglob && echo on", want: "on\n",
			zshSet: "setopt extendedglob", zshCheck: "[[ -o extendedglob ]] && echo on"},
		{name: "trap", set: "trap 'echo trapped' USR1", check: "kill -USR1 $$", want: "trapped\n"},
		{name: "cwd", set: "cd sub", check: "pwd", want: "{dir}/sub\n"},
		{name: "OLDPWD", set: "cd sub", check: `echo "$OLDPWD"`, want: "{dir}\n"},
		{name: "directory stack", set: "pushd sub >/dev/null", check: "popd >/dev/null; pwd", want: "{dir}\n"},
		{name: "umask", set: "umask 027", check: "umask", want: "0027\n", zsh: "027\n"},
		{name: "ulimit", set: "ulimit -S -n 512", check: "ulimit -S -n", want: "512\n"},
		{name: "background job: jobs", set: "sleep 30 & :", check: "jobs | grep -c 'sleep 30'", want: "1\n"},
		{name: "background job: wait", set: "{ sleep 0.3; exit 7; } & :", check: `wait "$!" 2>/dev/null; echo waited:$?`, want: "waited:7\n", zsh: "...waited:7\n"},
		// zsh reports the job it brings back on the terminal itself, past
		// any redirection, as it does for a person.
		{name: "background job: fg", set: "sleep 0.3 & :", check: "fg >/dev/null; echo fg:$?", want: "fg:0\n", zsh: "...running    sleep 0.3\nfg:0\n"},
		{name: "history", set: "echo hist-marker >/dev/null", check: "history | grep -c 'echo hist-marke[r]'", want: "1\n"},
	}
	// In bash, each row runs with each command typed as it is or sent
	// through the eval line (typed.go), in the four orders, so that either
	// way of running a command leaves the state the other one expects.
	type path struct {
		name           string
		setEval, check bool // true: through the eval line
	}
	paths := []path{{"typed-typed", false, false}, {"eval-typed", true, false}, {"typed-eval", false, true}, {"eval-eval", true, true}}
	eachShell(t, func(t *testing.T, sh string) {
		ps := paths
		if sh == "zsh" {
			ps = paths[3:] // zsh has only the eval line
		}
		for _, row := range rows {
			for _, p := range ps {
				set, check, want := row.forShell(sh)
				dir := t.TempDir()
				if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				want = strings.ReplaceAll(want, "{dir}", dir)
				s := start(t, Options{Shell: sh, Cwd: dir, Env: map[string]string{"HOME": t.TempDir()}})
				s.testEvalOnly = p.setEval
				runAs(t, s, set, !p.setEval)
				s.testEvalOnly = p.check
				// Right after an eval'd command the shell no longer holds
				// its PIPESTATUS: a text reading it goes through eval too.
				r := runAs(t, s, check, !p.check && !(p.setEval && strings.Contains(check, "PIPESTATUS")))
				if r.Output != want && !(strings.HasPrefix(want, "...") && strings.HasSuffix(r.Output, want[3:])) {
					t.Errorf("%s (%s): after %q, %q printed %q (exit %s), want %q", row.name, p.name, set, check, r.Output, exitCode(r), want)
				}
				s.Close()
			}
		}
	})
}

// runAs runs cmd and checks that it was typed as it is (typed) or went
// through the eval line.
func runAs(t *testing.T, s *Terminal, cmd string, typed bool) *Result {
	t.Helper()
	r := run(t, s, cmd, RunOptions{})
	s.mu.Lock()
	c := s.findLocked(r.Seq)
	s.mu.Unlock()
	if c == nil || c.typed != typed {
		t.Fatalf("%q: typed = %v, want %v", cmd, c != nil && c.typed, typed)
	}
	return r
}

// TestLongCommand runs a command longer than a tty line (canonical mode
// keeps 4095 bytes), which goes through a file, and checks that it still
// sees and leaves the state as a short one.
func TestLongCommand(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		long := strings.Repeat("x", 5000)
		run(t, s, "true | false", RunOptions{})
		r := run(t, s, "echo $? "+long+"; L=set; : tail-arg", RunOptions{})
		if r.Output != "1 "+long+"\n" || exitCode(r) != "0" {
			t.Fatalf("long command printed %d bytes %q..., exit %s", len(r.Output), r.Output[:min(20, len(r.Output))], exitCode(r))
		}
		if r := run(t, s, `echo "$L $_"`, RunOptions{}); r.Output != "set tail-arg\n" {
			t.Fatalf("after the long command: %q", r.Output)
		}
	})
}
