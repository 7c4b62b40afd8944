package ohtools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// pyValue is a JSON value as Python's json.loads makes it, which is what
// the agent's validation sees and what its error texts print with repr():
// an object keeps its keys in order (a repeated key keeps its first place
// and its last value), a number without a fraction or exponent is an int
// of any size, any other number a float.
type pyValue struct {
	kind pyKind
	b    bool
	i    *big.Int
	f    float64
	s    string
	list []*pyValue
	keys []string
	vals map[string]*pyValue
}

type pyKind int

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat
	pyStr
	pyList
	pyDict
)

func newPyDict() *pyValue { return &pyValue{kind: pyDict, vals: map[string]*pyValue{}} }

// set puts key in d, at the end when it is new.
func (d *pyValue) set(key string, v *pyValue) {
	if _, ok := d.vals[key]; !ok {
		d.keys = append(d.keys, key)
	}
	d.vals[key] = v
}

// get returns d[key], nil when absent.
func (d *pyValue) get(key string) *pyValue { return d.vals[key] }

// del removes key from d.
func (d *pyValue) del(key string) {
	if _, ok := d.vals[key]; !ok {
		return
	}
	delete(d.vals, key)
	for i, k := range d.keys {
		if k == key {
			d.keys = append(d.keys[:i:i], d.keys[i+1:]...)
			break
		}
	}
}

// copyDict is a shallow copy of d.
func (d *pyValue) copyDict() *pyValue {
	c := newPyDict()
	for _, k := range d.keys {
		c.set(k, d.vals[k])
	}
	return c
}

// parsePyJSON is json.loads.
func parsePyJSON(data []byte) (*pyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodePyValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return v, nil
}

func decodePyValue(dec *json.Decoder) (*pyValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &pyValue{kind: pyNone}, nil
	case bool:
		return &pyValue{kind: pyBool, b: t}, nil
	case string:
		return &pyValue{kind: pyStr, s: t}, nil
	case json.Number:
		return pyNumber(string(t)), nil
	case json.Delim:
		if t == '[' {
			l := &pyValue{kind: pyList, list: []*pyValue{}}
			for dec.More() {
				item, err := decodePyValue(dec)
				if err != nil {
					return nil, err
				}
				l.list = append(l.list, item)
			}
			_, err := dec.Token()
			return l, err
		}
		d := newPyDict()
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodePyValue(dec)
			if err != nil {
				return nil, err
			}
			d.set(key.(string), v)
		}
		_, err := dec.Token()
		return d, err
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// pyNumber is a JSON number literal as json.loads reads it.
func pyNumber(lit string) *pyValue {
	if !strings.ContainsAny(lit, ".eE") {
		i, ok := new(big.Int).SetString(lit, 10)
		if ok {
			return &pyValue{kind: pyInt, i: i}
		}
	}
	// float(): out of range is inf, as Python's float("1e400").
	f, _ := strconv.ParseFloat(lit, 64)
	return &pyValue{kind: pyFloat, f: f}
}

// typeName is type(v).__name__.
func (v *pyValue) typeName() string {
	return [...]string{"NoneType", "bool", "int", "float", "str", "list", "dict"}[v.kind]
}

// repr is Python's repr(v).
func (v *pyValue) repr() string {
	var b strings.Builder
	v.writeRepr(&b)
	return b.String()
}

func (v *pyValue) writeRepr(b *strings.Builder) {
	switch v.kind {
	case pyNone:
		b.WriteString("None")
	case pyBool:
		if v.b {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case pyInt:
		b.WriteString(v.i.String())
	case pyFloat:
		b.WriteString(pytext.Float(v.f))
	case pyStr:
		b.WriteString(pytext.Repr(v.s))
	case pyList:
		b.WriteByte('[')
		for i, item := range v.list {
			if i > 0 {
				b.WriteString(", ")
			}
			item.writeRepr(b)
		}
		b.WriteByte(']')
	case pyDict:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pytext.Repr(k))
			b.WriteString(": ")
			v.vals[k].writeRepr(b)
		}
		b.WriteByte('}')
	}
}

// shortRepr is repr(v) as pydantic's error text shows an input value: a
// repr over 50 bytes keeps its first 25 and last 24 bytes around "...",
// each end moved to the nearest whole character inside it.
func (v *pyValue) shortRepr() string {
	s := v.repr()
	if len(s) <= 50 {
		return s
	}
	head := 25
	for !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - 24
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "..." + s[tail:]
}

// float64 is v as a Python float(), for an int or a float: ok is false
// for an int too large for a float.
func (v *pyValue) float64() (float64, bool) {
	if v.kind == pyFloat {
		return v.f, true
	}
	f, _ := new(big.Float).SetInt(v.i).Float64()
	return f, !math.IsInf(f, 0)
}
