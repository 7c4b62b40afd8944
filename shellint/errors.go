package shellint

import (
	"fmt"
	"runtime"
	"strings"
)

// Every error below has a stable Kind so handlers/ can map it to a protocol
// code without string matching, and a message that names the thing and the
// way out, because the message often reaches the agent verbatim.

// ShellNotFoundError reports that the requested shell is not installed.
type ShellNotFoundError struct {
	Shell string
}

func (e *ShellNotFoundError) Error() string {
	return fmt.Sprintf("shell %q is not installed or not on PATH; use shell \"bash\" (or \"auto\") or install %s", e.Shell, e.Shell)
}

// Kind returns "shell_not_found".
func (e *ShellNotFoundError) Kind() string { return "shell_not_found" }

// InvalidOptionError reports an option value that cannot be used.
type InvalidOptionError struct {
	Option string
	Value  string
	Reason string
}

func (e *InvalidOptionError) Error() string {
	return fmt.Sprintf("invalid terminal option %s=%q: %s", e.Option, e.Value, e.Reason)
}

// Kind returns "invalid_option".
func (e *InvalidOptionError) Kind() string { return "invalid_option" }

// StartError reports that the shell process could not be spawned at all.
type StartError struct {
	Shell string
	Err   error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("could not start shell %s: %v; check that it is executable and the working directory exists", e.Shell, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Kind returns "shell_start_failed".
func (e *StartError) Kind() string { return "shell_start_failed" }

// BusyError reports that a terminal already runs a command (or is reserved
// for one), so another command cannot be submitted to it.
type BusyError struct {
	TerminalID string
	Seq        int
	Command    string
	foreground int // set when only the PTY's foreground group says busy
}

func (e *BusyError) Error() string {
	if e.Command == "" {
		return fmt.Sprintf("terminal %s is busy; wait for it, interrupt it, or run in another terminal", orUnnamed(e.TerminalID))
	}
	return fmt.Sprintf("terminal %s is still running %q (seq %d); poll it with terminal/output, interrupt it, or run in another terminal",
		orUnnamed(e.TerminalID), clip(e.Command, 80), e.Seq)
}

// Kind returns "terminal_busy".
func (e *BusyError) Kind() string { return "terminal_busy" }

// DeadError reports that the terminal's shell has exited or was closed.
type DeadError struct {
	TerminalID string
	ExitCode   int
}

func (e *DeadError) Error() string {
	return fmt.Sprintf("terminal %s has exited (shell status %d); close it and open a new one, or run without a terminal id",
		orUnnamed(e.TerminalID), e.ExitCode)
}

// Kind returns "terminal_dead".
func (e *DeadError) Kind() string { return "terminal_dead" }

// NotRunningError reports an interrupt, kill or input for a terminal that
// has no running command.
type NotRunningError struct {
	TerminalID string
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("terminal %s has no running command; run a command first", orUnnamed(e.TerminalID))
}

// Kind returns "no_running_command".
func (e *NotRunningError) Kind() string { return "no_running_command" }

// UnknownCommandError reports a poll for a sequence number the terminal
// does not remember (never issued, or older than the last few commands).
type UnknownCommandError struct {
	TerminalID string
	Seq        int
}

func (e *UnknownCommandError) Error() string {
	return fmt.Sprintf("terminal %s has no command with seq %d; use the seq returned by terminal/run (only the last %d are kept)",
		orUnnamed(e.TerminalID), e.Seq, keptCommands)
}

// Kind returns "unknown_command".
func (e *UnknownCommandError) Kind() string { return "unknown_command" }

// InputBlockedError reports that bytes could not be written to the terminal
// because nothing reads them (the terminal's input queue is full).
type InputBlockedError struct {
	TerminalID string
	Written    int
}

func (e *InputBlockedError) Error() string {
	return fmt.Sprintf("terminal %s is not reading its input (%d bytes written before it blocked); interrupt the running program or send less input",
		orUnnamed(e.TerminalID), e.Written)
}

// Kind returns "input_blocked".
func (e *InputBlockedError) Kind() string { return "input_blocked" }

// NotFoundError reports an unknown terminal id.
type NotFoundError struct {
	TerminalID string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no terminal with id %q; use terminal/list to see open terminals or terminal/open to create one", e.TerminalID)
}

// Kind returns "terminal_not_found".
func (e *NotFoundError) Kind() string { return "terminal_not_found" }

// LimitError reports that every terminal is busy and the pool may not open
// another one. Terminals lists what runs where so the caller can choose one
// to wait for or interrupt.
type LimitError struct {
	Limit     int
	Terminals []Info
}

func (e *LimitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "all %d terminals are busy (", e.Limit)
	for i, t := range e.Terminals {
		if i > 0 {
			b.WriteString("; ")
		}
		if t.Command != "" {
			fmt.Fprintf(&b, "%s runs %q in %s", t.ID, clip(t.Command, 60), t.Cwd)
		} else {
			fmt.Fprintf(&b, "%s is %s in %s", t.ID, t.State, t.Cwd)
		}
	}
	b.WriteString("); wait for one to finish, interrupt one, or close one")
	return b.String()
}

// Kind returns "terminal_limit".
func (e *LimitError) Kind() string { return "terminal_limit" }

// PoolClosedError reports use of a pool after Close.
type PoolClosedError struct{}

func (e *PoolClosedError) Error() string {
	return "the terminal pool is shut down; no terminals can be opened or used"
}

// Kind returns "pool_closed".
func (e *PoolClosedError) Kind() string { return "pool_closed" }

// UnsupportedPlatformError is what every call that would start a terminal
// answers where terminals cannot run yet (Windows): GOOS names the
// platform. Files and edits do not go through this package and work there.
type UnsupportedPlatformError struct {
	GOOS string
}

func (e *UnsupportedPlatformError) Error() string {
	name := e.GOOS
	if name == "windows" {
		name = "Windows"
	}
	return fmt.Sprintf("terminals are not supported on %s yet; files and edits work, and commands need Linux or macOS for now", name)
}

// Kind returns "terminals_unsupported".
func (e *UnsupportedPlatformError) Kind() string { return "terminals_unsupported" }

// platformError is *UnsupportedPlatformError where terminals cannot run
// (terminalsSupported, in proc_unix.go and proc_notunix.go), nil where
// they can.
func platformError() error {
	if terminalsSupported {
		return nil
	}
	return &UnsupportedPlatformError{GOOS: runtime.GOOS}
}

func orUnnamed(id string) string {
	if id == "" {
		return "(unnamed)"
	}
	return id
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Data methods give handlers/ the facts behind an error for the protocol's
// error.data, so a client can act without parsing the message.

// Data returns {shell}.
func (e *ShellNotFoundError) Data() map[string]any { return map[string]any{"shell": e.Shell} }

// Data returns {option, value}.
func (e *InvalidOptionError) Data() map[string]any {
	return map[string]any{"option": e.Option, "value": e.Value}
}

// Data returns {terminalId, seq, command} of the command that holds the
// terminal (seq and command are absent when no protocol command does).
func (e *BusyError) Data() map[string]any {
	d := map[string]any{"terminalId": e.TerminalID}
	if e.Command != "" {
		d["command"] = e.Command
	}
	if e.Seq > 0 {
		d["seq"] = e.Seq
	}
	return d
}

// Data returns {terminalId, exitCode} (the shell's status).
func (e *DeadError) Data() map[string]any {
	return map[string]any{"terminalId": e.TerminalID, "exitCode": e.ExitCode}
}

// Data returns {terminalId}.
func (e *NotRunningError) Data() map[string]any { return map[string]any{"terminalId": e.TerminalID} }

// Data returns {terminalId, seq}.
func (e *UnknownCommandError) Data() map[string]any {
	return map[string]any{"terminalId": e.TerminalID, "seq": e.Seq}
}

// Data returns {terminalId, written}.
func (e *InputBlockedError) Data() map[string]any {
	return map[string]any{"terminalId": e.TerminalID, "written": e.Written}
}

// Data returns {goos}.
func (e *UnsupportedPlatformError) Data() map[string]any { return map[string]any{"goos": e.GOOS} }

// Data returns {terminalId}.
func (e *NotFoundError) Data() map[string]any { return map[string]any{"terminalId": e.TerminalID} }

// Data returns {limit, terminals: [{terminalId, state, command?, seq?, cwd}]}:
// what runs where.
func (e *LimitError) Data() map[string]any {
	ts := make([]map[string]any, 0, len(e.Terminals))
	for _, t := range e.Terminals {
		m := map[string]any{"terminalId": t.ID, "state": string(t.State), "cwd": t.Cwd}
		if t.Command != "" {
			m["command"] = t.Command
			m["seq"] = t.Seq
		}
		ts = append(ts, m)
	}
	return map[string]any{"limit": e.Limit, "terminals": ts}
}
