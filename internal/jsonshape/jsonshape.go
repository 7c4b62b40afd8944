// Package jsonshape describes a JSON document by its structure alone: the
// path of every field and the JSON types found there, recursively, its
// values left out. Two servers' answers to the same request then compare
// field by field although their ids, times and texts differ.
//
// A path is written as the fields are reached: "agent.llm.model", an
// array's elements as "items[]", a key that is not a plain word quoted
// ("headers.\"X-Key\""). An object with a string "kind" (OpenHands' event
// and action classes) has it in its path, "items[]<ActionEvent>.action
// <MCPToolAction>.data", so the fields of each kind are kept apart.
// Numbers are "int" or "float" as written (Python writes every float with
// a point), so a float served as an int is a difference.
package jsonshape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Shape maps each path to the types seen there, sorted and joined by "|"
// ("null|string" where one element of an array has a null and another a
// string).
type Shape map[string]string

// Of is the shape of a JSON document.
func Of(doc []byte) (Shape, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	s := Shape{}
	s.add("", v)
	return s, nil
}

// Merge adds other's paths and types to s.
func (s Shape) Merge(other Shape) {
	for p, types := range other {
		for t := range strings.SplitSeq(types, "|") {
			s.note(p, t)
		}
	}
}

func (s Shape) note(path, typ string) {
	have := s[path]
	if have == "" {
		s[path] = typ
		return
	}
	types := strings.Split(have, "|")
	if slices.Contains(types, typ) {
		return
	}
	types = append(types, typ)
	slices.Sort(types)
	s[path] = strings.Join(types, "|")
}

func (s Shape) add(path string, v any) {
	switch v := v.(type) {
	case nil:
		s.note(path, "null")
	case bool:
		s.note(path, "bool")
	case string:
		s.note(path, "string")
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			s.note(path, "float")
		} else {
			s.note(path, "int")
		}
	case []any:
		s.note(path, "array")
		for _, e := range v {
			s.add(path+"[]", e)
		}
	case map[string]any:
		if kind, ok := v["kind"].(string); ok && kind != "" {
			path += "<" + kind + ">"
		}
		s.note(path, "object")
		for k, e := range v {
			s.add(join(path, k), e)
		}
	}
}

// join is the path of field key beneath path.
func join(path, key string) string {
	if !plain(key) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plain(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Lines are the shape as sorted "path: types" lines; the root is "$".
func (s Shape) Lines() []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(s)) {
		name := p
		if name == "" {
			name = "$"
		}
		out = append(out, name+": "+s[p])
	}
	return out
}

// Difference is a path whose types differ between two shapes; A or B is
// "" where that shape lacks the path.
type Difference struct {
	Path string
	A, B string
}

func (d Difference) String() string {
	name := d.Path
	if name == "" {
		name = "$"
	}
	switch {
	case d.A == "":
		return fmt.Sprintf("%s: only in the second (%s)", name, d.B)
	case d.B == "":
		return fmt.Sprintf("%s: only in the first (%s)", name, d.A)
	}
	return fmt.Sprintf("%s: %s in the first, %s in the second", name, d.A, d.B)
}

// Compare lists the paths whose types differ, sorted by path. A path
// missing beneath a path that is itself missing or of another type is
// not listed again: one difference says the whole subtree.
func Compare(a, b Shape) []Difference {
	var out []Difference
	for _, p := range slices.Sorted(maps.Keys(joined(a, b))) {
		if a[p] == b[p] || coveredByParent(p, a, b) {
			continue
		}
		out = append(out, Difference{Path: p, A: a[p], B: b[p]})
	}
	return out
}

func joined(a, b Shape) Shape {
	all := Shape{}
	for p := range a {
		all[p] = ""
	}
	for p := range b {
		all[p] = ""
	}
	return all
}

// coveredByParent: a nearer ancestor of p is already a difference of
// presence (in one shape only), so p need not be listed.
func coveredByParent(p string, a, b Shape) bool {
	for q := parent(p); q != ""; q = parent(q) {
		_, inA := a[q]
		_, inB := b[q]
		if inA != inB {
			return true
		}
	}
	return false
}

// parent is the path p hangs beneath: "a.b" → "a", "a[]" → "a",
// "a<K>" → "a"; "" at the root. Quoted keys are skipped whole.
func parent(p string) string {
	inQuote := false
	cut := -1
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '.' || c == '[' || c == '<':
			cut = i
		}
	}
	if cut < 0 {
		return ""
	}
	return p[:cut]
}
