// Package agentserver is the bridge's connection to an OpenHands V1
// agent-server (openhands-agent-server): its REST API under /api and the
// event WebSocket at /sockets/events/{conversation_id}, authenticated the
// way V1 expects (X-Session-API-Key on REST, a first frame
// {"type": "auth", ...} on the socket).
//
// A Conversation creates a conversation whose agent has no built-in tools and
// the bridge's MCP endpoint instead (or attaches to an existing one),
// streams every event in V1's JSON, resumes a dropped stream from the last
// event's timestamp with no event lost or repeated, answers confirmation
// requests with the editor's decision, and sends messages, pause, resume
// and interrupt. Failures come back in plain words.
//
// It knows nothing of the editor or of MCP itself: what the agent's tools
// are reached through, and who decides confirmations, come in as Options.
package agentserver
