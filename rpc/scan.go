package rpc

import (
	"bytes"
	"encoding/json"
)

// Member is one member of a JSON object, its value as raw bytes.
type Member struct {
	Key   string // as written, quotes included
	Value json.RawMessage
}

// TopLevelMembers returns the members of the JSON object body, each value
// as its raw bytes. It finds where values end (quotes and brackets), not
// whether they are valid JSON; decoding a value checks that. It counts
// brackets instead of recursing, so Validate finds the id of a message
// nested deeper than encoding/json reads, and the test client leaves a
// large result undecoded until the caller's type is known.
func TopLevelMembers(body []byte) ([]Member, bool) {
	out := []Member{}
	if !eachMember(body, func(m Member) bool { out = append(out, m); return true }) {
		return nil, false
	}
	return out, true
}

// eachMember passes the members of the JSON object body to yield, in
// order, until yield returns false, and reports whether body is one whole
// object. A member is passed only once what follows it (a comma or the
// closing brace) shows that its value is whole, so the members of the
// first bytes of an object are read as far as they go.
func eachMember(body []byte, yield func(Member) bool) bool {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return skipSpace(body, i+1) == len(body)
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return false
		}
		end := skipString(body, i)
		if end < 0 {
			return false
		}
		key := body[i:end]
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return false
		}
		i = skipSpace(body, i+1)
		vend := skipValue(body, i)
		if vend <= i {
			return false
		}
		value := json.RawMessage(body[i:vend])
		i = skipSpace(body, vend)
		if i >= len(body) || (body[i] != ',' && body[i] != '}') {
			return false
		}
		if !yield(Member{string(key), value}) {
			return false
		}
		if body[i] == '}' {
			return skipSpace(body, i+1) == len(body)
		}
		i = skipSpace(body, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i], or
// -1. A quote preceded by an odd run of backslashes is escaped.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value that starts at b[i], or -1:
// strings end at their quote, objects and arrays at the bracket that
// closes them, other values at the next delimiter.
func skipValue(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end := skipString(b, j)
			if end < 0 {
				return -1
			}
			if depth == 0 {
				return end
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			if depth--; depth == 0 {
				return j + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return j
			}
		}
	}
	if depth == 0 {
		return len(b)
	}
	return -1
}
