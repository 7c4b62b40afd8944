package ohactions

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/shellint"
)

// TimeoutMessageTemplate is OpenHands' TIMEOUT_MESSAGE_TEMPLATE.
const TimeoutMessageTemplate = `You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending your new command, or use the timeout parameter in execute_bash for future commands.`

// ContinuePrefix marks an observation that continues an earlier one.
const ContinuePrefix = "[Below is the output of the previous command.]\n"

const (
	errNoPreviousLogs  = "ERROR: No previous running command to retrieve logs from."
	errNoPreviousInput = "ERROR: No previous running command to interact with."
)

// runArgs are CmdRunAction's arguments this runtime uses.
type runArgs struct {
	command  string // stripped
	isInput  bool
	blocking bool
	isStatic bool
	hidden   bool
	cwd      *string
	timeout  time.Duration // hard; 0 = none
	timeoutS float64
}

func (r *Runtime) run(ctx context.Context, a *Action) (*Observation, error) {
	var ra runArgs
	cmd, err := a.str("command", "")
	if err != nil {
		return nil, err
	}
	ra.command = pytext.Strip(cmd)
	if ra.isInput, err = a.boolean("is_input"); err != nil {
		return nil, err
	}
	if ra.blocking, err = a.boolean("blocking"); err != nil {
		return nil, err
	}
	if ra.isStatic, err = a.boolean("is_static"); err != nil {
		return nil, err
	}
	if ra.hidden, err = a.boolean("hidden"); err != nil {
		return nil, err
	}
	if ra.cwd, err = a.optStr("cwd"); err != nil {
		return nil, err
	}
	if a.Timeout != nil && *a.Timeout > 0 {
		ra.timeoutS = *a.Timeout
		ra.timeout = time.Duration(*a.Timeout * float64(time.Second))
	}
	if obs, ok := r.gitHelper(ctx, &ra); ok {
		return obs, nil
	}
	if ra.isStatic {
		return r.runStatic(ctx, &ra)
	}
	return r.execute(ctx, r.bash, &ra)
}

// v0Request is the Shell request for a run action.
func (r *Runtime) v0Request(ra *runArgs) engine.Request {
	req := engine.Request{Command: ra.command, IsInput: ra.isInput, Timeout: ra.timeout}
	if !ra.hidden {
		req.Truncation = outputTruncation
	}
	if !ra.blocking {
		req.NoOutputTimeout = r.opts.NoChangeTimeout
	}
	if ra.isInput {
		req.Keys = []byte(ra.command + "\r")
		if engine.IsSpecialKey(ra.command) {
			req.Keys = engine.ControlByte([]rune(ra.command)[2])
		}
	}
	return req
}

// execute is bash.py's BashSession.execute on the agent's Shell.
func (r *Runtime) execute(ctx context.Context, sh *engine.Shell, ra *runArgs) (*Observation, error) {
	res, err := sh.Execute(ctx, r.v0Request(ra))
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return errorObservation(err.Error()), nil
	}
	return r.v0Observation(ra, res), nil
}

// v0Observation words a Shell record as bash.py does.
func (r *Runtime) v0Observation(ra *runArgs, res *engine.Record) *Observation {
	obs := r.word(ra, res)
	if res.ShellRestarted {
		// bash.py's tmux session never came back from an exit; the
		// bridge's shell does, and says so in V1's words for it
		// (docs/openhands-compat.md).
		obs.Content = ShellResetText + "\n\n" + obs.Content
	}
	return obs
}

// ShellResetText is what an observation says first when its command ran
// in a new shell because the last one had exited: V1's TerminalExecutor
// text for a session it found closed and replaced.
const ShellResetText = "Terminal session has been reset. All previous environment variables and session state have been cleared."

func (r *Runtime) word(ra *runArgs, res *engine.Record) *Observation {
	id := r.ident
	switch res.Outcome {
	case engine.NoPreviousLogs:
		return cmdObservation("", errNoPreviousLogs, cmdMetadata{ExitCode: -1}, false)
	case engine.NoPreviousInput:
		return cmdObservation("", errNoPreviousInput, cmdMetadata{ExitCode: -1}, false)
	case engine.MultipleCommands:
		return errorObservation(multipleCommandsError(res.Commands))
	case engine.NotExecuted:
		md := cmdMetadata{ExitCode: -1}
		if res.Continued {
			md.Prefix = ContinuePrefix
		}
		md.Suffix = "\n[Your command \"" + ra.command + "\" is NOT executed. The previous command is still running - " +
			"You CANNOT send new commands until the previous command is completed. By setting `is_input` to `true`, " +
			"you can interact with the current process: " + TimeoutMessageTemplate + "]"
		return cmdObservation(ra.command, res.Output, md, ra.hidden)
	case engine.Completed:
		cwd := res.Cwd
		md := cmdMetadata{
			ExitCode: res.ExitCode, Username: &id.username, Hostname: &id.hostname,
			WorkingDir: &cwd, PyInterpreterPath: &id.python,
		}
		md.Suffix = "\n[The command completed with exit code " + itoa(res.ExitCode) + ".]"
		if engine.IsSpecialKey(res.Command) {
			md.Suffix = "\n[The command completed with exit code " + itoa(res.ExitCode) + ". CTRL+" +
				strings.ToUpper(string([]rune(res.Command)[2])) + " was sent.]"
		}
		return cmdObservation(res.Command, res.Output, md, ra.hidden)
	}
	md := cmdMetadata{ExitCode: -1}
	if res.Continued {
		md.Prefix = ContinuePrefix
	}
	if res.Outcome == engine.HardTimeout {
		md.Suffix = "\n[The command timed out after " + pytext.Float(ra.timeoutS) + " seconds. " + TimeoutMessageTemplate + "]"
	} else {
		md.Suffix = "\n[The command has no new output after " + pySeconds(r.opts.NoChangeTimeout) + " seconds. " +
			TimeoutMessageTemplate + "]"
	}
	// bash.py builds timeout observations without the action's hidden
	// flag, so their output is cut even for a hidden action, whose request
	// asked the engine for none.
	out := res.Output
	if ra.hidden {
		out = cut(out, false)
	}
	return cmdObservation(res.Command, out, md, false)
}

// runStatic runs an is_static command in a fresh shell in cwd, as
// action_execution_server does, and closes that shell afterwards (a
// command still running then is killed).
func (r *Runtime) runStatic(ctx context.Context, ra *runArgs) (*Observation, error) {
	if parts := engine.SplitCommands(ra.command); len(parts) > 1 {
		return errorObservation(multipleCommandsError(parts)), nil
	}
	dir := r.root
	if ra.cwd != nil && *ra.cwd != "" {
		dir = *ra.cwd
	}
	if ra.command == "" {
		return cmdObservation("", errNoPreviousLogs, cmdMetadata{ExitCode: -1}, false), nil
	}
	s, err := r.startShell(dir, "oh-static", false)
	if err != nil {
		return errorObservation(err.Error()), nil
	}
	one := engine.New(engine.Options{Dir: dir, Start: func(string) (*shellint.Terminal, error) { return s, nil }})
	defer one.Close()
	return r.execute(ctx, one, ra)
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// multipleCommandsError is bash.py's ErrorObservation text.
func multipleCommandsError(cmds []string) string {
	var b strings.Builder
	b.WriteString("ERROR: Cannot execute multiple commands at once.\n")
	b.WriteString("Please run each command separately OR chain them into a single command via && or ;\n")
	b.WriteString("Provided commands:\n")
	for i, c := range cmds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("(")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(") ")
		b.WriteString(c)
	}
	return b.String()
}
