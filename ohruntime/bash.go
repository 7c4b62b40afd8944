package ohruntime

import (
	"context"
	"strings"
	"sync"
	"time"

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

// status is bash.py's prev_status.
type status int

const (
	statusNone status = iota
	statusCompleted
	statusNoChange
	statusHardTimeout
)

// agentShell is bash.py's BashSession on a shellint terminal. Its fields
// other than mu/sess are only touched by the action holding Runtime.turn.
type agentShell struct {
	rt *Runtime

	mu   sync.Mutex
	sess *shellint.Session
	dir  string // last reported cwd

	seq    int    // the command the status refers to
	status status // prev_status
	shown  bool   // prev_output != '': an observation of the running command was returned
	carry  string // output read but not yet returned (a cancelled wait)
}

func (b *agentShell) cwd() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dir
}

func (b *agentShell) close() {
	b.mu.Lock()
	s := b.sess
	b.sess = nil
	b.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// session returns the live agent shell, starting one if needed (the first
// command, or after the shell exited).
func (b *agentShell) session() (*shellint.Session, error) {
	b.mu.Lock()
	s := b.sess
	dir := b.dir
	b.mu.Unlock()
	if s != nil && s.State() != shellint.StateDead {
		return s, nil
	}
	if s != nil {
		s.Close()
	}
	if dir == "" {
		dir = b.rt.root
	}
	s, err := b.rt.startShell(dir, "oh-agent", true)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	select {
	case <-b.rt.closed:
		b.mu.Unlock()
		s.Close()
		return nil, errClosed
	default:
	}
	b.sess = s
	b.dir = s.Cwd()
	b.mu.Unlock()
	b.status, b.shown, b.carry = statusNone, false, ""
	return s, nil
}

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
	return r.bash.execute(ctx, &ra)
}

// isSpecialKey is bash.py's _is_special_key: "C-" and one more character.
func isSpecialKey(cmd string) bool {
	return strings.HasPrefix(cmd, "C-") && len([]rune(cmd)) == 3
}

// controlByte is the byte a terminal sends for Ctrl plus key.
func controlByte(key rune) []byte {
	switch {
	case key >= 'a' && key <= 'z':
		return []byte{byte(key - 'a' + 1)}
	case key >= '@' && key <= '_': // A-Z, @ [ \ ] ^ _
		return []byte{byte(key - '@')}
	case key == '?':
		return []byte{0x7f}
	case key == ' ' || key == '2':
		return []byte{0}
	}
	return []byte(string(key))
}

func (b *agentShell) running() bool {
	return b.status == statusNoChange || b.status == statusHardTimeout
}

// execute is bash.py's BashSession.execute.
func (b *agentShell) execute(ctx context.Context, ra *runArgs) (*Observation, error) {
	cmd := ra.command
	if !b.running() {
		if cmd == "" {
			return cmdObservation("", errNoPreviousLogs, cmdMetadata{ExitCode: -1}, false), nil
		}
		if ra.isInput {
			return cmdObservation("", errNoPreviousInput, cmdMetadata{ExitCode: -1}, false), nil
		}
	}
	if parts := splitCommands(cmd); len(parts) > 1 {
		return errorObservation(multipleCommandsError(parts)), nil
	}
	if b.running() {
		s, err := b.session()
		if err != nil {
			return errorObservation(err.Error()), nil
		}
		info := s.Info()
		if info.State == shellint.StateRunning && info.Seq == b.seq {
			if cmd != "" && !ra.isInput {
				return b.notExecuted(ctx, s, ra)
			}
			if cmd != "" { // is_input
				data := []byte(cmd + "\r")
				if isSpecialKey(cmd) {
					data = controlByte([]rune(cmd)[2])
				}
				if err := s.SendInput(ctx, data); err != nil {
					return errorObservation(err.Error()), nil
				}
			}
			res, err := s.Output(ctx, b.seq, b.waitOptions(ra))
			return b.observe(ctx, ra, res, err)
		}
		if cmd == "" || ra.isInput {
			// The command finished since the last observation: report
			// its end. (OpenHands would type is_input text at the prompt.)
			res, err := s.Output(ctx, b.seq, shellint.RunOptions{})
			return b.observe(ctx, &runArgs{command: "", hidden: ra.hidden}, res, err)
		}
	}
	if isSpecialKey(cmd) {
		// A control key with nothing running goes to bash's prompt.
		return b.keyAtPrompt(cmd, ra.hidden), nil
	}
	s, err := b.session()
	if err != nil {
		return errorObservation(err.Error()), nil
	}
	res, err := s.Run(ctx, cmd, b.waitOptions(ra))
	if res != nil {
		b.seq = res.Seq
	}
	b.shown, b.carry = false, ""
	return b.observe(ctx, ra, res, err)
}

func (b *agentShell) waitOptions(ra *runArgs) shellint.RunOptions {
	var o shellint.RunOptions
	if !ra.blocking {
		o.NoOutputTimeout = b.rt.opts.NoChangeTimeout
	}
	// OpenHands' hard timeout does not stop the command.
	o.Yield = ra.timeout
	return o
}

// notExecuted answers a new command sent while one still runs.
func (b *agentShell) notExecuted(ctx context.Context, s *shellint.Session, ra *runArgs) (*Observation, error) {
	res, err := s.Output(ctx, b.seq, shellint.RunOptions{Yield: time.Nanosecond})
	if err != nil && res == nil {
		return nil, err
	}
	text := b.take(res)
	md := cmdMetadata{ExitCode: -1}
	if b.shown {
		md.Prefix = ContinuePrefix
	}
	md.Suffix = "\n[Your command \"" + ra.command + "\" is NOT executed. The previous command is still running - " +
		"You CANNOT send new commands until the previous command is completed. By setting `is_input` to `true`, " +
		"you can interact with the current process: " + TimeoutMessageTemplate + "]"
	b.shown = true
	return cmdObservation(ra.command, commandOutput(text, ra.command), md, ra.hidden), nil
}

// take returns the carried output plus what res adds, as the pane shows it.
func (b *agentShell) take(res *shellint.Result) string {
	text := b.carry
	b.carry = ""
	if res != nil {
		text += res.Output
	}
	return paneText(text)
}

// observe turns a shellint result into bash.py's observation for it.
func (b *agentShell) observe(ctx context.Context, ra *runArgs, res *shellint.Result, err error) (*Observation, error) {
	if err != nil {
		if res != nil && ctx.Err() != nil {
			// Cancelled: the command keeps running; keep its output for
			// the next observation and let an empty command poll it.
			b.carry += res.Output
			if res.Running && !b.running() {
				b.status = statusNoChange
			}
			return nil, err
		}
		if res == nil {
			return errorObservation(err.Error()), nil
		}
	}
	cwd := res.Cwd
	if cwd != "" {
		b.mu.Lock()
		b.dir = cwd
		b.mu.Unlock()
	}
	text := b.take(res)
	if !res.Running {
		code := -1
		if res.ExitCode != nil {
			code = *res.ExitCode
		}
		id := b.rt.ident
		md := cmdMetadata{
			ExitCode: code, Username: &id.username, Hostname: &id.hostname,
			WorkingDir: &cwd, PyInterpreterPath: &id.python,
		}
		md.Suffix = "\n[The command completed with exit code " + itoa(code) + ".]"
		if isSpecialKey(ra.command) {
			md.Suffix = "\n[The command completed with exit code " + itoa(code) + ". CTRL+" +
				strings.ToUpper(string([]rune(ra.command)[2])) + " was sent.]"
		}
		b.status, b.shown = statusCompleted, false
		return cmdObservation(ra.command, commandOutput(text, ra.command), md, ra.hidden), nil
	}
	md := cmdMetadata{ExitCode: -1}
	if b.shown {
		md.Prefix = ContinuePrefix
	}
	if res.Reason == "yield" && ra.timeout > 0 {
		md.Suffix = "\n[The command timed out after " + pytext.Float(ra.timeoutS) + " seconds. " + TimeoutMessageTemplate + "]"
		b.status = statusHardTimeout
	} else {
		md.Suffix = "\n[The command has no new output after " + pySeconds(b.rt.opts.NoChangeTimeout) + " seconds. " +
			TimeoutMessageTemplate + "]"
		b.status = statusNoChange
	}
	b.shown = true
	// bash.py builds timeout observations without the action's hidden flag.
	return cmdObservation(ra.command, commandOutput(text, ra.command), md, false), nil
}

// keyAtPrompt answers a control key sent when no command runs: bash's
// prompt echoes ^C and sets $? to 130 for C-c; other keys are not sent
// (C-d would end the agent shell).
func (b *agentShell) keyAtPrompt(cmd string, hidden bool) *Observation {
	key := strings.ToUpper(string([]rune(cmd)[2]))
	code, out := 0, ""
	if key == "C" {
		code, out = 130, "^C"
	}
	cwd := b.rt.cwd()
	id := b.rt.ident
	md := cmdMetadata{
		ExitCode: code, Username: &id.username, Hostname: &id.hostname,
		WorkingDir: &cwd, PyInterpreterPath: &id.python,
		Suffix: "\n[The command completed with exit code " + itoa(code) + ". CTRL+" + key + " was sent.]",
	}
	b.status, b.shown = statusCompleted, false
	return cmdObservation(cmd, out, md, hidden)
}

// runStatic runs an is_static command in a fresh shell in cwd, as
// action_execution_server does, and closes that shell afterwards (a
// command still running then is killed).
func (r *Runtime) runStatic(ctx context.Context, ra *runArgs) (*Observation, error) {
	if parts := splitCommands(ra.command); len(parts) > 1 {
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
	defer s.Close()
	one := &agentShell{rt: r, sess: s, dir: dir}
	res, err := s.Run(ctx, ra.command, one.waitOptions(ra))
	return one.observe(ctx, ra, res, err)
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
