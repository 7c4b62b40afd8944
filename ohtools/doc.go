// Package ohtools gives an agent OpenHands V1's own tools, terminal,
// file_editor and task_tracker, acting in the user's workspace: the same
// names, the same input schemas and the same observation texts as
// openhands-tools returns them, so an OpenHands agent that reaches these
// tools through MCP cannot tell them from its built-ins, except that the
// person watches them run.
//
// Each tool is declared once, in its own file, as a Spec (tool.go): name,
// schema, description, typed arguments with their ACP kind, title and card,
// and its run. Definitions, Parse, Run, the MCP registration, the editor's
// capability list, the cards and the extension's generated types all
// derive from those declarations. Besides OpenHands' three, the bridge
// declares tools of its own (open_file), served only when asked for.
//
// It owns the V1 tool definitions (Definitions), argument checking (the
// agent's own path from a call's JSON to an action, pydantic's error texts
// included), and the wording of every observation. The control flow of the agent's shell
// is engine.Shell, which V0 shares; files go through editor (in its
// FileEditor dialect, sharing the session's undo history) and workspace.
//
// It must not know about MCP, JSON-RPC or any other transport: a face
// turns a call into Toolbox.Call and the Observation's content blocks into
// its own result. docs/openhands-compat.md lists every deliberate
// difference from openhands-tools; TestAgainstOpenHands holds the texts to
// the installed openhands-tools itself.
package ohtools
