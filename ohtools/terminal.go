package ohtools

import (
	"context"
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

// terminalArgs is TerminalAction.
type terminalArgs struct {
	command string
	isInput bool
	timeout *float64
	reset   bool
}

func parseTerminalArgs(raw []byte) (*terminalArgs, error) {
	v, err := checkArguments(TerminalTool, terminalModel, raw)
	if err != nil {
		return nil, err
	}
	t := &terminalArgs{command: *v.str("command"), isInput: v.boolean("is_input"), reset: v.boolean("reset")}
	if f, ok := v["timeout"].(float64); ok {
		t.timeout = &f
	}
	return t, nil
}

// run is TerminalExecutor.__call__ for one action.
func (t *terminal) run(ctx context.Context, args *terminalArgs) (*Observation, error) {
	if args.reset && args.isInput {
		return errorObservation(resetWithInput), nil
	}
	if !args.isInput {
		if kind := literalKind(args.command); kind != "" {
			return errorObservation(literalHint(kind, args.command)), nil
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !args.reset {
		o, err := t.execute(ctx, args)
		if err != nil {
			return nil, err
		}
		return o.observation(), nil
	}
	if err := t.shell.Reset(ctx); err != nil {
		return nil, err
	}
	if pytext.Strip(args.command) == "" {
		return textObservation(resetText), nil
	}
	obs, err := t.execute(ctx, &terminalArgs{command: args.command, timeout: args.timeout})
	if err != nil {
		return nil, err
	}
	obs.body = resetText + "\n\n" + obs.body
	return obs.observation(), nil
}

// execute is TerminalSession.execute.
func (t *terminal) execute(ctx context.Context, args *terminalArgs) (*terminalObservation, error) {
	command := pytext.Strip(args.command)
	if msg := foregroundRejection(command, args.isInput, args.timeout); msg != "" {
		return &terminalObservation{body: msg, isError: true, exitCode: -1}, nil
	}
	req := engine.Request{Command: command, IsInput: args.isInput}
	if args.timeout != nil {
		// A command with a timeout is blocking: no soft timeout.
		// pydantic lets "inf" through: a wait without end.
		if ns := *args.timeout * float64(time.Second); ns >= math.MaxInt64 {
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
		args = &terminalArgs{command: args.command, isInput: args.isInput, timeout: &s, reset: args.reset}
	}
	if args.isInput {
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
func (t *terminal) word(res *engine.Record, args *terminalArgs) *terminalObservation {
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
		o.suffix = "\n[The command timed out after " + pytext.Float(*args.timeout) + " seconds. " + TimeoutMessage + "]"
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
	o.info = res
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
