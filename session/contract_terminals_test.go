//go:build unix

package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/session"
)

// TestTerminalRuns: commands in real bash in a real PTY through the
// session, each answering the session's CommandResult: output, exit code,
// why the call returned, and whether the command still runs.
func TestTerminalRuns(t *testing.T) {
	s, dir := newSession(t, session.Options{})
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
	ctx := context.Background()
	cases := []struct {
		name    string
		run     session.Run
		output  string // the output, or
		prefix  string // how it starts
		exit    int    // -1: none (still running)
		reason  string
		kind    string // or the error's kind
		running bool
	}{
		{"output and status", session.Run{Command: "echo one; echo two"}, "one\ntwo\n", "", 0, "exited", "", false},
		{"a failing command", session.Run{Command: "(exit 3)"}, "", "", 3, "exited", "", false},
		{"a cwd inside the roots", session.Run{Command: "pwd", Cwd: "sub"}, filepath.Join(dir, "sub") + "\n", "", 0, "exited", "", false},
		{"a timeout ends it", session.Run{Command: "echo before; sleep 30", Timeout: 300 * time.Millisecond}, "", "before\n", 130, "timeout", "", false},
		{"quiet too long: it goes on", session.Run{Command: "echo start; sleep 30", NoOutputTimeout: 300 * time.Millisecond}, "start\n", "", -1, "no_output_timeout", "", true},
		{"a cwd outside the roots", session.Run{Command: "pwd", Cwd: filepath.Dir(dir)}, "", "", 0, "", "path_outside_workspace", false},
		{"a cwd that is a file", session.Run{Command: "pwd", Cwd: "f"}, "", "", 0, "", "not_directory", false},
		{"a cwd that is missing", session.Run{Command: "pwd", Cwd: "gone"}, "", "", 0, "", "not_found", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.RunCommand(ctx, tc.run)
			if tc.kind != "" {
				if kindOf(err) != tc.kind {
					t.Fatalf("%+v, %v; want a %s error", r, err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.running {
				// It goes on until stopped: interrupting answers its end.
				defer func() {
					ir, err := s.InterruptTerminal(ctx, r.TerminalID)
					if err != nil || ir.Running || ir.Reason != "interrupted" || ir.ExitCode == nil || *ir.ExitCode != 130 {
						t.Errorf("interrupt: %+v, %v; want it ended by Ctrl-C (130)", ir, err)
					}
				}()
			}
			switch {
			case r.Running != tc.running || r.Reason != tc.reason:
				t.Errorf("running %v, reason %q; want %v, %q", r.Running, r.Reason, tc.running, tc.reason)
			case tc.exit < 0 && r.ExitCode != nil:
				t.Errorf("exit code %d of a running command", *r.ExitCode)
			case tc.exit >= 0 && (r.ExitCode == nil || *r.ExitCode != tc.exit):
				t.Errorf("exit code %v, want %d", r.ExitCode, tc.exit)
			case tc.prefix == "" && r.Output != tc.output:
				t.Errorf("output %q, want %q", r.Output, tc.output)
			case tc.prefix != "" && !strings.HasPrefix(r.Output, tc.prefix):
				t.Errorf("output %q, want it to start %q", r.Output, tc.prefix)
			case r.Command != tc.run.Command || r.TerminalID == "" || r.Seq == 0:
				t.Errorf("result %+v does not name its command", r)
			}
		})
	}
}

// TestCancelledWaitKeepsOutput: a wait cancelled by its caller takes
// output from the command, which goes on; the session keeps what it took
// and the next result for that command carries it, so no output is lost
// between two calls (the session's rule, not the terminal's).
func TestCancelledWaitKeepsOutput(t *testing.T) {
	firstOut := make(chan struct{})
	var once sync.Once
	s, dir := newSession(t, session.Options{OnTerminalEvent: func(ev session.TerminalEvent) {
		if ev.Text != nil && strings.Contains(ev.Text.Text, "first") {
			once.Do(func() { close(firstOut) })
		}
	}})
	gate := filepath.Join(dir, "gate")
	ctx := context.Background()
	term, err := s.OpenTerminal(ctx, session.TerminalOpen{Name: "cancel"})
	if err != nil {
		t.Fatal(err)
	}
	if term.State != session.TerminalIdle || term.Cwd != dir || term.Name != "cancel" || term.ID == "" {
		t.Fatalf("a new terminal: %+v", term)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.RunCommand(cctx, session.Run{TerminalID: term.ID,
			Command: "echo first; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo second"})
		done <- err
	}()
	// Cancel once the first line is out (the wait has taken it).
	<-firstOut
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled wait: %v", err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for {
		r, err := s.CommandOutput(ctx, term.ID, 0, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(r.Output)
		if !r.Running {
			if r.ExitCode == nil || *r.ExitCode != 0 {
				t.Fatalf("%+v", r)
			}
			break
		}
	}
	if out.String() != "first\nsecond\n" {
		t.Fatalf("after the cancelled wait: %q, want all of the output, what the cancelled wait took included", out.String())
	}
}

// TestTerminalLifecycle: input, resize, interrupt and close through the
// session, and the stream a face mirrors: output, then the command's
// text, then its state, in the session's own types.
func TestTerminalLifecycle(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var text strings.Builder
	dead := make(chan struct{})
	s, _ := newSession(t, session.Options{OnTerminalEvent: func(ev session.TerminalEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Output != nil:
			if len(seen) == 0 || seen[len(seen)-1] != "output" {
				seen = append(seen, "output")
			}
		case ev.Text != nil:
			text.WriteString(ev.Text.Text)
			if seen[len(seen)-1] != "text" {
				seen = append(seen, "text")
			}
		case ev.State != nil:
			seen = append(seen, string(ev.State.State))
			if ev.State.State == session.TerminalDead {
				close(dead)
			}
		}
	}})
	ctx := context.Background()
	term, err := s.OpenTerminal(ctx, session.TerminalOpen{Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	if term.Cols != 100 || term.Rows != 30 {
		t.Errorf("size %dx%d, want 100x30", term.Cols, term.Rows)
	}
	if err := s.ResizeTerminal(term.ID, 120, 40); err != nil {
		t.Fatal(err)
	}
	r, err := s.RunCommand(ctx, session.Run{TerminalID: term.ID, Command: "read line; echo got $line; stty size",
		NoOutputTimeout: 300 * time.Millisecond})
	if err != nil || !r.Running {
		t.Fatalf("%+v, %v; want it waiting for input", r, err)
	}
	if in, err := s.SendInput(ctx, term.ID, []byte("hello\n")); err != nil || in.ID != term.ID {
		t.Fatalf("input: %+v, %v", in, err)
	}
	r, err = s.CommandOutput(ctx, term.ID, r.Seq, 5*time.Second)
	if err != nil || r.Running || !strings.Contains(r.Output, "got hello\n40 120\n") {
		t.Fatalf("%+v, %v; want the input read and the new size", r, err)
	}
	if _, err := s.InterruptTerminal(ctx, term.ID); kindOf(err) != "no_running_command" {
		t.Errorf("interrupting an idle terminal: %v", err)
	}
	if list := s.Terminals(); len(list) != 1 || list[0].ID != term.ID || list[0].State != session.TerminalIdle {
		t.Errorf("terminals %+v", list)
	}
	if err := s.CloseTerminal(term.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dead:
	case <-time.After(20 * time.Second):
		t.Fatal("the closed terminal's end was not reported")
	}
	if _, err := s.SendInput(ctx, term.ID, []byte("x")); kindOf(err) != "terminal_not_found" {
		t.Errorf("input to a closed terminal: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Output and text alternate while it runs (each text follows the
	// output that carried it); its state ends it.
	i := slices.Index(seen, "running")
	j := i + slices.Index(seen[i+1:], "idle") + 1
	if i < 0 || j <= i+2 || seen[i+1] != "output" || !slices.Contains(seen[i:j], "text") {
		t.Errorf("events %q: want running, output, text ..., idle for the command", seen)
	}
	if !strings.Contains(text.String(), "got hello") {
		t.Errorf("the command's text %q", text.String())
	}
}

// TestCapabilities: what a session reports to advertise is what it does:
// the defaults, or the bounds its Options set, each one enforced.
func TestCapabilities(t *testing.T) {
	def, _ := newSession(t, session.Options{})
	if got := def.Capabilities(); got.MaxFileSize != 10<<20 || got.MaxUndoPerFile != 10 || got.MaxTerminals != 8 ||
		!slices.Equal(got.Shells, []string{"bash", "zsh"}) {
		t.Errorf("default capabilities %+v", got)
	}
	s, dir := newSession(t, session.Options{MaxFileSize: 1024, MaxUndoPerFile: 1, MaxTerminals: 1})
	got := s.Capabilities()
	if got.MaxFileSize != 1024 || got.MaxUndoPerFile != 1 || got.MaxTerminals != 1 {
		t.Fatalf("capabilities %+v, want the Options' bounds", got)
	}
	ctx := context.Background()
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("x\n", 1024)), 0o644)
	if _, err := s.ReadTextFile(ctx, big, 1, 0); err == nil || !strings.Contains(err.Error(), "1024") {
		t.Errorf("reading 2048 bytes past a 1024-byte cap: %v", err)
	}
	path := filepath.Join(dir, "u.txt")
	s.Create(ctx, path, "a")
	s.StrReplace(ctx, path, ptr("a"), ptr("b"), "")
	s.StrReplace(ctx, path, ptr("b"), ptr("c"), "")
	if _, err := s.Undo(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Undo(ctx, path); kindOf(err) != "no_edit_history" {
		t.Errorf("a second undo with one kept: %v", err)
	}
	if _, err := s.OpenTerminal(ctx, session.TerminalOpen{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenTerminal(ctx, session.TerminalOpen{}); kindOf(err) != "terminal_limit" {
		t.Errorf("a second terminal with one allowed: %v", err)
	}
}

// TestPermissionAnswers: each answer the person gives, as the session
// reads it: whether the action runs, whether the next one of its kind is
// asked about, and the words of a failure.
func TestPermissionAnswers(t *testing.T) {
	cases := []struct {
		name      string
		answer    session.PermissionOutcome
		askErr    error
		allowed   bool
		askedNext bool   // a second action of the kind is put to the person
		err       string // the failure, or ""
	}{
		{"allow once", session.PermissionOutcome{OptionID: session.AllowOnce}, nil, true, true, ""},
		{"allow always", session.PermissionOutcome{OptionID: session.AllowAlways}, nil, true, false, ""},
		{"reject once", session.PermissionOutcome{OptionID: session.RejectOnce}, nil, false, true, ""},
		{"no option chosen", session.PermissionOutcome{}, nil, false, true, ""},
		{"the question withdrawn", session.PermissionOutcome{Cancelled: true}, nil, false, true,
			"the person cancelled the turn while asked about run `ls`; it did not run"},
		{"the question cannot be put", session.PermissionOutcome{}, errors.New("the editor went away"), false, true,
			"could not ask the user for permission: the editor went away"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			s, _ := newSession(t, session.Options{AskPermission: func(ctx context.Context, r session.PermissionRequest) (session.PermissionOutcome, error) {
				asked++
				return tc.answer, tc.askErr
			}})
			req := session.PermissionRequest{Kind: "execute", Title: "run `ls`"}
			ok, err := s.Permit(context.Background(), req)
			if ok != tc.allowed || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Fatalf("Permit = %v, %v; want %v, %q", ok, err, tc.allowed, tc.err)
			}
			if tc.answer.Cancelled && kindOf(err) != "cancelled" {
				t.Errorf("a withdrawn question: kind %q, want cancelled", kindOf(err))
			}
			s.Permit(context.Background(), req)
			if (asked == 2) != tc.askedNext {
				t.Errorf("asked %d times for two actions of a kind", asked)
			}
			// Another kind is always asked about.
			s.Permit(context.Background(), session.PermissionRequest{Kind: "edit"})
			if want := map[bool]int{true: 3, false: 2}[tc.askedNext]; asked != want {
				t.Errorf("asked %d times, want %d (another kind asks again)", asked, want)
			}
		})
	}
	// Without anyone to ask, everything runs.
	s, _ := newSession(t, session.Options{})
	if ok, err := s.Permit(context.Background(), session.PermissionRequest{Kind: "execute"}); !ok || err != nil {
		t.Errorf("no one to ask: %v, %v", ok, err)
	}
}
