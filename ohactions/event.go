package ohactions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/pytext"
)

// Field is one key of an Object.
type Field struct {
	Key   string
	Value any
}

// Object is a JSON object that keeps its keys in order, as Python's dicts
// (and so OpenHands' event_to_dict) do.
type Object []Field

// Get returns the value of key and whether it is present.
func (o Object) Get(key string) (any, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key, or appends it.
func (o *Object) Set(key string, v any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, Field{key, v})
}

// MarshalJSON writes the keys in order. "<", ">" and "&" are not escaped.
func (o Object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := marshalNoEscape(f.Key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := marshalNoEscape(f.Value)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", f.Key, err)
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Observation is one OpenHands observation event. It marshals to what
// OpenHands' event_to_dict gives for it once the event stream has stamped
// it: keys id, timestamp, source, message, cause (when the action had an
// id), observation, content, extras, and success (run and run_ipython
// only).
type Observation struct {
	ID        int64
	Timestamp time.Time
	Source    string
	Message   string
	Cause     *int64
	Type      string // the "observation" value: run, read, write, edit, error, ...
	Content   string
	Extras    Object
	Success   *bool
}

// MarshalJSON writes the observation dict in event_to_dict's key order.
func (o *Observation) MarshalJSON() ([]byte, error) {
	return o.Object().MarshalJSON()
}

// Object returns the observation dict.
func (o *Observation) Object() Object {
	d := Object{
		{"id", o.ID},
		{"timestamp", pyISOFormat(o.Timestamp)},
		{"source", o.Source},
		{"message", o.Message},
	}
	if o.Cause != nil {
		d = append(d, Field{"cause", *o.Cause})
	}
	extras := o.Extras
	if extras == nil {
		extras = Object{}
	}
	d = append(d, Field{"observation", o.Type}, Field{"content", o.Content}, Field{"extras", extras})
	if o.Success != nil {
		d = append(d, Field{"success", *o.Success})
	}
	return d
}

// pyISOFormat is Python's naive datetime.isoformat(): local time,
// microseconds only when they are not zero.
func pyISOFormat(t time.Time) string {
	t = t.Local()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// Action is an OpenHands action event as event_to_dict serializes it.
type Action struct {
	Type    string // the "action" value
	ID      *int64
	Source  string
	Timeout *float64 // top-level hard timeout in seconds
	Args    map[string]json.RawMessage
}

// ParseAction decodes an action dict. Only "action" is required; every
// other key, and every args key this runtime does not use, is tolerated.
func ParseAction(raw []byte) (*Action, error) {
	var env struct {
		Action  *string                    `json:"action"`
		Args    map[string]json.RawMessage `json:"args"`
		Timeout json.RawMessage            `json:"timeout"`
		ID      json.RawMessage            `json:"id"`
		Source  json.RawMessage            `json:"source"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, &ActionError{Field: "action", Reason: "an action object (" + err.Error() + ")"}
	}
	if env.Action == nil {
		return nil, &ActionError{Field: "action.action", Reason: `the action type, a string such as "run"`}
	}
	a := &Action{Type: *env.Action, Args: env.Args, Source: "agent"}
	if a.Args == nil {
		a.Args = map[string]json.RawMessage{}
	}
	if n, ok := jsonNumber(env.ID); ok {
		id := int64(n)
		a.ID = &id
	}
	if n, ok := jsonNumber(env.Timeout); ok {
		a.Timeout = &n
	} else if !isNull(env.Timeout) {
		return nil, &ActionError{Field: "action.timeout", Reason: "a number of seconds or null"}
	}
	var src string
	if len(env.Source) > 0 && json.Unmarshal(env.Source, &src) == nil && src != "" {
		a.Source = src
	}
	return a, nil
}

// ActionError reports an action that cannot be decoded at all.
type ActionError struct {
	Field, Reason string
}

func (e *ActionError) Error() string { return fmt.Sprintf("%s must be %s", e.Field, e.Reason) }

// Kind returns "invalid_action".
func (e *ActionError) Kind() string { return "invalid_action" }

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// jsonNumber reads a JSON number, or a string holding one (Python's
// int()/float() accept both).
func jsonNumber(raw json.RawMessage) (float64, bool) {
	if isNull(raw) {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return f, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, true
		}
	}
	return 0, false
}

// argError is a wrongly typed argument; it becomes an error observation.
type argError struct{ action, key, want string }

func (e *argError) Error() string {
	return fmt.Sprintf("Invalid argument `%s` of the %s action: expected %s.", e.key, e.action, e.want)
}

func (a *Action) str(key, def string) (string, error) {
	raw, ok := a.Args[key]
	if !ok || isNull(raw) {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &argError{a.Type, key, "a string"}
	}
	return s, nil
}

// optStr is a string argument where null and absent mean None.
func (a *Action) optStr(key string) (*string, error) {
	raw, ok := a.Args[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, &argError{a.Type, key, "a string or null"}
	}
	return &s, nil
}

func (a *Action) boolean(key string) (bool, error) {
	raw, ok := a.Args[key]
	if !ok || isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, &argError{a.Type, key, "true or false"}
	}
	return b, nil
}

func (a *Action) integer(key string, def int) (int, error) {
	raw, ok := a.Args[key]
	if !ok || isNull(raw) {
		return def, nil
	}
	f, ok := jsonNumber(raw)
	if !ok || f != math.Trunc(f) {
		return 0, &argError{a.Type, key, "an integer"}
	}
	return int(f), nil
}

// observation kinds, with OpenHands' message for each.

func (r *Runtime) stamp(a *Action, o *Observation) *Observation {
	r.idMu.Lock()
	r.nextID++
	o.ID = r.nextID
	r.idMu.Unlock()
	o.Timestamp = time.Now()
	o.Source = "agent"
	if a != nil {
		o.Source = a.Source
		o.Cause = a.ID
	}
	return o
}

func errorObservation(content string) *Observation {
	return &Observation{Type: "error", Message: content, Content: content, Extras: Object{{"error_id", ""}}}
}

func nullObservation() *Observation {
	return &Observation{Type: "null", Message: "No observation", Content: "", Extras: Object{}}
}

func thinkObservation() *Observation {
	c := "Your thought has been logged."
	return &Observation{Type: "think", Message: c, Content: c, Extras: Object{}}
}

func readObservation(path, content, implSource string) *Observation {
	return &Observation{Type: "read", Message: "I read the file " + path + ".", Content: content,
		Extras: Object{{"path", path}, {"impl_source", implSource}}}
}

func writeObservation(path string) *Observation {
	return &Observation{Type: "write", Message: "I wrote to the file " + path + ".", Content: "",
		Extras: Object{{"path", path}}}
}

func editObservation(path, content string, oldStr, newStr *string, diff string) *Observation {
	return &Observation{Type: "edit", Message: "I edited the file " + path + ".", Content: content,
		Extras: Object{
			{"path", path}, {"prev_exist", false}, {"old_content", oldStr}, {"new_content", newStr},
			{"impl_source", "oh_aci"}, {"diff", diff}, {"_diff_cache", nil},
		}}
}

func ipythonObservation(code, content string) *Observation {
	ok := true
	return &Observation{Type: "run_ipython", Message: "Code executed in IPython cell.", Content: content,
		Extras: Object{{"code", code}, {"image_urls", nil}}, Success: &ok}
}

// cmdMetadata is CmdOutputMetadata; nil strings are Python's None.
type cmdMetadata struct {
	ExitCode          int
	Username          *string
	Hostname          *string
	WorkingDir        *string
	PyInterpreterPath *string
	Prefix, Suffix    string
}

func (m cmdMetadata) object() Object {
	return Object{
		{"exit_code", m.ExitCode}, {"pid", -1}, {"username", m.Username}, {"hostname", m.Hostname},
		{"working_dir", m.WorkingDir}, {"py_interpreter_path", m.PyInterpreterPath},
		{"prefix", m.Prefix}, {"suffix", m.Suffix},
	}
}

// cmdObservation is CmdOutputObservation. Its content is cut already:
// OpenHands cuts it to MaxCmdOutputSize characters unless hidden, and
// the engine does that for a command's output (outputTruncation).
func cmdObservation(command, content string, md cmdMetadata, hidden bool) *Observation {
	ok := md.ExitCode == 0
	return &Observation{Type: "run", Message: fmt.Sprintf("Command `%s` executed with exit code %d.", command, md.ExitCode),
		Content: content, Extras: Object{{"command", command}, {"metadata", md.object()}, {"hidden", hidden}}, Success: &ok}
}

// MaxCmdOutputSize is OpenHands' MAX_CMD_OUTPUT_SIZE, in characters.
const MaxCmdOutputSize = 30000

// TruncationNotice is what replaces the middle of a long output.
const TruncationNotice = "\n[... Observation truncated due to length ...]\n"

// outputTruncation is V0's truncate_content: the first and last
// MaxCmdOutputSize/2 characters, and the notice between them.
var outputTruncation = engine.Truncation{Limit: MaxCmdOutputSize, Notice: TruncationNotice, NoticeOutside: true}

// cut is CmdOutputObservation's truncation of content it did not get
// from the engine.
func cut(content string, hidden bool) string {
	if hidden {
		return content
	}
	content, _ = outputTruncation.Cut(content)
	return content
}

// pySeconds formats a duration as OpenHands prints NO_CHANGE_TIMEOUT_SECONDS
// (an int): whole seconds as "10", anything else as a Python float.
func pySeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10)
	}
	return pytext.Float(d.Seconds())
}
