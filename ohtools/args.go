package ohtools

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A tool call's arguments go the agent's way from JSON to an action
// (openhands-sdk's Agent._get_action_event), and a call that does not get
// there fails with the agent's words for it, byte for byte:
//
//  1. json.loads; anything but an object counts as {}; null values are
//     dropped (parse_tool_call_arguments);
//  2. file_editor without a command gets one inferred from the other
//     names, or fails "Cannot infer 'command' ..." (normalize_tool_call);
//  3. a text field sent as a list of texts is joined, a list field sent as
//     a JSON text is decoded (fix_malformed_tool_arguments);
//  4. security_risk and summary are taken out;
//  5. the action's pydantic model validates what is left, in lax mode
//     ("5" is a number, "yes" a boolean), and its ValidationError is the
//     reason: "N validation error(s) for TerminalAction", then each
//     error's place, message, type, input and link.
//
// The text is "Error validating tool 'NAME': REASON. Parameters provided:
// [names]". One deliberate difference: a name the action does not have is
// ignored, where pydantic forbids it (docs/openhands-compat.md).

type fieldType int

const (
	tStr      fieldType = iota // str
	tBool                      // bool
	tNumber                    // float, ge=0
	tInt                       // int, ge=0
	tIntList                   // list[int]
	tLiteral                   // Literal[...] of texts
	tTaskList                  // list[TaskItem]
)

// actionField is one field of an action's pydantic model.
type actionField struct {
	name     string
	typ      fieldType
	required bool
	literals []string // tLiteral's values
}

// actionModel is an action's pydantic model: its class name (the error
// text names it) and its fields in order. infer, if set, is the tool's
// rule for arguments that leave out what they imply (normalize_tool_call),
// applied before the fields are fixed and validated.
type actionModel struct {
	name   string
	fields []actionField
	infer  func(args *pyValue) error
}

// actionValues are an action's validated fields: string, bool, float64,
// int, []int or []Task by the field's type; absent when not given.
type actionValues map[string]any

func (v actionValues) str(name string) *string {
	if s, ok := v[name].(string); ok {
		return &s
	}
	return nil
}

func (v actionValues) boolean(name string) bool { b, _ := v[name].(bool); return b }

// checkArguments takes a call's arguments the agent's way to the
// action's values; its error is an *ArgumentError.
func checkArguments(tool string, model actionModel, raw json.RawMessage) (actionValues, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	parsed, err := parsePyJSON(raw)
	if err != nil {
		return nil, &ArgumentError{Tool: tool, Reason: "the arguments are not valid JSON: " + err.Error()}
	}
	args := newPyDict()
	if parsed.kind == pyDict {
		for _, k := range parsed.keys {
			if v := parsed.vals[k]; v.kind != pyNone {
				args.set(k, v)
			}
		}
	}
	if model.infer != nil {
		if err := model.infer(args); err != nil {
			return nil, err
		}
	}
	fixMalformed(args, model)
	args.del("security_risk")
	args.del("summary")
	values, errs := validateAction(model, args)
	if len(errs) > 0 {
		return nil, &ArgumentError{Tool: tool, Reason: validationText(model.name, errs), Keys: append([]string{}, args.keys...)}
	}
	return values, nil
}

// fixMalformed is fix_malformed_tool_arguments: a plain text field sent
// as a list of texts is joined (a model that chunks old_str); a list field
// sent as a JSON text is decoded, trailing garbage after its last "}" or
// "]" cut off (a model that quotes view_range).
func fixMalformed(args *pyValue, model actionModel) {
	for _, f := range model.fields {
		v := args.get(f.name)
		if v == nil {
			continue
		}
		switch f.typ {
		case tStr:
			if v.kind != pyList || !allStrings(v.list) {
				continue
			}
			var b strings.Builder
			for _, part := range v.list {
				b.WriteString(part.s)
			}
			args.set(f.name, &pyValue{kind: pyStr, s: b.String()})
		case tIntList, tTaskList:
			if v.kind != pyStr {
				continue
			}
			if d := decodeCollection(v.s); d != nil {
				args.set(f.name, d)
			}
		}
	}
}

func allStrings(list []*pyValue) bool {
	for _, v := range list {
		if v.kind != pyStr {
			return false
		}
	}
	return true
}

// decodeCollection is the list and dict half of fix_malformed: the text
// as JSON, else cut after its last "}", else after its last "]"; nil when
// none of them is a list or an object.
func decodeCollection(s string) *pyValue {
	collection := func(text string) *pyValue {
		v, err := parsePyJSON([]byte(text))
		if err != nil || (v.kind != pyList && v.kind != pyDict) {
			return nil
		}
		return v
	}
	if v, err := parsePyJSON([]byte(s)); err == nil {
		if v.kind == pyList || v.kind == pyDict {
			return v
		}
		return nil
	}
	for _, end := range []string{"}", "]"} {
		if i := strings.LastIndex(s, end); i >= 0 {
			if v := collection(s[:i+1]); v != nil {
				return v
			}
		}
	}
	return nil
}
