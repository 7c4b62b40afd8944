//go:build unix

package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// The real OpenHands CLI (1.16.0, installed by `task openhands`) started
// as the extension's "Start OpenHands CLI in Terminal" starts it: the line
// extension/src/cli.ts types (extension/test/cli-commands.json), typed
// into a shell-integrated terminal of the bridge's editor face, the kind
// the extension mirrors. Its model is a scripted one on 127.0.0.1.

// The CLI's own tools, which its model is offered whatever MCP adds.
var cliTools = []string{"terminal", "file_editor", "task_tracker", "task", "finish", "think"}

// The hosts the CLI reaches out to on every start, with no setting to
// stop it: PyPI for its update check (openhands_cli/version_check.py,
// called by the splash screen, --headless too) and GitHub for the public
// skills (openhands.sdk.skills.load_public_skills clones
// OpenHands/extensions; the CLI's AgentContext always asks for them). A
// proxy on loopback refuses them.
var cliPhonesHome = []string{"CONNECT github.com:443 HTTP/1.1", "CONNECT pypi.org:443 HTTP/1.1"}

// TestRealCLI runs the real CLI three times in the bridge's terminals, in
// parallel: headless with the bridge's tools (the task reaches the model
// as typed, the model's call of bridge_terminal runs in the bridge, and
// nothing leaves loopback, strace says); headless with the bridge's tools
// unprefixed (the CLI refuses them); and its full-screen UI, which keeps
// the terminal running until the person quits, then leaves it idle with
// its shell integration, for the next command.
func TestRealCLI(t *testing.T) {
	venv := realserver.Need(t, realserver.CLI)
	lines := cliLines(t)
	r := startCLIRig(t, venv)
	t.Run("headless with the bridge's tools", func(t *testing.T) {
		t.Parallel()
		run := r.newRun(t, "headless")
		run.writeHome(t, "mcp.json", cliMCPConfig)
		log := ""
		if straceBin, err := exec.LookPath("strace"); err == nil {
			log = filepath.Join(t.TempDir(), "strace.log")
			run.traceWith(t, straceBin, log)
		} else if os.Getenv("CI") != "" && runtime.GOOS == "linux" {
			t.Fatal("strace is not installed; .ci/run must install it (apt-get install strace)")
		} else {
			t.Log("strace is not installed (apt-get install strace): not checking that nothing leaves loopback")
		}
		task := lines[0].Task
		bridgeText := "made-by-the-bridge\n[The command completed with exit code 0.]\n[Current working directory: " + run.dir + "]"
		if py := engine.LookupPython(nil); py != "" {
			bridgeText += "\n[Python interpreter: " + py + "]"
		}
		bridgeText += "\n[Command finished with exit code 0]"
		tools := append(slices.Clone(cliTools), "bridge_terminal", "bridge_file_editor", "bridge_task_tracker")
		model := scriptedllm.Start(t,
			scriptedllm.Turn{Tools: tools, Check: userSays(task),
				ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call("bridge_terminal", map[string]any{
					// The CLI's security analyzer (an LLM one) wants
					// every action's risk, MCP tools' too.
					"command": "echo made-by-the-bridge > bridge.txt && cat bridge.txt", "security_risk": "LOW"})}},
			scriptedllm.Turn{Tools: tools, ToolResults: []string{"[Tool 'bridge_terminal' executed.]\n" + bridgeText},
				ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call("finish", map[string]any{"message": "The bridge wrote bridge.txt."})}},
		)
		tid := run.open(t, run.headlessEnv(model))
		res := r.run(t, tid, lines[0].Command+" --headless --override-with-envs")
		model.Wait(time.Second)
		if res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(res.Output, "The bridge wrote bridge.txt.") {
			t.Errorf("the CLI ended with %v (%s); want 0 and the model's last message:\n%s", res.ExitCode, res.Reason, res.Output)
		}
		if b, err := os.ReadFile(filepath.Join(run.dir, "bridge.txt")); err != nil || string(b) != "made-by-the-bridge\n" {
			t.Errorf("bridge.txt: %q %v; the bridge's terminal did not run the command", b, err)
		}
		if log != "" {
			inet, outside := straceConnects(t, log)
			t.Logf("connections (strace): %s", strings.Join(inet, ", "))
			if len(outside) > 0 {
				t.Errorf("the CLI reached past loopback:\n%s", strings.Join(outside, "\n"))
			}
			if at := strings.TrimSuffix(strings.TrimPrefix(model.URL, "http://"), "/v1"); !slices.Contains(inet, at) {
				t.Errorf("strace saw no connection to the scripted model at %s: %v", model.URL, inet)
			}
		}
		r.trap.check(t)
	})
	t.Run("the bridge's tools unprefixed clash with the CLI's", func(t *testing.T) {
		t.Parallel()
		run := r.newRun(t, "clash")
		run.writeHome(t, "mcp.json", strings.Replace(cliMCPConfig, `"mcp", "--tool-prefix", "bridge_"`, `"mcp"`, 1))
		model := scriptedllm.Start(t) // the CLI must not get as far as asking it
		tid := run.open(t, run.headlessEnv(model))
		// The line's task is "-v": were it read as an option, the CLI
		// would stop at its usage message before loading any tool.
		res := r.run(t, tid, lines[1].Command+" --headless --override-with-envs")
		// A ValueError naming the three tools, in some order; the CLI
		// still exits 0.
		dup := regexp.MustCompile(`Duplicate tool names found: \{('(terminal|file_editor|task_tracker)',\s*){2}'(terminal|file_editor|task_tracker)'\}`)
		if !dup.MatchString(res.Output) {
			t.Errorf("the CLI (exit %v) did not refuse the bridge's unprefixed tools with \"Duplicate tool names found\":\n%s", res.ExitCode, res.Output)
		}
		if n := len(model.Requests()); n != 0 {
			t.Errorf("the model got %d requests", n)
		}
	})
	t.Run("its UI keeps the terminal running until quit", func(t *testing.T) {
		t.Parallel()
		r.tuiKeepsTheTerminal(t, lines[0])
	})
}

// tuiKeepsTheTerminal runs the line as typed, the CLI's settings file
// pointing it at the scripted model. While the UI is up the terminal is
// running: the bridge refuses another command there, and the mirrored
// stream, which VS Code's shell integration reads, has the command's start
// (633;C) and no end. Quit (Ctrl+Q twice) ends the command: the stream has
// its end (633;D) and a new prompt (633;A, 633;B), and the terminal runs
// the next command. The CLI typed into the terminal instead has no marks.
func (r *cliRig) tuiKeepsTheTerminal(t *testing.T, line cliLine) {
	run := r.newRun(t, "tui")

	model := scriptedllm.Start(t, scriptedllm.Turn{Tools: cliTools, Check: userSays(line.Task),
		ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call("finish", map[string]any{"message": "Done in the UI."})}})
	settings, _ := json.Marshal(map[string]any{"llm": map[string]any{"model": "openai/oh-scripted", "base_url": model.URL,
		"api_key": "sk-scripted", "usage_id": "agent", "num_retries": 0}})
	run.writeHome(t, "agent_settings.json", string(settings))
	tid := run.open(t, run.env)
	_, answer, err := r.b.client.Start("terminal/run", map[string]any{"terminalId": tid, "command": line.Command})
	if err != nil {
		t.Fatal(err)
	}
	model.Wait(3 * time.Minute)
	r.watch.await(t, "the UI to show the model's answer", time.Minute, func() bool { return strings.Contains(r.watch.output(tid), "Done in the UI.") })

	if st := r.state(t, tid); st.State != "running" || st.Command != line.Command {
		t.Errorf("terminal/list while the UI is up: %+v; want it running the line", st)
	}
	var rerr *rpc.Error
	if err := r.b.client.Call(ctxT(t), "terminal/run", map[string]any{"terminalId": tid, "command": "true"}, nil); !errors.As(err, &rerr) || rerr.Code != 1012 {
		t.Errorf("terminal/run on the terminal the UI holds: %v; want 1012 terminal_busy", err)
	}
	start := "\x1b]633;E;" + commandLineMark(line.Command) + "\a"
	stream := r.watch.output(tid)
	at := strings.LastIndex(stream, start)
	if at < 0 || !strings.Contains(stream[at:], "\x1b]633;C\a") || strings.Contains(stream[at:], "\x1b]633;D") {
		t.Fatalf("the mirrored stream does not show the line running (633;E with it, then 633;C, and no 633;D): %q", tail(stream, 2000))
	}

	// Ctrl+Q asks "Terminate session?"; a second one quits.
	r.input(t, tid, "\x11")
	r.watch.await(t, "the UI to ask before quitting", 30*time.Second, func() bool { return strings.Contains(r.watch.output(tid)[at:], "Terminate session?") })
	r.input(t, tid, "\x11")
	var res cliResult
	select {
	case m := <-answer:
		if m.Error != nil {
			t.Fatalf("terminal/run: %v", m.Error)
		}
		json.Unmarshal(m.Result, &res)
	case <-time.After(time.Minute):
		t.Fatalf("the UI did not quit; the stream ends with %q", tail(r.watch.output(tid), 2000))
	}
	if res.ExitCode == nil || *res.ExitCode != 0 || !res.AltScreen {
		t.Errorf("the UI ended with %v (%s), altScreen %v; want 0, full-screen", res.ExitCode, res.Reason, res.AltScreen)
	}
	r.watch.await(t, "a prompt after the UI", 30*time.Second, func() bool {
		after := r.watch.output(tid)[at:]
		d := strings.Index(after, "\x1b]633;D;0\a")
		return d >= 0 && strings.Contains(after[d:], "\x1b]633;A\a") && strings.Contains(after[d:], "\x1b]633;B\a")
	})
	// The extension reuses it: the next command runs there.
	if next := r.run(t, tid, "echo reused"); next.ExitCode == nil || *next.ExitCode != 0 || next.Output != "reused\n" {
		t.Errorf("the next command in the terminal: %v %q", next.ExitCode, next.Output)
	}

	// The CLI typed into the terminal, as VS Code types into a terminal
	// it mirrors, runs with no start mark (633;C) in the stream and the
	// bridge calls the terminal idle meanwhile: nothing tells that the
	// terminal is busy, so the extension never reuses its mirrors.
	before := len(r.watch.output(tid))
	r.input(t, tid, "openhands --version\r")
	if runtime.GOOS == "linux" { // ohtest.Running reads /proc
		ohtest.WaitFor(t, "the typed CLI to start", func() bool { return ohtest.Running(run.cmdline("--version")) })
		if st := r.state(t, tid); st.State != "idle" || st.Command != "" {
			t.Errorf("terminal/list while the typed CLI runs: %+v; the bridge knows only the commands it ran", st)
		}
	}
	r.watch.await(t, "the typed CLI's output and the next prompt", time.Minute, func() bool {
		typed := r.watch.output(tid)[before:]
		i := strings.Index(typed, "OpenHands CLI 1.16.0")
		return i >= 0 && strings.Contains(typed[i:], "\x1b]633;B\a")
	})
	if typed := r.watch.output(tid)[before:]; strings.Contains(typed, "\x1b]633;C") || strings.Contains(typed, "\x1b]633;E") {
		t.Errorf("the typed command has a start mark after all: the extension could reuse mirrors with shell integration: %q", typed)
	}
}

// cliLine is a line the extension types for a task.
type cliLine struct {
	Task, Activate, Command string
}

func cliLines(t *testing.T) []cliLine {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "extension", "test", "cli-commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Commands []cliLine }
	if err := json.Unmarshal(raw, &f); err != nil || len(f.Commands) < 2 {
		t.Fatalf("extension/test/cli-commands.json: %v", err)
	}
	return f.Commands
}

// userSays checks that the request's last user message is the task.
func userSays(task string) func(*scriptedllm.Request) error {
	return func(r *scriptedllm.Request) error {
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if m := r.Messages[i]; m.Role == "user" {
				if m.Text() != task {
					return fmt.Errorf("the user's message is %q, want the task as selected, %q", m.Text(), task)
				}
				return nil
			}
		}
		return errors.New("no user message")
	}
}
