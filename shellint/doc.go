// Package shellint runs shell commands for an AI agent in persistent,
// shell-integration-aware PTY terminals.
//
// It owns everything between "run this command text" and "here is its
// output, exit code and working directory": spawning bash or zsh under a
// pseudo-terminal with an injected integration script, the OSC 633 marker
// protocol (nonce- and sequence-checked so command output cannot forge the
// end of a command; the nonce reaches the shell on a file descriptor, never
// in an environment a child could read), the line discipline each command
// line finds (the shell's own, whatever a program left behind),
// busy/idle tracking cross-checked with the terminal's
// foreground process group, interrupt escalation (Ctrl-C, SIGTERM,
// SIGKILL), soft and hard timeouts, bounded per-command output, a live raw
// byte stream for mirroring, the fallbacks used when a user's rc file
// defeats the integration, and a pool of numbered terminals.
//
// It must not know about JSON-RPC, the editor, or the agent's wire formats:
// The session (package session) maps Pool and Terminal calls to what faces ask and the typed
// errors here (all with a stable Kind) to protocol error codes, and the
// OpenHands layer builds its bash semantics (soft timeout messages, is_input,
// C-c keys) on top of Run, Output, SendInput and Interrupt.
//
// Terminals run on Unix only: they rely on creack/pty, process groups and
// sessions (and /proc, where there is one, to find a session's leftovers).
// The OS-specific part is proc_unix.go; elsewhere proc_notunix.go stands
// in, and every call that would start a terminal answers
// *UnsupportedPlatformError (docs/platforms.md).
package shellint
