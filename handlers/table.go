package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// Methods is the method table, the index of the editor's protocol: every
// method the bridge serves, with its handler and concurrency class, in one
// literal. docs/protocol.md lists them with their parameters. Lifecycle
// messages that only change the connection's state (shutdown, exit,
// $/cancelRequest, $/setTrace) are handled by package rpc itself.
//
// The classes:
//   - fs/* and edit/* reads are concurrent. Everything that writes (and may
//     call the client's workspace/applyEdit) is per-path, keyed by the
//     resolved paths it touches, so "a.txt" and "/root/a.txt" wait for each
//     other.
//   - textDocument/* and workspace/didChangeWatchedFiles are inline: they
//     keep their arrival order and only update the overlay of open buffers.
//   - terminal/* can wait on a shell (a run for its command, the others
//     briefly for the PTY), so none is inline; runs and output polls wait
//     as long as the client allows.
//   - openhands/execute_action is concurrent: package ohactions runs
//     actions one at a time itself (like action_execution_server's
//     asyncio.Lock), and a call waiting for its turn or for a command can
//     be cancelled. Cancelling stops the action's command before the next
//     action runs (package engine); a timeout leaves it running.
//   - openhands/connect and the rest dial an OpenHands agent-server on
//     demand: no network traffic of any kind happens before
//     openhands/connect. Protocol "v0" answers that the V0 runtime role is
//     retired (v0RetiredError).
//   - mcp/* serve the session's tools to agents over MCP, on demand:
//     nothing listens before mcp/start, and mcp/stop closes the port.
func (h *Handlers) Methods() map[string]rpc.Method {
	path := h.pathKeys("path")
	return map[string]rpc.Method{
		"initialize":  {Class: rpc.Inline, Handle: handle(h.initialize)},
		"initialized": {Class: rpc.Inline, Handle: handle(h.initialized)},
		"bridge/info": {Class: rpc.Inline, Handle: handle(h.info)},
		"bridge/wait": {Class: rpc.Concurrent, Handle: handle(h.wait)},

		"fs/read_text_file":  {Class: rpc.Concurrent, Handle: handle(h.readTextFile)},
		"fs/write_text_file": {Class: rpc.PerPath, Handle: handle(h.writeTextFile), Keys: path},
		"fs/list_directory":  {Class: rpc.Concurrent, Handle: handle(h.listDirectory)},
		"fs/stat":            {Class: rpc.Concurrent, Handle: handle(h.stat)},
		"fs/mkdir":           {Class: rpc.PerPath, Handle: handle(h.mkdir), Keys: path},
		"fs/delete":          {Class: rpc.PerPath, Handle: handle(h.delete), Keys: path},
		"fs/move":            {Class: rpc.PerPath, Handle: handle(h.move), Keys: h.pathKeys("from", "to")},
		"fs/watch_status":    {Class: rpc.Concurrent, Handle: handle(h.watchStatus)},

		"edit/view":        {Class: rpc.Concurrent, Handle: handle(h.editView)},
		"edit/create":      {Class: rpc.PerPath, Handle: handle(h.editCreate), Keys: path},
		"edit/str_replace": {Class: rpc.PerPath, Handle: handle(h.editStrReplace), Keys: path},
		"edit/insert":      {Class: rpc.PerPath, Handle: handle(h.editInsert), Keys: path},
		"edit/undo":        {Class: rpc.PerPath, Handle: handle(h.editUndo), Keys: path},

		"textDocument/didOpen":            {Class: rpc.Inline, Handle: handle(h.didOpen)},
		"textDocument/didChange":          {Class: rpc.Inline, Handle: handle(h.didChange)},
		"textDocument/didClose":           {Class: rpc.Inline, Handle: handle(h.didClose)},
		"workspace/didChangeWatchedFiles": {Class: rpc.Inline, Handle: handle(h.didChangeWatchedFiles)},

		"terminal/open":       {Class: rpc.Concurrent, Handle: handle(h.terminalOpen)},
		"terminal/run":        {Class: rpc.Concurrent, Handle: handle(h.terminalRun)},
		"terminal/output":     {Class: rpc.Concurrent, Handle: handle(h.terminalOutput)},
		"terminal/send_input": {Class: rpc.Concurrent, Handle: handle(h.terminalSendInput)},
		"terminal/interrupt":  {Class: rpc.Concurrent, Handle: handle(h.terminalInterrupt)},
		"terminal/kill":       {Class: rpc.Concurrent, Handle: handle(h.terminalKill)},
		"terminal/close":      {Class: rpc.Concurrent, Handle: handle(h.terminalClose)},
		"terminal/list":       {Class: rpc.Concurrent, Handle: handle(h.terminalList)},
		"terminal/resize":     {Class: rpc.Concurrent, Handle: handle(h.terminalResize)},

		"openhands/execute_action": {Class: rpc.Concurrent, Handle: handle(h.executeAction)},

		"openhands/connect":      {Class: rpc.Concurrent, Handle: handle(h.connect)},
		"openhands/disconnect":   {Class: rpc.Concurrent, Handle: handle(h.disconnect)},
		"openhands/status":       {Class: rpc.Inline, Handle: handle(h.status)},
		"openhands/send_message": {Class: rpc.Concurrent, Handle: handle(h.sendMessage)},
		"openhands/pause":        {Class: rpc.Concurrent, Handle: handle(h.pause)},
		"openhands/resume":       {Class: rpc.Concurrent, Handle: handle(h.resume)},
		"openhands/interrupt":    {Class: rpc.Concurrent, Handle: handle(h.interrupt)},

		"openhands/list_conversations": {Class: rpc.Concurrent, Handle: handle(h.listConversations)},
		"openhands/find_server":        {Class: rpc.Concurrent, Handle: handle(h.findServer)},
		"openhands/start_server":       {Class: rpc.Concurrent, Handle: handle(h.startServer)},
		"openhands/trust_server":       {Class: rpc.Concurrent, Handle: handle(h.trustServer)},
		"openhands/install_relay":      {Class: rpc.Concurrent, Handle: handle(h.installRelay)},

		"mcp/start":  {Class: rpc.Concurrent, Handle: handle(h.mcpStart)},
		"mcp/stop":   {Class: rpc.Concurrent, Handle: handle(h.mcpStop)},
		"mcp/status": {Class: rpc.Concurrent, Handle: handle(h.mcpStatus)},
	}
}

// handle adapts a typed handler (rpc.Typed: bad params → -32602 naming the
// field) and maps its domain errors to protocol errors.
func handle[P any, R any](fn func(context.Context, *P) (R, error)) rpc.Handler {
	return rpc.Typed(func(ctx context.Context, p *P) (any, error) {
		res, err := fn(ctx, p)
		if err != nil {
			return nil, toRPCError(err)
		}
		return res, nil
	})
}
