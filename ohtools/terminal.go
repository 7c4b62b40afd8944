package ohtools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/pytext"
)

// Texts of openhands-tools' terminal (constants.py, terminal_session.py,
// impl.py, definition.py, timeout_policy.py).
const (
	// TimeoutMessage is TIMEOUT_MESSAGE_TEMPLATE.
	TimeoutMessage = `You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending your new command, or use the timeout parameter in terminal for future commands.`
	// MaxOutput is MAX_CMD_OUTPUT_SIZE, in characters.
	MaxOutput = 30000
	// DefaultNoChangeTimeout is NO_CHANGE_TIMEOUT_SECONDS.
	DefaultNoChangeTimeout = 30 * time.Second

	// truncateNotice is the SDK's DEFAULT_TRUNCATE_NOTICE.
	truncateNotice  = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>"
	continuePrefix  = "[Below is the output of the previous command.]\n"
	noPreviousLogs  = "No previous running command to retrieve logs from."
	noPreviousInput = "No previous running command to interact with."
	resetText       = "Terminal session has been reset. All previous environment variables and session state have been cleared."
	resetWithInput  = "Error executing tool 'terminal': Cannot use reset=True with is_input=True"

	// idleTimeoutEnv caps foreground timeouts where a runtime is cleaned up
	// when idle (OH_RUNTIME_IDLE_TIMEOUT_SECONDS; unset means no cap).
	idleTimeoutEnv = "OH_RUNTIME_IDLE_TIMEOUT_SECONDS"
)

// outputTruncation is how the SDK cuts a command's output and the
// observation's text: maybe_truncate to MAX_CMD_OUTPUT_SIZE.
var outputTruncation = engine.Truncation{Limit: MaxOutput, Notice: truncateNotice}

// terminal is an agent's V1 terminal: engine.Shell, worded as
// openhands-tools' TerminalSession in its single-session form.
type terminal struct {
	mu       sync.Mutex // one call at a time, as the SDK's "terminal:session" resource
	shell    *engine.Shell
	noChange time.Duration
	maxWait  time.Duration // 0: none
	python   string
	id       string
}

// TerminalTool is the terminal's name.
const TerminalTool = "terminal"

var _ = declare(Spec[*TerminalArgs]{
	Name:        TerminalTool,
	Description: terminalDescription,
	Schema:      terminalSchema,
	Annotations: Annotations{Title: TerminalTool, DestructiveHint: true, OpenWorldHint: true},
	Card:        CardCommand,
	Parse:       parseTerminalArgs,
	Run: func(ctx context.Context, tb *Toolbox, args *TerminalArgs, progress func(Progress)) (*Observation, error) {
		if progress != nil {
			stop := tb.reportProgress(progress)
			defer stop()
		}
		return tb.term.run(ctx, args)
	},
})

// TerminalArgs is TerminalAction.
type TerminalArgs struct {
	Command string   `json:"command"`
	IsInput bool     `json:"is_input,omitempty"`
	Timeout *float64 `json:"timeout,omitempty"`
	Reset   bool     `json:"reset,omitempty"`
}

// Action is what the command would do.
func (t *TerminalArgs) Action() Action {
	cmd := pytext.Strip(t.Command)
	switch {
	case t.Reset:
		return Action{Kind: "execute", Title: "reset the terminal and run `" + cmd + "`", NeedsPermission: true}
	case t.IsInput:
		return Action{Kind: "execute", Title: fmt.Sprintf("send %q to the running command", cmd), NeedsPermission: true}
	case cmd == "":
		return Action{Kind: "read", Title: "read more output of the running command"}
	default:
		return Action{Kind: "execute", Title: "run `" + cmd + "`", NeedsPermission: true}
	}
}

// Card is empty: a command's card shows its output.
func (t *TerminalArgs) Card() Card { return Card{} }

func parseTerminalArgs(raw json.RawMessage) (*TerminalArgs, error) {
	v, err := checkArguments(TerminalTool, terminalModel, raw)
	if err != nil {
		return nil, err
	}
	t := &TerminalArgs{Command: *v.str("command"), IsInput: v.boolean("is_input"), Reset: v.boolean("reset")}
	if f, ok := v["timeout"].(float64); ok {
		t.Timeout = &f
	}
	return t, nil
}

// terminalModel is TerminalAction's pydantic model.
var terminalModel = actionModel{name: "TerminalAction", fields: []actionField{
	{name: "command", typ: tStr, required: true},
	{name: "is_input", typ: tBool},
	{name: "timeout", typ: tNumber},
	{name: "reset", typ: tBool},
}}

// run is TerminalExecutor.__call__ for one action.
func (t *terminal) run(ctx context.Context, args *TerminalArgs) (*Observation, error) {
	if args.Reset && args.IsInput {
		return errorObservation(resetWithInput), nil
	}
	if !args.IsInput {
		if kind := literalKind(args.Command); kind != "" {
			return errorObservation(literalHint(kind, args.Command)), nil
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !args.Reset {
		o, err := t.execute(ctx, args)
		if err != nil {
			return nil, err
		}
		return o.observation(), nil
	}
	if err := t.shell.Reset(ctx); err != nil {
		return nil, err
	}
	if pytext.Strip(args.Command) == "" {
		return textObservation(resetText), nil
	}
	obs, err := t.execute(ctx, &TerminalArgs{Command: args.Command, Timeout: args.Timeout})
	if err != nil {
		return nil, err
	}
	obs.body = resetText + "\n\n" + obs.body
	return obs.observation(), nil
}

// execute is TerminalSession.execute.
func (t *terminal) execute(ctx context.Context, args *TerminalArgs) (*terminalObservation, error) {
	command := pytext.Strip(args.Command)
	if msg := foregroundRejection(command, args.IsInput, args.Timeout); msg != "" {
		return &terminalObservation{body: msg, isError: true, exitCode: -1}, nil
	}
	req := engine.Request{Command: command, IsInput: args.IsInput}
	if args.Timeout != nil {
		// A command with a timeout is blocking: no soft timeout.
		// pydantic lets "inf" through: a wait without end.
		if ns := *args.Timeout * float64(time.Second); ns >= math.MaxInt64 {
			req.Timeout = math.MaxInt64
		} else {
			req.Timeout = max(time.Duration(ns), time.Nanosecond)
		}
	} else {
		req.NoOutputTimeout = t.noChange
	}
	if t.maxWait > 0 && (req.Timeout == 0 || req.Timeout > t.maxWait) {
		// The caller gives up at some point (OpenHands' MCP client after
		// 300 s): answer before, as if the agent had asked for this
		// timeout, and let the command run on.
		req.Timeout = t.maxWait
		s := t.maxWait.Seconds()
		args = &TerminalArgs{Command: args.Command, IsInput: args.IsInput, Timeout: &s, Reset: args.Reset}
	}
	if args.IsInput {
		req.Keys = keyBytes(command)
	}
	req.Truncation = outputTruncation
	res, err := t.shell.Execute(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return &terminalObservation{body: err.Error(), isError: true, exitCode: -1}, nil
	}
	return t.word(res, args), nil
}

// terminalObservation is TerminalObservation: the text and the metadata
// that to_llm_content appends.
type terminalObservation struct {
	prefix, body, suffix string
	workingDir, python   string
	exitCode             int // metadata.exit_code: -1 prints no exit line
	isError              bool
	info                 *CommandInfo
}

// observation is TerminalObservation.to_llm_content.
func (o *terminalObservation) observation() *Observation {
	text := o.prefix + o.body + o.suffix
	if o.workingDir != "" {
		text += "\n[Current working directory: " + o.workingDir + "]"
	}
	if o.python != "" {
		text += "\n[Python interpreter: " + o.python + "]"
	}
	if o.exitCode != -1 {
		text += "\n[Command finished with exit code " + strconv.Itoa(o.exitCode) + "]"
	}
	// OpenHands cuts the output, then the whole text with its notes, by
	// the same rule.
	text, _ = outputTruncation.Cut(text)
	return &Observation{
		Content: []Content{{Text: text}},
		IsError: o.isError,
		Command: o.info,
	}
}

// word turns a Shell result into TerminalSession's observation for it.
func (t *terminal) word(res *engine.Record, args *TerminalArgs) *terminalObservation {
	o := &terminalObservation{body: res.Output, exitCode: -1}
	switch res.Outcome {
	case engine.NoPreviousLogs:
		return &terminalObservation{body: noPreviousLogs, isError: true, exitCode: -1}
	case engine.NoPreviousInput:
		return &terminalObservation{body: noPreviousInput, isError: true, exitCode: -1}
	case engine.MultipleCommands:
		var b strings.Builder
		b.WriteString("Cannot execute multiple commands at once.\n")
		b.WriteString("Please run each command separately OR chain them into a single command via && or ;\n")
		b.WriteString("Provided commands:")
		for i, c := range res.Commands {
			fmt.Fprintf(&b, "\n(%d) %s", i+1, c)
		}
		return &terminalObservation{body: b.String(), isError: true, exitCode: -1}
	case engine.NotExecuted:
		o.isError = true
		o.suffix = "\n[Your command \"" + res.Command + "\" is NOT executed. The previous command is still running - " +
			"You CANNOT send new commands until the previous command is completed. By setting `is_input` to `true`, " +
			"you can interact with the current process: " + TimeoutMessage + "]"
	case engine.Completed:
		o.exitCode, o.workingDir, o.python = res.ExitCode, res.Cwd, t.python
		o.suffix = "\n[The command completed with exit code " + strconv.Itoa(res.ExitCode) + ".]"
		if engine.IsSpecialKey(res.Command) {
			o.suffix = "\n[The command completed with exit code " + strconv.Itoa(res.ExitCode) + ". CTRL+" +
				strings.ToUpper(string([]rune(res.Command)[2])) + " was sent.]"
		}
	case engine.NoChange:
		o.suffix = "\n[The command has no new output after " + pySeconds(t.noChange) + " seconds. " + TimeoutMessage + "]"
	case engine.HardTimeout:
		o.suffix = "\n[The command timed out after " + pytext.Float(*args.Timeout) + " seconds. " + TimeoutMessage + "]"
	}
	if res.Continued && res.Outcome != engine.Completed {
		o.prefix = continuePrefix
	}
	if res.ShellRestarted {
		// The shell had exited and this ran in a new one: what
		// TerminalExecutor says when it finds its session closed and
		// replaces it (docs/openhands-compat.md).
		o.body = resetText + "\n\n" + o.body
	}
	o.info = &CommandInfo{TerminalID: res.TerminalID, Command: res.Command, Output: res.Output, Truncated: res.Truncated,
		ExitCode: res.ExitCode, Cwd: res.Cwd, Running: res.Running()}
	return o
}

// pySeconds formats the soft timeout as OpenHands prints its integer
// setting.
func pySeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10)
	}
	return pytext.Float(d.Seconds())
}

// keyBytes is what the terminal backends type for is_input text: a named
// key (ENTER, TAB, BS, ESC, the arrows, HOME, END, PGUP, PGDN), a Ctrl
// combination (C-x, CTRL-x or CTRL+x, any case), or the text and Enter.
func keyBytes(text string) []byte {
	upper := strings.ToUpper(pytext.Strip(text))
	if k, ok := namedKeys[upper]; ok {
		return []byte(k)
	}
	for _, p := range []string{"C-", "CTRL-", "CTRL+"} {
		if k, ok := strings.CutPrefix(upper, p); ok && len(k) == 1 && k[0] >= 'A' && k[0] <= 'Z' {
			return []byte{k[0] & 0x1f}
		}
	}
	if strings.HasSuffix(text, "\n") {
		return []byte(text)
	}
	return []byte(text + "\r")
}

var namedKeys = map[string]string{
	"ENTER": "\r", "TAB": "\t", "BS": "\x7f", "ESC": "\x1b",
	"UP": "\x1b[A", "DOWN": "\x1b[B", "RIGHT": "\x1b[C", "LEFT": "\x1b[D",
	"HOME": "\x1b[H", "END": "\x1b[F", "PGUP": "\x1b[5~", "PGDN": "\x1b[6~",
}

// literalKind is looks_like_python_literal_argument: a command that is a
// Python or JSON list or dict rather than a shell command. Bash's "[ -f x ]",
// "[[ ... ]]" and "{ ls; }" have a blank after the bracket.
func literalKind(command string) string {
	s := []rune(pytext.LStrip(command))
	if len(s) < 2 {
		return ""
	}
	a, b := s[0], s[1]
	switch {
	case a == '[' && (b == '{' || b == '"' || b == '\''):
		return "list literal"
	case a == '[' && b == '[':
		if len(s) >= 3 && s[2] != ' ' && s[2] != '\t' {
			return "nested list literal"
		}
	case a == '{' && (b == '"' || b == '\''):
		return "dict literal"
	}
	return ""
}

// literalHint is _LITERAL_ARG_HINT_TEMPLATE.
func literalHint(kind, command string) string {
	head := pytext.Head(pytext.LStrip(command), 60)
	return "[Tool-argument error] The `command` argument looks like a Python/JSON " + kind +
		", not a shell command. It starts with: " + pytext.Repr(head) + "\n\n" +
		"The `terminal` tool runs exactly ONE shell command at a time. To pass structured data or multi-line code:\n" +
		"  - Write a script first with `file_editor` (command=\"create\", path=\"/tmp/run.py\", ...), then invoke it: `python /tmp/run.py`.\n" +
		"  - Or use a heredoc inline, e.g.:\n" +
		"        python - <<'EOF'\n" +
		"        DATABASES = {'default': {...}}\n" +
		"        # your code here\n" +
		"        EOF\n\n" +
		"Do not put a Python list/dict literal into the `command` field; the shell cannot interpret it."
}

// foregroundRejection is foreground_timeout_rejection_for: where the
// runtime is cleaned up after OH_RUNTIME_IDLE_TIMEOUT_SECONDS of idleness,
// a foreground timeout above 90% of it is refused.
func foregroundRejection(command string, isInput bool, timeout *float64) string {
	if isInput || pytext.Strip(command) == "" || timeout == nil {
		return ""
	}
	raw := strings.TrimSpace(os.Getenv(idleTimeoutEnv))
	idle, err := strconv.ParseFloat(raw, 64)
	if raw == "" || err != nil || idle <= 0 {
		return ""
	}
	limit := idle * 0.9
	if *timeout <= limit {
		return ""
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }
	return "Refusing to run foreground terminal command with timeout=" + g(*timeout) + "s.\n\n" +
		"This runtime is subject to idle cleanup after " + g(idle) + "s. Foreground terminal commands are capped at 90% " +
		"of that threshold, currently " + g(limit) + "s, so commands can return control before the runtime is considered idle.\n\n" +
		"For long-running work, use a shorter timeout, omit the timeout to use the terminal soft-timeout/polling flow, " +
		"or start the command in the background and poll its log file."
}

const terminalSchema = `{
  "type": "object",
  "description": "Schema for terminal command execution.",
  "properties": {
    "command": {
      "type": "string",
      "description": "The shell command to execute. Can be empty string to view additional logs when the previous exit code is ` + "`-1`" + `. Can be a special key name when ` + "`is_input`" + ` is True: ` + "`C-c`" + ` (Ctrl+C), ` + "`C-d`" + ` (Ctrl+D/EOF), ` + "`C-z`" + ` (Ctrl+Z), or any ` + "`C-<letter>`" + ` for Ctrl sequences; navigation keys ` + "`UP`, `DOWN`, `LEFT`, `RIGHT`, `HOME`, `END`, `PGUP`, `PGDN`" + `; and ` + "`TAB`, `ESC`, `BS`" + ` (Backspace), ` + "`ENTER`" + `. You can only execute one command at a time. Use the platform-appropriate shell syntax described in the tool description when chaining commands."
    },
    "is_input": {
      "type": "boolean",
      "description": "If True, the command is an input to the running process. If False, the command is executed in the terminal session. Default is False."
    },
    "timeout": {
      "type": "number",
      "description": "Optional. Sets a maximum time limit (in seconds) for running the command. If the command takes longer than this limit, you’ll be asked whether to continue or stop it. If you don’t set a value, the command will instead pause and ask for confirmation when it produces no new output for 30 seconds. Use a higher value if the command is expected to take a long time (like installation or testing), or if it has a known fixed duration (like sleep)."
    },
    "reset": {
      "type": "boolean",
      "description": "If True, reset the terminal by creating a new session. Use this only when the terminal becomes unresponsive. Note that all previously set environment variables and session state will be lost after reset. Cannot be used with is_input=True."
    }
  },
  "required": ["command"]
}`

const terminalDescription = "Run a shell command in a persistent terminal session (the user can watch it live).\n" +
	"\n" +
	"### Running commands\n" +
	"* One command at a time. To run several in sequence, chain them with `&&` or `;`.\n" +
	"* The session persists: environment variables, virtual environments and the working directory carry over to later commands.\n" +
	"* Soft timeout: a command that prints nothing new for 30 seconds returns with exit code `-1` and keeps running, unless you set `timeout`.\n" +
	"* Do NOT use `set -e`, `set -eu` or `set -euo pipefail`: they can end the session.\n" +
	"\n" +
	"### Long-running commands\n" +
	"* Run commands that never end (servers, watchers) in the background with their output redirected to a file, e.g. `python3 app.py > server.log 2>&1 &`.\n" +
	"* Give long commands a `timeout`.\n" +
	"* Exit code `-1` means the command is still running. With `is_input=true` you can then:\n" +
	"  - send an empty `command` to see more of its output;\n" +
	"  - send text to its standard input;\n" +
	"  - send `C-c`, `C-d`, `C-z` or any other `C-<letter>` key, such as `C-a`, `C-e` or `C-l`;\n" +
	"  - send `UP`, `DOWN`, `LEFT`, `RIGHT`, `TAB`, `ESC`, `BS`, `HOME`, `END`, `PGUP` or `PGDN`.\n" +
	"\n" +
	"### Good practice\n" +
	"* Check that a parent directory exists before creating files or directories in it.\n" +
	"* Prefer absolute paths to frequent `cd`.\n" +
	"\n" +
	"### Output\n" +
	"* Very long output is shortened before it is returned.\n" +
	"\n" +
	"### Reset\n" +
	"* `reset=true` starts a fresh session when the terminal stops responding.\n" +
	"* A reset loses environment variables, working directory changes and running processes."
