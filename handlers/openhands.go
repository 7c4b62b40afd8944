package handlers

import (
	"context"
	"encoding/json"

	"github.com/oh-bridge/oh-bridge/ohruntime"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// openhandsMethods are the openhands/* methods.
//
// openhands/execute_action is concurrent: package ohruntime runs actions one
// at a time itself (like action_execution_server's asyncio.Lock), and a
// call waiting for its turn or for a command can be cancelled. Cancelling
// ends the wait only: a running command keeps running, as after a timeout,
// and its output so far comes with the next observation (an empty `run`
// polls it).
func (h *Handlers) openhandsMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		"openhands/execute_action": {Class: rpc.Concurrent, Handle: handle(h.executeAction)},
	}
}

// ohState is the session's OpenHands runtime. The runtime itself starts no
// process until an action needs one.
type ohState struct {
	rt *ohruntime.Runtime
}

// ohRuntime is the session's OpenHands runtime, for every transport that
// executes actions (openhands/execute_action and the server's runtime role).
func (h *Handlers) ohRuntime() (*ohruntime.Runtime, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.oh == nil {
		return nil, rpc.NewError(rpc.CodeInternalError, "the OpenHands runtime is not started", nil)
	}
	return h.oh.rt, nil
}

// openhandsCapabilities are merged into initialize's result capabilities.
func (h *Handlers) openhandsCapabilities() map[string]any {
	return map[string]any{
		"openhands": map[string]any{
			"actions": map[string]any{
				"execute":      true,
				"types":        ohruntime.Executed,
				"acknowledged": ohruntime.Answered,
			},
		},
	}
}

type executeActionParams struct {
	Action json.RawMessage `json:"action"`
}

type executeActionResult struct {
	Observation *ohruntime.Observation `json:"observation"`
}

// executeAction runs one OpenHands action dict and answers the observation
// dict OpenHands' runtime would give.
func (h *Handlers) executeAction(ctx context.Context, p *executeActionParams) (*executeActionResult, error) {
	if len(p.Action) == 0 || string(p.Action) == "null" {
		return nil, rpc.InvalidParams("action", `an OpenHands action object, e.g. {"action": "run", "args": {"command": "ls"}}`)
	}
	rt, err := h.ohRuntime()
	if err != nil {
		return nil, err
	}
	progress := rpc.WorkDone(ctx)
	progress.Begin(ctx, "OpenHands action", "")
	obs, err := rt.Execute(ctx, p.Action)
	if err != nil {
		progress.End(ctx, "failed")
		if ae, ok := err.(*ohruntime.ActionError); ok {
			return nil, rpc.InvalidParams(ae.Field, ae.Reason)
		}
		return nil, toRPCError(err)
	}
	progress.End(ctx, obs.Message)
	return &executeActionResult{Observation: obs}, nil
}
