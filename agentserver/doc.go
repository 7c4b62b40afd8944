// Package agentserver is the bridge's connection to an OpenHands V1
// agent-server (openhands-agent-server, 1.49.1 or a later 1.x): its REST
// API under /api and its event sockets, the session socket
// /sockets/session/{conversation_id} where the server serves it and the
// events socket /sockets/events/{conversation_id} where it does not,
// authenticated the way V1 expects (X-Session-API-Key on REST, a first
// frame {"type": "auth", ...} on a socket).
//
// A Conversation creates a conversation whose agent has no built-in tools and
// the bridge's MCP endpoint instead (or attaches to an existing one),
// streams every event, decoded by package ohevents (which also says which
// server versions are spoken to), resumes a dropped stream after the
// last event delivered (by its index in the log on the session socket)
// with no event lost or repeated, answers confirmation requests with the
// editor's decision, and sends messages, pause, resume and interrupt.
// Failures come back in plain words, each error with its kind.
//
// It knows nothing of the editor or of MCP itself: what the agent's tools
// are reached through, and who decides confirmations, come in as Options.
package agentserver
