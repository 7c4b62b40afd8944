// Package ohactions is OpenHands' V0 dialect: it takes the action dicts
// OpenHands' V0 agents sent to action_execution_server and answers the
// observation dicts OpenHands' own runtime produced (the same text, error
// messages, metadata and key order), so a V0 agent could not tell the
// bridge from action_execution_server.py, bash.py and OHEditor, except by
// speed. openhands/execute_action serves it.
//
// It owns parsing actions as OpenHands serialized them, bash.py's wording
// of a command's outcome (soft and hard timeouts, is_input, control keys,
// polling, the NOT-executed rule, multi-command rejection), the
// FileRead/Write/Edit actions on top of package editor, a persistent Python
// session for run_ipython, the Go versions of the OpenHands UI's hidden git
// helper scripts, and building observations as OpenHands' event_to_dict
// did.
//
// A command's control flow is not here: it is package engine's, the one
// V1's terminal tool (package ohtools) runs on too. This package only words
// what the engine reports.
//
// It must not know about JSON-RPC, MCP or any face: the session passes an
// action's JSON to Runtime.Execute and a face sends back the Observation,
// which marshals to the exact observation dict. docs/openhands-compat.md
// lists the actions served and every deliberate difference from OpenHands.
package ohactions
