package handlers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestNotificationsTable: handlers sends exactly the notifications the
// table (notifications.go) lists, each with the table's params type where
// the call names one.
func TestNotificationsTable(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if problems := checkNotifications(fset, files, notifications); len(problems) > 0 {
		t.Errorf("handlers/notifications.go and the notifications sent disagree:\n%s", strings.Join(problems, "\n"))
	}
}

// TestNotificationsCheck: the check finds each kind of disagreement.
func TestNotificationsCheck(t *testing.T) {
	type fooParams struct{}
	table := map[string]any{"x/did_foo": fooParams{}}
	cases := []struct {
		name  string
		src   string
		table map[string]any
		want  []string
	}{
		{
			name:  "agreement",
			src:   `func (h *Handlers) f() { h.notify(ctx, "x/did_foo", &fooParams{}) }`,
			table: table,
		},
		{
			name:  "sent and not in the table",
			src:   `func (h *Handlers) f() { h.notify(ctx, "x/did_foo", fooParams{}); h.conn.Notify(ctx, "x/did_bar", map[string]any{}) }`,
			table: table,
			want:  []string{`x.go:1:85: sends "x/did_bar", which the table does not list`},
		},
		{
			name:  "in the table and never sent",
			src:   `func (h *Handlers) f() {}`,
			table: table,
			want:  []string{`the table lists "x/did_foo", which nothing sends`},
		},
		{
			name:  "another params type",
			src:   `func (h *Handlers) f() { h.notify(ctx, "x/did_foo", &barParams{}) }`,
			table: table,
			want:  []string{`x.go:1:44: sends "x/did_foo" with barParams; the table says fooParams`},
		},
		{
			name:  "an unnamed literal",
			src:   `func (h *Handlers) f() { h.notify(ctx, "x/did_foo", map[string]any{"a": 1}) }`,
			table: table,
			want:  []string{`x.go:1:44: sends "x/did_foo" with an unnamed literal; send the table's fooParams`},
		},
		{
			name:  "a method that is not a literal",
			src:   `func (h *Handlers) f(m string) { h.notify(ctx, "x/did_foo", nil); h.conn.Notify(ctx, m, nil) }`,
			table: table,
			want:  []string{`x.go:1:85: the method is not a string literal, so the table cannot be checked`},
		},
		{
			name:  "notify forwarding its method",
			src:   `func (h *Handlers) notify(ctx context.Context, method string, p any) { h.conn.Notify(ctx, method, p) }; func (h *Handlers) f() { h.notify(ctx, "x/did_foo", nil) }`,
			table: table,
		},
		{
			name:  "a table entry that is not a named struct",
			src:   `func (h *Handlers) f() { h.notify(ctx, "x/did_foo", nil) }`,
			table: map[string]any{"x/did_foo": map[string]any{}},
			want:  []string{`the table's "x/did_foo" is a map[string]interface {}, not a named struct type`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package handlers; "+c.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := checkNotifications(fset, []*ast.File{f}, c.table)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("source: %s\ntable: %v\nwant:\n%s\ngot:\n%s", c.src, c.table, strings.Join(c.want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

// checkNotifications compares the notifications files send, by calls
// x.notify(ctx, method, params) and x.conn.Notify(ctx, method, params),
// with table: every method sent must be listed, every listed one sent,
// and a params composite literal must be of the listed type.
func checkNotifications(fset *token.FileSet, files []*ast.File, table map[string]any) []string {
	var problems []string
	sent := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isNotify(call) {
					return true
				}
				pos := fset.Position(call.Pos())
				lit, ok := call.Args[1].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					// notify passes its own method on.
					if id, ok := call.Args[1].(*ast.Ident); ok && fn.Name.Name == "notify" && isParam(fn, id.Name) {
						return true
					}
					problems = append(problems, fmt.Sprintf("%s: the method is not a string literal, so the table cannot be checked", pos))
					return true
				}
				method, err := strconv.Unquote(lit.Value)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s: %v", pos, err))
					return true
				}
				sent[method] = true
				want, listed := table[method]
				if !listed {
					problems = append(problems, fmt.Sprintf("%s: sends %q, which the table does not list", pos, method))
					return true
				}
				if unnamedLiteral(call.Args[2]) {
					problems = append(problems, fmt.Sprintf("%s: sends %q with an unnamed literal; send the table's %s", pos, method, typeName(reflect.TypeOf(want))))
					return true
				}
				if got := literalType(call.Args[2]); got != "" && got != typeName(reflect.TypeOf(want)) {
					problems = append(problems, fmt.Sprintf("%s: sends %q with %s; the table says %s", pos, method, got, typeName(reflect.TypeOf(want))))
				}
				return true
			})
		}
	}
	var methods []string
	for m := range table {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		if rt := reflect.TypeOf(table[m]); rt == nil || rt.Kind() != reflect.Struct || rt.Name() == "" {
			problems = append(problems, fmt.Sprintf("the table's %q is a %v, not a named struct type", m, rt))
		}
		if !sent[m] {
			problems = append(problems, fmt.Sprintf("the table lists %q, which nothing sends", m))
		}
	}
	return problems
}

// isNotify says whether call is x.notify(ctx, method, params) or
// x.conn.Notify(ctx, method, params).
func isNotify(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) != 3 {
		return false
	}
	switch sel.Sel.Name {
	case "notify":
		return true
	case "Notify":
		conn, ok := sel.X.(*ast.SelectorExpr)
		return ok && conn.Sel.Name == "conn"
	}
	return false
}

func isParam(fn *ast.FuncDecl, name string) bool {
	for _, f := range fn.Type.Params.List {
		for _, n := range f.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// literalType names the type of a composite literal, or &literal, as the
// source writes it ("didOutputParams", "agentserver.Status"); "" for any
// other expression, and for literals of unnamed types (map[string]any{}),
// which unnamedLiteral reports.
func literalType(e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return ""
	}
	switch t := lit.Type.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		if pkg, ok := t.X.(*ast.Ident); ok {
			return pkg.Name + "." + t.Sel.Name
		}
	}
	return ""
}

// unnamedLiteral says whether e is a composite literal, or &literal, of a
// type without a name (map[string]any{...}, struct{...}{...}): its shape
// would escape the table and the generated TypeScript.
func unnamedLiteral(e ast.Expr) bool {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	return ok && literalType(lit) == ""
}

// typeName names a table type as literalType does, from this package.
func typeName(rt reflect.Type) string {
	if rt == nil {
		return "nil"
	}
	if rt.PkgPath() == reflect.TypeOf(noParams{}).PkgPath() {
		return rt.Name()
	}
	return path.Base(rt.PkgPath()) + "." + rt.Name()
}

// TestEditorRequestsTable: each request the bridge sends the editor names
// a params and a result type of its own, for the generated TypeScript.
func TestEditorRequestsTable(t *testing.T) {
	if len(editorRequests) == 0 {
		t.Fatal("the editorRequests table is empty")
	}
	for method, pair := range editorRequests {
		for i, v := range pair {
			if rt := reflect.TypeOf(v); rt == nil || rt.Kind() != reflect.Struct || rt.Name() == "" {
				t.Errorf("editorRequests[%q][%d] is a %v, not a named struct type", method, i, rt)
			}
		}
	}
}
