//go:build unix

package shellint

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestTypedPromptHooks: in typed mode the markers live in PS1 and our hook
// in PROMPT_COMMAND. A command that prepends to the prompt (venv's
// activate) or drops the hook without naming it must not leak the prompt
// into output, lose the cwd or stop commands from ending.
func TestTypedPromptHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Shell: "bash", Cwd: dir, Env: map[string]string{"HOME": t.TempDir()}})
	var mu sync.Mutex
	var mirror strings.Builder
	s.Subscribe(func(e Event) {
		if e.Output != nil {
			mu.Lock()
			mirror.Write(e.Output.Data)
			mu.Unlock()
		}
	})
	if r := runAs(t, s, `PS1="(venv) $PS1"`, true); r.Output != "" {
		t.Fatalf("prompt change printed %q", r.Output)
	}
	if r := runAs(t, s, "echo after-venv", true); r.Output != "after-venv\n" {
		t.Fatalf("after the prompt changed: %q", r.Output)
	}
	ohtest.WaitWithin(t, 10*time.Second, "the changed prompt in the mirror", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(mirror.String(), "(venv) ")
	})
	// A function that drops the hook: defining it names PROMPT_COMMAND
	// (eval line), calling it does not (typed).
	runAs(t, s, `drop() { PROMPT_COMMAND=(); }`, false)
	runAs(t, s, "drop", true)
	// The prompt after it came without the hook: the next command goes
	// through the eval line, which arms it again.
	if r := runAs(t, s, "cd sub", false); r.Cwd != filepath.Join(dir, "sub") {
		t.Fatalf("cwd after cd with the hook gone: %q", r.Cwd)
	}
	if r := runAs(t, s, "pwd", true); r.Output != filepath.Join(dir, "sub")+"\n" || r.Cwd != filepath.Join(dir, "sub") {
		t.Fatalf("after the hook came back: %+v", r)
	}
	if r := runAs(t, s, `echo "${PROMPT_COMMAND[@]}" | grep -c __br_fix`, false); r.Output != "1\n" {
		t.Fatalf("hook not armed once: %q", r.Output)
	}
}

// TestHistoryFile: agent commands reach the user's history file when the
// terminal closes, as a person's commands do, typed or eval'd alike, and
// the machinery does not.
func TestHistoryFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := start(t, Options{Shell: "bash", Env: map[string]string{"HOME": home}})
	runAs(t, s, "echo typed-marker", true)
	runAs(t, s, "echo eval-marker\necho two", false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ".bash_history"))
	if err != nil {
		t.Fatalf("no history file: %v", err)
	}
	h := string(b)
	if !strings.Contains(h, "echo typed-marker\n") || !strings.Contains(h, "echo eval-marker\necho two\n") || strings.Contains(h, "__br_") {
		t.Fatalf("history file:\n%s", h)
	}
}
