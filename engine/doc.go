// Package engine owns an agent's command from submission to result: one
// command at a time in the agent's shell; a soft timeout (no new output)
// and a hard one that returns while the command keeps running; an empty
// command that polls the running one; input and control keys sent to it;
// interrupt; a new command refused while another runs; and the output a
// cancelled wait had already read, kept for the next result.
//
// Both of OpenHands' dialects run on it: V1's terminal tool (package
// ohtools) and V0's run action (package ohactions). Each words the
// outcomes its own way; the engine reports them as an Outcome and a
// Result.
//
// A Shell's states:
//
//	idle      no command of the agent's runs (statusNone, statusCompleted)
//	running   a command runs and its last result said so (statusNoChange,
//	          statusHardTimeout): an empty command polls it, input goes to
//	          it, a new command is NOT executed
//	exited    the shell died; the next command starts a new one
//
// It builds on shellint (PTY shells, OSC 633) and knows no wire format
// and no dialect's words.
package engine
