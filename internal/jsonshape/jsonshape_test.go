package jsonshape

import (
	"slices"
	"testing"
)

func TestShape(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string
	}{
		{"scalars", `{"s": "x", "i": 3, "f": 3.0, "e": 1e3, "b": true, "n": null}`,
			[]string{"$: object", "b: bool", "e: float", "f: float", "i: int", "n: null", "s: string"}},
		{"arrays merge their elements", `{"a": [{"x": 1}, {"x": null, "y": "z"}], "empty": []}`,
			[]string{"$: object", "a: array", "a[]: object", "a[].x: int|null", "a[].y: string", "empty: array"}},
		{"kinds name their objects", `[{"kind": "A", "p": 1}, {"kind": "B", "q": {"kind": "C"}}]`,
			[]string{"$: array", "[]<A>: object", "[]<A>.kind: string", "[]<A>.p: int",
				"[]<B>: object", "[]<B>.kind: string", "[]<B>.q<C>: object", "[]<B>.q<C>.kind: string"}},
		{"odd keys are quoted", `{"headers": {"X-Key": "v", "a.b": 1}}`,
			[]string{"$: object", `headers: object`, `headers."a.b": int`, `headers.X-Key: string`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Of([]byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Lines(); !slices.Equal(got, c.want) {
				t.Errorf("shape of %s:\n got %q\nwant %q", c.doc, got, c.want)
			}
		})
	}
	if _, err := Of([]byte(`{"a":`)); err == nil {
		t.Error("a broken document has a shape")
	}
}

func TestCompare(t *testing.T) {
	a, _ := Of([]byte(`{"uptime": 1.5, "same": "x", "gone": {"deep": {"deeper": 1}}, "kind_of": {"kind": "A", "x": 1}}`))
	b, _ := Of([]byte(`{"uptime": 1, "same": "y", "new": [1], "kind_of": {"kind": "B", "x": 1}}`))
	var got []string
	for _, d := range Compare(a, b) {
		got = append(got, d.String())
	}
	// The subtrees of a field on one side only are one difference each.
	want := []string{
		"gone: only in the first (object)",
		"kind_of<A>: only in the first (object)",
		"kind_of<B>: only in the second (object)",
		"new: only in the second (array)",
		"uptime: float in the first, int in the second",
	}
	if !slices.Equal(got, want) {
		t.Errorf("differences:\n got %q\nwant %q", got, want)
	}
	m := Shape{}
	m.Merge(a)
	m.Merge(b)
	if m["uptime"] != "float|int" || m["same"] != "string" {
		t.Errorf("merged: %v", m.Lines())
	}
}

func TestParent(t *testing.T) {
	for p, want := range map[string]string{
		"a":          "",
		"a.b":        "a",
		"a[].b":      "a[]",
		"a[]":        "a",
		"a<K>.b":     "a<K>",
		"a<K>":       "a",
		`h."x.y"`:    "h",
		`h."x.y".z`:  `h."x.y"`,
		`h."q\"[.]"`: "h",
	} {
		if got := parent(p); got != want {
			t.Errorf("parent(%q) = %q, want %q", p, got, want)
		}
	}
}
