// Package ohruntime gives OpenHands runtime semantics to oh-bridge: it
// executes OpenHands agent actions (the event dicts that OpenHands'
// action_execution_server receives) and returns the observation dicts that
// OpenHands' own runtime would produce — the same text, error messages,
// metadata and key order — so an OpenHands agent cannot tell the bridge from
// action_execution_server.py, bash.py and OHEditor, except by speed.
//
// It owns: parsing actions as OpenHands serializes them, the agent's
// persistent bash session with bash.py's semantics (soft and hard timeouts,
// is_input, control keys, polling, the NOT-executed rule, multi-command
// rejection, output cleaning and truncation), FileRead/Write/Edit actions on
// top of package editor, a persistent Python session for run_ipython, the
// Go versions of the OpenHands UI's hidden git helper scripts, and building
// observations as OpenHands' event_to_dict would.
//
// It must not know about JSON-RPC, Socket.IO or the handlers: a transport
// passes the action's JSON to Runtime.Execute and sends back the
// Observation, which marshals to the exact observation dict. It builds on
// shellint (PTY shells), editor (OHEditor) and workspace (containment).
//
// docs/openhands-compat.md lists the actions served and every deliberate
// difference from OpenHands.
package ohruntime
