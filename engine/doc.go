// Package engine owns an agent's command from submission to result: one
// request at a time in the agent's shell, in arrival order; a soft timeout
// (no new output) and a hard one that return while the command keeps
// running; an empty command that polls the running one; input and control
// keys sent to it; interrupt; a new command refused while another runs;
// and cancel, which means stop: a request whose caller gives up stops its
// command before the next request runs (one that gives up while the shell
// starts submits nothing).
//
// Both of OpenHands' dialects run on it: V1's terminal tool (package
// ohtools) and V0's run action (package ohactions). Each words the
// outcomes its own way; the engine reports each request as one Record,
// which every face renders: the agent's text through a dialect, and a
// command's card (its Output is what the agent received). A record's
// output is cut once, here, by the request's Truncation, the one policy
// for output too long for the agent.
//
// A Shell's states and what moves it between them:
//
//	idle          no command of the agent's runs (statusNone,
//	              statusCompleted). A command starts it: running while the
//	              request waits; back to idle when it ends in time.
//	running       a command runs and its last result said so: a soft or
//	              hard timeout returned while it goes on (statusNoChange,
//	              statusHardTimeout). An empty command polls it, input goes
//	              to it, a new command is NOT executed; its end moves the
//	              shell to idle.
//	interrupting  a request's caller gave up while its command ran (its ctx
//	              ended), or Interrupt was called: shellint's escalation.
//	              SIGINT (what Ctrl-C sends) to each program that takes
//	              the terminal within 2 s, never to the shell, which may
//	              be back at its prompt; then SIGINT again, or the Ctrl-C
//	              key if the shell itself still runs the command (a
//	              builtin loop, `read`) and has read its whole line; after
//	              0.5 s SIGTERM to the foreground process group; after
//	              2 s SIGKILL; after 2 s more the whole terminal, within
//	              StopTimeout. What is left of the command's process
//	              groups once it has ended is killed. A request that
//	              arrives meanwhile waits for the turn; then the shell is
//	              idle, and only then is the next command's line written.
//	exited        the shell died: a command ended it (exit), or it read
//	              end-of-input at its prompt (a program left the terminal
//	              so: shellint puts the line discipline back before each
//	              line, but cannot before the prompt's read). A poll or
//	              input reports the end of the command it ran. The next
//	              command starts a new shell in the last directory and its
//	              result says so (ShellRestarted); a command the dying
//	              shell never read (shellint's *DeadError) runs in the new
//	              one the same way.
//
// The turn (one request at a time) is held by the request and by the stop
// of its abandoned command; Interrupt does not take it, so it can stop the
// command a request is waiting on, and the request then answers the
// command's end. Every field is read and written under the Shell's mutex.
//
// It builds on shellint (PTY shells, OSC 633) and knows no wire format
// and no dialect's words.
package engine
