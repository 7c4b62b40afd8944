package main

import (
	"bytes"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestGeneratedFileIsCurrent regenerates the TypeScript in memory: the
// extension's copy must be what the Go types say today.
func TestGeneratedFileIsCurrent(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(output)))
	if err != nil {
		t.Fatalf("%v: run go run ./internal/protogen", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go run ./internal/protogen\n%s", output, firstDifference(got, want))
	}
}

// firstDifference shows the first line where the file and the fresh
// output part.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  file:      " + gl + "\n  generated: " + wl
		}
	}
	return ""
}

// prelude is package handlers of a small module: a method table with
// x/call (Params → Result) and a notifications table with x/did_note
// (Note). Each case below declares those types, and others.
const prelude = `package handlers

import (
	"context"
	"encoding/json"
	"time"
)

type Handlers struct{}

type Method struct{ Handle any }

func handle[P, R any](fn func(context.Context, *P) (R, error)) any { return fn }

func (h *Handlers) Methods() map[string]Method {
	return map[string]Method{"x/call": {Handle: handle(h.call)}}
}

func (h *Handlers) call(context.Context, *Params) (*Result, error) { return nil, nil }

var notifications = map[string]any{"x/did_note": Note{}}

var editorRequests = map[string][2]any{"x/ask": {askParams{}, askAnswer{}}}

type askParams struct {
	Q string ` + "`json:\"q\"`" + `
}

type askAnswer struct {
	Yes bool ` + "`json:\"yes\"`" + `
}

var _ json.RawMessage
var _ time.Time
`

// TestRules: each rule of the package's doc comment, as Go in and
// TypeScript out.
func TestRules(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "the tables",
			src:  "type Params struct{ A string `json:\"a\"` }\ntype Result struct{}\ntype Note struct{}",
			want: []string{
				"export interface BridgeRequests {\n  'x/call': { params: Params; result: Result };\n}",
				"export interface BridgeNotifications {\n  'x/did_note': Note;\n}",
				// The editor's requests: the params as sent, the answer's
				// fields optional, as the editor may leave them out.
				"export interface EditorRequests {\n  'x/ask': { params: AskParams; result: AskAnswer };\n}",
				"export interface AskParams {\n  q: string;\n}",
				"export interface AskAnswer {\n  yes?: boolean;\n}",
			},
		},
		{
			name: "json names, omitempty, skipped fields",
			src: `type Params struct{}
type Note struct{}
type Result struct {
	Name   string ` + "`json:\"name\"`" + `
	Opt    int    ` + "`json:\"opt,omitempty\"`" + `
	Skip   string ` + "`json:\"-\"`" + `
	hidden string
	Plain  bool
	Count  int64  ` + "`json:\"count,string\"`" + `
}
var _ = Result{}.hidden`,
			want: []string{"export interface Result {\n  name: string;\n  opt?: number;\n  Plain: boolean;\n  count: string;\n}"},
		},
		{
			name: "pointers, slices and maps are null unless omitempty",
			src: `type Params struct{}
type Note struct{}
type Item struct{ ID int ` + "`json:\"id\"`" + ` }
type Result struct {
	Ptr     *int           ` + "`json:\"ptr\"`" + `
	List    []string       ` + "`json:\"list\"`" + `
	Map     map[string]int ` + "`json:\"map\"`" + `
	OptList []string       ` + "`json:\"optList,omitempty\"`" + `
	OptPtr  *Item          ` + "`json:\"optPtr,omitempty\"`" + `
	Bytes   []byte         ` + "`json:\"bytes\"`" + `
	Items   []*Item        ` + "`json:\"items\"`" + `
}`,
			want: []string{"  ptr: number | null;\n  list: string[] | null;\n  map: Record<string, number> | null;\n  optList?: string[];\n  optPtr?: Item;\n  bytes: string | null;\n  items: Item[] | null;\n"},
		},
		{
			name: "raw JSON, any and interfaces are unknown; time is a string",
			src: `type Params struct{}
type Result struct{}
type Note struct {
	Raw  json.RawMessage ` + "`json:\"raw\"`" + `
	Any  any             ` + "`json:\"any\"`" + `
	Err  error           ` + "`json:\"err\"`" + `
	When time.Time       ` + "`json:\"when\"`" + `
}`,
			want: []string{"export interface Note {\n  raw: unknown;\n  any: unknown;\n  err: unknown;\n  when: string;\n}"},
		},
		{
			name: "embedded structs are flattened, and the shallower field wins",
			src: `type Params struct{}
type Note struct{}
type Base struct {
	ID   string ` + "`json:\"id\"`" + `
	Name string ` + "`json:\"name\"`" + `
}
type Result struct {
	Base
	Name int ` + "`json:\"name\"`" + `
}`,
			want: []string{"export interface Result {\n  id: string;\n  name: number;\n}"},
		},
		{
			name: "params: every field optional, pointers also null",
			src: `type Result struct{}
type Note struct{}
type Params struct {
	Text string ` + "`json:\"text\"`" + `
	Wait *int   ` + "`json:\"wait\"`" + `
	Inner struct {
		On bool ` + "`json:\"on\"`" + `
	} ` + "`json:\"inner\"`" + `
}`,
			want: []string{"export interface Params {\n  text?: string;\n  wait?: number | null;\n  inner?: {\n    on?: boolean;\n  };\n}"},
		},
		{
			name: "a type a result reaches is written as sent, in params too",
			src: `type Shared struct{ A string ` + "`json:\"a\"`" + ` }
type Params struct{ S Shared ` + "`json:\"s\"`" + ` }
type Result struct{ S Shared ` + "`json:\"s\"`" + ` }
type Note struct{}`,
			want: []string{"export interface Shared {\n  a: string;\n}", "export interface Params {\n  s?: Shared;\n}"},
		},
		{
			name: "an empty struct is Record<string, never>",
			src:  "type Params struct{}\ntype Result struct{}\ntype Note struct{}",
			want: []string{"export type Params = Record<string, never>;"},
		},
		{
			name: "a named string type with constants is their union",
			src: `type Params struct{}
type Note struct{}
type Color string
const (
	Red  Color = "red"
	Blue Color = "blue"
)
type Result struct{ C Color ` + "`json:\"c\"`" + ` }`,
			want: []string{"export type Color = 'blue' | 'red';", "  c: Color;\n"},
		},
		{
			name: "a sealed interface is a union on its discriminant",
			src: `type Params struct{}
type Result struct{}
type Shape interface{ shape() }
type Circle struct {
	Kind string  ` + "`json:\"kind\"`" + `
	R    float64 ` + "`json:\"r\"`" + `
}
type Square struct {
	Kind string ` + "`json:\"kind\"`" + `
	Side int    ` + "`json:\"side\"`" + `
}
func (*Circle) shape() {}
func (*Square) shape() {}
func shapes(side int) []Shape {
	s := &Square{Kind: "square", Side: side}
	if side > 9 {
		s.Kind = "box"
	}
	return []Shape{&Circle{Kind: "circle"}, s}
}
type Note struct{ S Shape ` + "`json:\"s\"`" + ` }`,
			want: []string{
				"export type Shape = Circle | Square;",
				"export interface Circle {\n  kind: 'circle';\n",
				"export interface Square {\n  kind: 'box' | 'square';\n",
				"  s: Shape;\n",
			},
		},
		{
			name: "doc comments come along",
			src: `type Params struct{}
type Note struct{}
// Result is what the call answers.
type Result struct {
	// N counts; it
	// never goes down.
	N int ` + "`json:\"n\"`" + `
}`,
			want: []string{"/** Result is what the call answers. */\nexport interface Result {\n  /**\n   * N counts; it\n   * never goes down.\n   */\n  n: number;\n}"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := generateSource(t, c.src)
			if err != nil {
				t.Fatalf("Go:\n%s\nerror: %v", c.src, err)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("Go:\n%s\nwant in the TypeScript:\n%s\ngot:\n%s", c.src, w, got)
				}
			}
		})
	}
}

// TestRefusals: what the generator cannot write stops it, saying why.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want string
	}{
		{
			name: "a type that marshals itself, without an override",
			src: `type Params struct{}
type Note struct{}
type Odd struct{}
func (Odd) MarshalJSON() ([]byte, error) { return []byte("1"), nil }
type Result struct{ O Odd ` + "`json:\"o\"`" + ` }`,
			want: "handlers.Odd has its own MarshalJSON or MarshalText: add its TypeScript to overrides",
		},
		{
			name: "a union member's discriminant set to a variable",
			src: `type Params struct{}
type Result struct{}
type Shape interface{ shape() }
type Circle struct{ Kind string ` + "`json:\"kind\"`" + ` }
func (*Circle) shape() {}
func circle(kind string) Shape { return &Circle{Kind: kind} }
type Note struct{ S Shape ` + "`json:\"s\"`" + ` }`,
			want: "Circle.Kind is set to a value that is not a constant",
		},
		{
			name: "a channel",
			src: `type Params struct{}
type Note struct{}
type Result struct{ C chan int ` + "`json:\"c\"`" + ` }`,
			want: "chan int does not marshal to JSON",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := generateSource(t, c.src)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Go:\n%s\nwant an error with %q\ngot %v\n%s", c.src, c.want, err, got)
			}
		})
	}
}

var (
	stdOnce sync.Once
	stdFset *token.FileSet
	std     types.ImporterFrom
)

// generateSource generates the TypeScript for a module whose package
// handlers is prelude and src.
func generateSource(t *testing.T, src string) (string, error) {
	t.Helper()
	stdOnce.Do(func() {
		stdFset = token.NewFileSet()
		std = sourceImporter(stdFset)
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "handlers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handlers", "handlers.go"), []byte(prelude+"\n"+src+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := newLoaderWith(dir, stdFset, std)
	if err != nil {
		t.Fatal(err)
	}
	b, err := generateWith(l, nil, nil)
	return string(b), err
}
