// Package ohevents is the one home of the OpenHands agent-server's events:
// their Go types, as the SDK and the agent-server of the versions the
// bridge is tested against define them (openhands-sdk's event classes and
// the agent-server's ServerErrorEvent, 1.58.2 and 1.49.1), and Decode,
// which turns an event's JSON into the typed value of its kind. It is the
// only package that json-decodes an event (internal/layers checks it):
// agentserver, updates, conversation and the demo read the typed values.
//
// An event keeps the bytes the server sent (Raw), for whatever passes it
// on verbatim: the editor's openhands/did_receive_event, records. A kind
// this package does not know is not dropped: Decode returns it as an
// *Other, with its kind, id, timestamp and bytes, and it is passed on
// unchanged.
//
// It also knows the range of agent-server versions these types are for
// (OldestSupported; CheckVersion), since an older server's events and
// requests are not these.
//
// It knows nothing of the bridge: no session, no editor, no tool. A tool's
// arguments (an action's data) stay JSON here; package ohtools reads them.
// extension/src/protocol.gen.ts carries the same types to the extension
// (internal/protogen reads Kinds).
package ohevents
