package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// shape is how a named type is written: as the bridge sends it (out), or,
// when only params reach it, as the bridge reads it (in).
type shape uint8

const (
	out shape = 1 << iota
	in
)

// override is the TypeScript of a type that marshals itself (MarshalJSON
// or MarshalText), which the generator cannot read from its fields.
type override struct {
	// ts is the type; %[1]s, %[2]s, ... are the TypeScript names of deps.
	ts string
	// deps are types of the same package the TypeScript names.
	deps []string
	// declare writes `export type Name = ts;` and refers to it by name;
	// otherwise ts is written in place.
	declare bool
}

// overrides are the types with a marshaller of their own, by package path
// and name. A reached type that marshals itself and is not here stops the
// generator.
var overrides = map[string]override{
	"time.Time":                {ts: "string"},
	"encoding/json.RawMessage": {ts: "unknown"},
	"encoding/json.Number":     {ts: "number"},
	"github.com/oh-bridge/oh-bridge/ohactions.Object": {ts: "Record<string, unknown>"},
	// OpenHands' observation dict (event_to_dict's keys, in its order).
	"github.com/oh-bridge/oh-bridge/ohactions.Observation": {ts: "Record<string, unknown>"},
	// updates.ToolCallContent.MarshalJSON: a text block, or a diff whose
	// oldText is null for a new file.
	"github.com/oh-bridge/oh-bridge/updates.ToolCallContent": {
		ts:      "\n  | { type: 'content'; content: %[1]s | null }\n  | { type: 'diff'; path: string; oldText: string | null; newText: string }",
		deps:    []string{"ContentBlock"},
		declare: true,
	},
}

// union is a sealed interface (one with an unexported method) written as
// the union of its package's types that implement it, discriminated by a
// string field that each sets to constants of its own.
type union struct {
	members []*types.TypeName
	tag     string // the discriminant's JSON name
}

// gen walks the types the tables reach and writes their TypeScript.
type gen struct {
	l      *loader
	shapes map[*types.TypeName]shape
	names  map[*types.TypeName]string
	unions map[*types.TypeName]*union
	// tags are the values of each union member's discriminant field.
	tags map[*types.Var][]string
	docs map[types.Object]string
	errs []error
}

func newGen(l *loader) *gen {
	g := &gen{
		l:      l,
		shapes: map[*types.TypeName]shape{},
		names:  map[*types.TypeName]string{},
		unions: map[*types.TypeName]*union{},
		tags:   map[*types.Var][]string{},
		docs:   map[types.Object]string{},
	}
	g.readDocs()
	return g
}

func (g *gen) fail(format string, args ...any) {
	g.errs = append(g.errs, fmt.Errorf(format, args...))
}

func qualified(tn *types.TypeName) string {
	if tn.Pkg() == nil {
		return tn.Name()
	}
	return tn.Pkg().Path() + "." + tn.Name()
}

// ---- reaching ----

// reach marks the named types t reaches, with the shape they are used in.
func (g *gen) reach(t types.Type, s shape) {
	switch t := t.(type) {
	case *types.Alias:
		g.reach(types.Unalias(t), s)
	case *types.Named:
		tn := t.Obj()
		if t.TypeArgs().Len() > 0 {
			g.fail("%s: generic types are not supported", qualified(tn))
			return
		}
		if o, ok := overrides[qualified(tn)]; ok {
			if o.declare && g.shapes[tn]&s == 0 {
				g.shapes[tn] |= s
				for _, d := range o.deps {
					dep, ok := tn.Pkg().Scope().Lookup(d).(*types.TypeName)
					if !ok {
						g.fail("override of %s: %s has no type %s", qualified(tn), tn.Pkg().Path(), d)
						continue
					}
					g.reach(dep.Type(), out)
				}
			}
			return
		}
		if marshals(t) {
			g.fail("%s has its own MarshalJSON or MarshalText: add its TypeScript to overrides in internal/protogen", qualified(tn))
			return
		}
		if g.shapes[tn]&s != 0 {
			return
		}
		g.shapes[tn] |= s
		switch u := t.Underlying().(type) {
		case *types.Interface:
			if un := g.union(tn, u); un != nil {
				for _, m := range un.members {
					g.reach(m.Type(), s)
				}
			}
		default:
			g.reach(u, s)
		}
	case *types.Pointer:
		g.reach(t.Elem(), s)
	case *types.Slice:
		g.reach(t.Elem(), s)
	case *types.Array:
		g.reach(t.Elem(), s)
	case *types.Map:
		g.reach(t.Elem(), s)
	case *types.Struct:
		for _, f := range g.fields(t) {
			g.reach(f.typ, s)
		}
	case *types.Basic, *types.Interface:
	default:
		g.fail("%s does not marshal to JSON", t)
	}
}

// marshals says whether t marshals itself.
func marshals(t types.Type) bool {
	for _, m := range []string{"MarshalJSON", "MarshalText"} {
		for _, r := range []types.Type{t, types.NewPointer(t)} {
			if sel := types.NewMethodSet(r).Lookup(nil, m); sel != nil {
				return true
			}
		}
	}
	return false
}

// ---- struct fields, as encoding/json sees them ----

type jsonField struct {
	name     string
	v        *types.Var // nil for a name encoding/json drops
	typ      types.Type
	optional bool // omitempty or omitzero
	asString bool // the ",string" option on a string, number or boolean
	index    []int
	tagged   bool
}

// fields lists a struct's JSON fields: json tag names, "-" skipped,
// unexported skipped, untagged embedded structs flattened with
// encoding/json's rules (the shallowest field wins, then the tagged one;
// a tie drops both).
func (g *gen) fields(st *types.Struct) []jsonField {
	type level struct {
		st    *types.Struct
		index []int
	}
	var all []jsonField
	current := []level{{st, nil}}
	visited := map[*types.Struct]bool{}
	for len(current) > 0 {
		var next []level
		var found []jsonField
		for _, lv := range current {
			if visited[lv.st] {
				continue
			}
			visited[lv.st] = true
			for i := 0; i < lv.st.NumFields(); i++ {
				v := lv.st.Field(i)
				tag := reflect.StructTag(lv.st.Tag(i)).Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(append([]int(nil), lv.index...), i)
				if v.Embedded() {
					t := v.Type()
					if p, ok := t.Underlying().(*types.Pointer); ok {
						t = p.Elem()
					}
					if est, ok := t.Underlying().(*types.Struct); ok && name == "" && !marshals(t) {
						next = append(next, level{est, index})
						continue
					}
					if !v.Exported() {
						continue
					}
				} else if !v.Exported() {
					continue
				}
				f := jsonField{name: name, v: v, typ: v.Type(), index: index, tagged: name != ""}
				if f.name == "" {
					f.name = v.Name()
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						f.optional = true
					case "string":
						f.asString = stringable(v.Type())
					}
				}
				found = append(found, f)
			}
		}
		// Within a depth, a name two fields share goes to the tagged one
		// only; a shallower field of that name hides them all.
		byName := map[string][]jsonField{}
		for _, f := range found {
			byName[f.name] = append(byName[f.name], f)
		}
		for name, fs := range byName {
			if hidden(all, name) {
				continue
			}
			var tagged []jsonField
			for _, f := range fs {
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
			switch {
			case len(fs) == 1:
				all = append(all, fs[0])
			case len(tagged) == 1:
				all = append(all, tagged[0])
			default:
				// Ambiguous: encoding/json drops the name. Kept without
				// a field, it still hides deeper fields of that name.
				all = append(all, jsonField{name: name})
			}
		}
		current = next
	}
	var out []jsonField
	for _, f := range all {
		if f.v != nil {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessIndex(out[i].index, out[j].index) })
	return out
}

func hidden(fs []jsonField, name string) bool {
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

func lessIndex(a, b []int) bool {
	for i := range a {
		if i >= len(b) {
			return false
		}
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// stringable says whether ",string" applies: strings, numbers, booleans
// (and pointers to them).
func stringable(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&(types.IsString|types.IsNumeric|types.IsBoolean) != 0
}

// ---- unions ----

// union returns the union a sealed interface stands for, or nil for an
// interface the generator writes as unknown.
func (g *gen) union(tn *types.TypeName, iface *types.Interface) *union {
	if un, ok := g.unions[tn]; ok {
		return un
	}
	g.unions[tn] = nil
	sealed := false
	for i := 0; i < iface.NumMethods(); i++ {
		if !iface.Method(i).Exported() {
			sealed = true
		}
	}
	if !sealed || g.l.ofType(tn) == nil {
		return nil
	}
	scope := tn.Pkg().Scope()
	var members []*types.TypeName
	for _, name := range scope.Names() {
		m, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || m.IsAlias() || m == tn {
			continue
		}
		if _, isIface := m.Type().Underlying().(*types.Interface); isIface {
			continue
		}
		if types.Implements(m.Type(), iface) || types.Implements(types.NewPointer(m.Type()), iface) {
			members = append(members, m)
		}
	}
	if len(members) == 0 {
		g.fail("%s: no type implements it", qualified(tn))
		return nil
	}
	// The discriminant: a string field every member has, set to
	// constants that no two members share.
	var tags []string
	var why []error
	values := map[string]map[*types.TypeName][]string{}
	candidates := map[string]int{}
	for _, m := range members {
		st, ok := m.Type().Underlying().(*types.Struct)
		if !ok {
			g.fail("%s implements %s and is not a struct", qualified(m), qualified(tn))
			return nil
		}
		for _, f := range g.fields(st) {
			if b, ok := f.typ.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 && !f.optional {
				vals, err := g.constValues(m, f.v)
				if err != nil {
					// Not a discriminant; say why if none is found.
					why = append(why, err)
					continue
				}
				candidates[f.name]++
				if values[f.name] == nil {
					values[f.name] = map[*types.TypeName][]string{}
				}
				values[f.name][m] = vals
			}
		}
	}
	for name, n := range candidates {
		if n != len(members) {
			continue
		}
		seen := map[string]bool{}
		ok := true
		for _, vals := range values[name] {
			if len(vals) == 0 {
				ok = false
			}
			for _, v := range vals {
				if seen[v] {
					ok = false
				}
				seen[v] = true
			}
		}
		if ok {
			tags = append(tags, name)
		}
	}
	if len(tags) != 1 {
		sort.Strings(tags)
		g.fail("%s: its members %v need exactly one discriminant (a string field each sets to constants no other member uses); found %v\n%w", qualified(tn), names(members), tags, errors.Join(why...))
		return nil
	}
	un := &union{members: members, tag: tags[0]}
	for _, m := range members {
		for _, f := range g.fields(m.Type().Underlying().(*types.Struct)) {
			if f.name == un.tag {
				g.tags[f.v] = values[un.tag][m]
			}
		}
	}
	g.unions[tn] = un
	return un
}

func names(tns []*types.TypeName) []string {
	var out []string
	for _, tn := range tns {
		out = append(out, tn.Name())
	}
	return out
}

// constValues are the values the module's code gives field v of struct
// m: in composite literals of m and in assignments to the field. A value
// that is not a constant is an error: the union could not name it.
func (g *gen) constValues(m *types.TypeName, v *types.Var) ([]string, error) {
	set := map[string]bool{}
	var errs []error
	add := func(p *pkg, e ast.Expr) {
		tv := p.info.Types[e]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			errs = append(errs, fmt.Errorf("%s: %s.%s is set to a value that is not a constant", g.l.fset.Position(e.Pos()), m.Name(), v.Name()))
			return
		}
		set[constant.StringVal(tv.Value)] = true
	}
	paths := make([]string, 0, len(g.l.pkgs))
	for path := range g.l.pkgs {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		p := g.l.pkgs[path]
		if p == nil {
			continue
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					t := p.info.TypeOf(n)
					if t == nil || !types.Identical(t, m.Type()) {
						return true
					}
					st := m.Type().Underlying().(*types.Struct)
					for i, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							if id, ok := kv.Key.(*ast.Ident); ok && p.info.Uses[id] == v {
								add(p, kv.Value)
							}
						} else if st.Field(i) == v {
							add(p, e)
						}
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && p.info.Selections[sel] != nil && p.info.Selections[sel].Obj() == v && len(n.Rhs) == len(n.Lhs) {
							add(p, n.Rhs[i])
						}
					}
				}
				return true
			})
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// enum returns the constants of a named string type, declared in its
// package, sorted; nil if it has none.
func enum(tn *types.TypeName) []string {
	b, ok := tn.Type().Underlying().(*types.Basic)
	if !ok || b.Info()&types.IsString == 0 || tn.Pkg() == nil {
		return nil
	}
	var out []string
	scope := tn.Pkg().Scope()
	for _, name := range scope.Names() {
		c, ok := scope.Lookup(name).(*types.Const)
		if ok && types.Identical(c.Type(), tn.Type()) && c.Val().Kind() == constant.String {
			out = append(out, constant.StringVal(c.Val()))
		}
	}
	sort.Strings(out)
	return out
}

// ---- names ----

// declared says whether a named type gets a declaration of its own:
// structs, unions, enums, declared overrides and named slices and maps;
// other named types are written as what they are.
func (g *gen) declared(tn *types.TypeName) bool {
	if o, ok := overrides[qualified(tn)]; ok {
		return o.declare
	}
	switch u := tn.Type().Underlying().(type) {
	case *types.Struct, *types.Slice, *types.Map, *types.Array:
		return true
	case *types.Interface:
		return g.unions[tn] != nil
	case *types.Basic:
		return len(enum(tn)) > 0 && u.Info()&types.IsString != 0
	}
	return false
}

// assignNames gives each declared type its TypeScript name: its Go name
// with a capital, and its package's name before it when two packages'
// types would share it.
func (g *gen) assignNames(reserved ...string) {
	byName := map[string][]*types.TypeName{}
	for tn := range g.shapes {
		if g.declared(tn) {
			byName[capital(tn.Name())] = append(byName[capital(tn.Name())], tn)
		}
	}
	taken := map[string]*types.TypeName{}
	for _, r := range reserved {
		taken[r] = nil
	}
	for name, tns := range byName {
		for _, tn := range tns {
			n := name
			if len(tns) > 1 {
				n = capital(tn.Pkg().Name()) + name
			}
			if other, dup := taken[n]; dup {
				g.fail("%s and %s would both be %s in TypeScript", qualified(tn), describe(other), n)
				continue
			}
			taken[n] = tn
			g.names[tn] = n
		}
	}
}

func describe(tn *types.TypeName) string {
	if tn == nil {
		return "the generator's own declaration"
	}
	return qualified(tn)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ---- writing ----

// ts writes t where it cannot be absent or null: the caller adds "?" or
// "| null" for a field.
func (g *gen) ts(t types.Type, s shape, indent string) string {
	switch t := t.(type) {
	case *types.Alias:
		return g.ts(types.Unalias(t), s, indent)
	case *types.Named:
		tn := t.Obj()
		if o, ok := overrides[qualified(tn)]; ok && !o.declare {
			return o.ts
		}
		if name, ok := g.names[tn]; ok {
			return name
		}
		if _, isIface := t.Underlying().(*types.Interface); isIface {
			return "unknown"
		}
		return g.ts(t.Underlying(), s, indent)
	case *types.Pointer:
		return g.ts(t.Elem(), s, indent)
	case *types.Slice:
		if b, ok := t.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Byte {
			return "string" // base64
		}
		return array(g.ts(t.Elem(), s, indent))
	case *types.Array:
		return array(g.ts(t.Elem(), s, indent))
	case *types.Map:
		return "Record<string, " + g.ts(t.Elem(), s, indent) + ">"
	case *types.Struct:
		return g.object(t, s, indent)
	case *types.Basic:
		switch {
		case t.Info()&types.IsBoolean != 0:
			return "boolean"
		case t.Info()&types.IsString != 0:
			return "string"
		case t.Info()&(types.IsInteger|types.IsFloat) != 0:
			return "number"
		}
	case *types.Interface:
		return "unknown"
	}
	g.fail("%s does not marshal to JSON", t)
	return "never"
}

func array(elem string) string {
	if strings.ContainsAny(elem, " |&") && !strings.HasPrefix(elem, "{") && !strings.HasPrefix(elem, "Record<") {
		return "(" + elem + ")[]"
	}
	return elem + "[]"
}

// nullable says whether a nil value of t marshals as null: pointers,
// slices and maps (the types written unknown hold null already).
func nullable(t types.Type) bool {
	if isRaw(t) {
		return false
	}
	switch types.Unalias(t).Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Slice:
		return true
	}
	return false
}

// isRaw says whether t is written as unknown, which holds null.
func isRaw(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && overrides[qualified(n.Obj())].ts == "unknown"
}

// field writes one property of an object.
func (g *gen) field(f jsonField, s shape, indent string) string {
	typ := g.ts(f.typ, s, indent)
	if f.asString {
		typ = "string"
	}
	if vals, ok := g.tags[f.v]; ok {
		quoted := make([]string, len(vals))
		for i, v := range vals {
			quoted[i] = quote(v)
		}
		typ = strings.Join(quoted, " | ")
	}
	optional := f.optional
	null := nullable(f.typ) && typ != "unknown"
	if s == in {
		optional = true
	} else if f.optional {
		null = false
	}
	var b strings.Builder
	b.WriteString(g.doc(f.v, indent))
	b.WriteString(indent)
	b.WriteString(property(f.name))
	if optional {
		b.WriteString("?")
	}
	b.WriteString(": ")
	b.WriteString(typ)
	if null {
		b.WriteString(" | null")
	}
	b.WriteString(";\n")
	return b.String()
}

// object writes a struct as an object type.
func (g *gen) object(st *types.Struct, s shape, indent string) string {
	fs := g.fields(st)
	if len(fs) == 0 {
		return "Record<string, never>"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, f := range fs {
		b.WriteString(g.field(f, s, indent+"  "))
	}
	b.WriteString(indent + "}")
	return b.String()
}

// declaration writes the declaration of a named type.
func (g *gen) declaration(tn *types.TypeName) string {
	name := g.names[tn]
	s := out
	if g.shapes[tn]&out == 0 {
		s = in
	}
	var b strings.Builder
	b.WriteString(g.doc(tn, ""))
	if o, ok := overrides[qualified(tn)]; ok {
		args := make([]any, len(o.deps))
		for i, d := range o.deps {
			dep := tn.Pkg().Scope().Lookup(d).(*types.TypeName)
			args[i] = g.ts(dep.Type(), out, "")
		}
		ts := fmt.Sprintf(o.ts, args...)
		if !strings.HasPrefix(ts, "\n") {
			ts = " " + ts
		}
		fmt.Fprintf(&b, "export type %s =%s;\n", name, ts)
		return b.String()
	}
	switch u := tn.Type().Underlying().(type) {
	case *types.Struct:
		if g.object(u, s, "") == "Record<string, never>" {
			fmt.Fprintf(&b, "export type %s = Record<string, never>;\n", name)
		} else {
			fmt.Fprintf(&b, "export interface %s %s\n", name, g.object(u, s, ""))
		}
	case *types.Interface:
		un := g.unions[tn]
		var members []string
		for _, m := range un.members {
			members = append(members, g.ts(m.Type(), s, ""))
		}
		sort.Strings(members)
		fmt.Fprintf(&b, "export type %s = %s;\n", name, strings.Join(members, " | "))
	case *types.Basic:
		var vals []string
		for _, v := range enum(tn) {
			vals = append(vals, quote(v))
		}
		fmt.Fprintf(&b, "export type %s = %s;\n", name, strings.Join(vals, " | "))
	default:
		fmt.Fprintf(&b, "export type %s = %s;\n", name, g.ts(u, s, ""))
	}
	return b.String()
}

// quote writes a string literal type.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}

// property writes a property name, quoted when it is not an identifier.
func property(name string) string {
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return quote(name)
		}
	}
	if name == "" {
		return "''"
	}
	return name
}

// ---- doc comments ----

// readDocs keeps the doc comments of the module's types and fields.
func (g *gen) readDocs() {
	for _, p := range g.l.pkgs {
		if p == nil {
			continue
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GenDecl:
					for _, s := range n.Specs {
						ts, ok := s.(*ast.TypeSpec)
						if !ok {
							continue
						}
						doc := ts.Doc
						if doc == nil && len(n.Specs) == 1 {
							doc = n.Doc
						}
						if obj := p.info.Defs[ts.Name]; obj != nil && doc != nil {
							g.docs[obj] = doc.Text()
						}
					}
				case *ast.Field:
					doc := n.Doc
					if doc == nil {
						doc = n.Comment
					}
					if doc == nil {
						return true
					}
					for _, name := range n.Names {
						if obj := p.info.Defs[name]; obj != nil {
							g.docs[obj] = doc.Text()
						}
					}
				}
				return true
			})
		}
	}
}

// doc writes obj's Go doc comment as a TSDoc comment.
func (g *gen) doc(obj types.Object, indent string) string {
	text := strings.TrimSpace(g.docs[obj])
	if text == "" {
		return ""
	}
	text = strings.ReplaceAll(text, "*/", "*\\/")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return indent + "/** " + lines[0] + " */\n"
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(strings.TrimRight(indent+" * "+l, " ") + "\n")
	}
	b.WriteString(indent + " */\n")
	return b.String()
}
