package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/oh-bridge/oh-bridge/ohactions"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// openhandsCapabilities are merged into initialize's result capabilities.
func (h *Handlers) openhandsCapabilities() map[string]any {
	return map[string]any{
		"openhands": map[string]any{
			"actions": map[string]any{
				"execute":      true,
				"types":        ohactions.Executed,
				"acknowledged": ohactions.Answered,
			},
		},
	}
}

type executeActionParams struct {
	Action json.RawMessage `json:"action"`
}

type executeActionResult struct {
	Observation *ohactions.Observation `json:"observation"`
}

// AppendJSON encodes the result as encoding/json does, without its
// reflection and without the validation and compaction it repeats at each
// level of MarshalJSON output (an observation nests three Objects, each
// value encoded by an Encoder of its own): on `echo hi` that was most of
// the bridge's CPU for the call.
func (r *executeActionResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"observation":`...)
	if r.Observation == nil {
		b = append(b, "null"...)
	} else {
		b = appendOHValue(b, r.Observation.Object())
	}
	return append(b, '}')
}

// appendOHValue appends one value of an OpenHands dict. The kinds the
// runtime builds are written here; any other goes through encoding/json
// (HTML characters unescaped, as the rest of the response).
func appendOHValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return rpc.AppendString(b, v)
	case *string:
		if v == nil {
			return append(b, "null"...)
		}
		return rpc.AppendString(b, *v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case ohactions.Object:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = rpc.AppendString(b, f.Key)
			b = append(b, ':')
			b = appendOHValue(b, f.Value)
		}
		return append(b, '}')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Nothing the runtime builds fails to encode; if something did,
		// the field reads null rather than the answer being lost.
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// executeAction runs one OpenHands action dict and answers the observation
// dict OpenHands' runtime would give.
func (h *Handlers) executeAction(ctx context.Context, p *executeActionParams) (*executeActionResult, error) {
	if len(p.Action) == 0 || string(p.Action) == "null" {
		return nil, rpc.InvalidParams("action", `an OpenHands action object, e.g. {"action": "run", "args": {"command": "ls"}}`)
	}
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	progress := rpc.WorkDone(ctx)
	progress.Begin(ctx, "OpenHands action", "")
	obs, err := s.ExecuteAction(ctx, p.Action)
	if err != nil {
		progress.End(ctx, "failed")
		if ae, ok := err.(*ohactions.ActionError); ok {
			return nil, rpc.InvalidParams(ae.Field, ae.Reason)
		}
		return nil, toRPCError(err)
	}
	progress.End(ctx, obs.Message)
	return &executeActionResult{Observation: obs}, nil
}
