package agentserver_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

// checkEventTypes holds package ohevents to the events a real server
// sent in the scenario (both sockets and the log): each decodes into its
// kind's type (no kind unknown, no field of the wrong type), every field
// the event has is one its type declares, and what the type read,
// encoded again, is what the server sent, field by field and inside
// nested values as deep as the type reads them. A zero value read and a
// field the server left out or sent as null are one to the bridge.
func checkEventTypes(t *testing.T, server string, tr *transcript) {
	t.Helper()
	kinds := map[string]int{}
	for _, stream := range []struct {
		name   string
		frames []frame
	}{{"live socket", tr.Live}, {"replay socket", tr.Replay}, {"log", tr.Log}} {
		for _, f := range stream.frames {
			where := fmt.Sprintf("%s, %s, %s", server, stream.name, f.Label)
			ev, err := ohevents.Decode(f.Raw)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if o, ok := ev.(*ohevents.Other); ok {
				if o.Mismatch != nil {
					t.Errorf("%s: %v: %s", where, o.Mismatch, f.Raw)
				} else {
					t.Errorf("%s: a kind ohevents does not know (add it to ohevents.Kinds): %s", where, f.Raw)
				}
				continue
			}
			kinds[ev.Header().Kind]++
			for _, d := range eventTypeDiffs(ev) {
				t.Errorf("%s: %s", where, d)
			}
		}
	}
	var seen []string
	for k, n := range kinds {
		seen = append(seen, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(seen)
	t.Logf("%s: the events decoded: %s", server, strings.Join(seen, ", "))
	if len(kinds) == 0 {
		t.Errorf("%s: no event to check", server)
	}
}

// eventTypeDiffs says where a decoded event's type and its bytes differ.
func eventTypeDiffs(ev ohevents.Event) []string {
	var raw map[string]any
	if err := json.Unmarshal(ev.Raw(), &raw); err != nil {
		return []string{err.Error()}
	}
	typ := reflect.TypeOf(ev).Elem()
	declared := jsonFields(typ)
	var out []string
	for k := range raw {
		if !declared[k] {
			out = append(out, fmt.Sprintf("its field %q is not declared by ohevents.%s", k, typ.Name()))
		}
	}
	typed, err := json.Marshal(ev)
	if err != nil {
		return append(out, err.Error())
	}
	var back any
	json.Unmarshal(typed, &back)
	out = append(out, subsetDiffs(typ.Name(), back, raw, true)...)
	sort.Strings(out)
	return out
}

// jsonFields are the JSON names of a struct's fields, embedded structs'
// included.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k := range jsonFields(f.Type) {
				out[k] = true
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = true
	}
	return out
}

// subsetDiffs compares what a type read (typed, encoded again) with what
// the server sent (raw; present says whether it had the field).
func subsetDiffs(path string, typed, raw any, present bool) []string {
	if zero(typed) && (!present || zero(raw)) {
		return nil
	}
	switch tv := typed.(type) {
	case map[string]any:
		rv, ok := raw.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: read as an object, sent as %s", path, show(raw, present))}
		}
		var out []string
		for k, v := range tv {
			r, has := rv[k]
			out = append(out, subsetDiffs(path+"."+k, v, r, has)...)
		}
		return out
	case []any:
		rv, ok := raw.([]any)
		if !ok || len(rv) != len(tv) {
			return []string{fmt.Sprintf("%s: read as a list of %d, sent as %s", path, len(tv), show(raw, present))}
		}
		var out []string
		for i := range tv {
			out = append(out, subsetDiffs(fmt.Sprintf("%s[%d]", path, i), tv[i], rv[i], true)...)
		}
		return out
	}
	if !present || !reflect.DeepEqual(typed, raw) {
		return []string{fmt.Sprintf("%s: read as %s, sent as %s", path, show(typed, true), show(raw, present))}
	}
	return nil
}

func zero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case float64:
		return v == 0
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func show(v any, present bool) string {
	if !present {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		b = append(b[:200], "…"...)
	}
	return string(b)
}
