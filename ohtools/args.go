package ohtools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// args are a call's arguments, checked as the agent's own validation
// would: an object, each value of its field's type; names the tool does
// not know are ignored. null counts as absent, as the SDK drops None
// values.
type args struct {
	tool string
	raw  json.RawMessage
	m    map[string]json.RawMessage
}

func parseArgs(tool string, raw json.RawMessage) (*args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	a := &args{tool: tool, raw: raw}
	if raw[0] != '{' || json.Unmarshal(raw, &a.m) != nil {
		return nil, &ArgumentError{Tool: tool, Reason: "the arguments must be a JSON object"}
	}
	// Names the tool does not know are ignored, as a liberal reader
	// would: Gemini CLI adds wait_for_previous to every tool's schema and
	// its models set it. Types, required names and ranges stay checked.
	return a, nil
}

// objectKeys returns the names of a JSON object's members in order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	keys := []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// keys are the argument names in the order given: the map has them,
// unordered, and only an error message needs the order.
func (a *args) keys() []string {
	keys, err := objectKeys(a.raw)
	if err != nil {
		return []string{}
	}
	return keys
}

func (a *args) fail(reason string) error {
	return &ArgumentError{Tool: a.tool, Reason: reason, Keys: a.keys()}
}

func (a *args) value(name string) (json.RawMessage, bool) {
	v, ok := a.m[name]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false
	}
	return v, true
}

// str returns a string argument; nil when absent.
func (a *args) str(name string) (*string, error) {
	v, ok := a.value(name)
	if !ok {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, a.fail(fmt.Sprintf("`%s` must be a string, not %s", name, jsonType(v)))
	}
	return &s, nil
}

// requiredStr is str for a field the tool cannot do without.
func (a *args) requiredStr(name string) (string, error) {
	s, err := a.str(name)
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", a.fail(fmt.Sprintf("`%s` is required", name))
	}
	return *s, nil
}

func (a *args) boolean(name string) (bool, error) {
	v, ok := a.value(name)
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, a.fail(fmt.Sprintf("`%s` must be true or false, not %s", name, jsonType(v)))
	}
	return b, nil
}

// number returns a non-negative number argument; nil when absent.
func (a *args) number(name string) (*float64, error) {
	v, ok := a.value(name)
	if !ok {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return nil, a.fail(fmt.Sprintf("`%s` must be a number, not %s", name, jsonType(v)))
	}
	if f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, a.fail(fmt.Sprintf("`%s` must be greater than or equal to 0", name))
	}
	return &f, nil
}

// integer returns a whole-number argument; nil when absent.
func (a *args) integer(name string) (*int, error) {
	v, ok := a.value(name)
	if !ok {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, a.fail(fmt.Sprintf("`%s` must be an integer, not %s", name, jsonType(v)))
	}
	n := int(f)
	return &n, nil
}

// intList returns a list-of-integers argument; nil when absent.
func (a *args) intList(name string) ([]int, error) {
	v, ok := a.value(name)
	if !ok {
		return nil, nil
	}
	var fs []float64
	if err := json.Unmarshal(v, &fs); err != nil {
		return nil, a.fail(fmt.Sprintf("`%s` must be a list of integers, not %s", name, jsonType(v)))
	}
	out := make([]int, len(fs))
	for i, f := range fs {
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, a.fail(fmt.Sprintf("`%s` must be a list of integers", name))
		}
		out[i] = int(f)
	}
	return out, nil
}

// oneOf checks that a string argument is one of the allowed values.
func (a *args) oneOf(name, value string, allowed ...string) error {
	for _, v := range allowed {
		if value == v {
			return nil
		}
	}
	return a.fail(fmt.Sprintf("`%s` must be one of %s, not %q", name, strings.Join(quoteAll(allowed), ", "), value))
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// jsonType names the JSON type of v for error messages.
func jsonType(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
