package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
)

// request is one entry of the method table.
type request struct {
	method         string
	params, result types.Type
}

// notification is one entry of the notifications table.
type notification struct {
	method string
	params types.Type
}

// readMethods reads the method table: the one map literal that
// (*Handlers).Methods returns. Each entry's Handle is handle(fn), and fn's
// type is func(context.Context, *P) (R, error).
func readMethods(l *loader, p *pkg) ([]request, error) {
	var lits []*ast.CompositeLit
	for _, f := range p.files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "Methods" || fn.Recv == nil || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				ret, ok := n.(*ast.ReturnStmt)
				if !ok {
					return true
				}
				for _, r := range ret.Results {
					if lit, ok := r.(*ast.CompositeLit); ok && isMap(p.info.TypeOf(lit)) {
						lits = append(lits, lit)
					}
				}
				return true
			})
		}
	}
	if len(lits) != 1 {
		return nil, fmt.Errorf("%s: want one map literal returned by Methods, found %d", p.types.Path(), len(lits))
	}
	var out []request
	for _, e := range lits[0].Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: a method table entry without a key", l.fset.Position(e.Pos()))
		}
		method, err := stringConst(l, p, kv.Key)
		if err != nil {
			return nil, err
		}
		fn, err := handlerOf(l, p, kv.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		sig, ok := p.info.TypeOf(fn).Underlying().(*types.Signature)
		if !ok || sig.Params().Len() != 2 || sig.Results().Len() != 2 {
			return nil, fmt.Errorf("%s: %s: the handler is not func(ctx, *P) (R, error)", method, l.fset.Position(fn.Pos()))
		}
		params, ok := sig.Params().At(1).Type().(*types.Pointer)
		if !ok {
			return nil, fmt.Errorf("%s: %s: the handler's params are not a pointer", method, l.fset.Position(fn.Pos()))
		}
		out = append(out, request{method: method, params: params.Elem(), result: sig.Results().At(0).Type()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].method < out[j].method })
	for i := 1; i < len(out); i++ {
		if out[i].method == out[i-1].method {
			return nil, fmt.Errorf("method %s is in the table twice", out[i].method)
		}
	}
	return out, nil
}

// handlerOf finds fn in an entry {Handle: handle(fn), ...}.
func handlerOf(l *loader, p *pkg, v ast.Expr) (ast.Expr, error) {
	lit, ok := v.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("%s: the entry is not a composite literal", l.fset.Position(v.Pos()))
	}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if id, ok := kv.Key.(*ast.Ident); !ok || id.Name != "Handle" {
			continue
		}
		call, ok := kv.Value.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return nil, fmt.Errorf("%s: Handle is not handle(fn)", l.fset.Position(kv.Value.Pos()))
		}
		return call.Args[0], nil
	}
	return nil, fmt.Errorf("%s: the entry has no Handle", l.fset.Position(v.Pos()))
}

// readNotifications reads `var notifications = map[string]any{method:
// T{}, ...}`: each value's type is the notification's params.
func readNotifications(l *loader, p *pkg) ([]notification, error) {
	lit, err := varLiteral(p, "notifications")
	if err != nil {
		return nil, err
	}
	var out []notification
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: a notifications entry without a key", l.fset.Position(e.Pos()))
		}
		method, err := stringConst(l, p, kv.Key)
		if err != nil {
			return nil, err
		}
		out = append(out, notification{method: method, params: valueType(p, kv.Value)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].method < out[j].method })
	return out, nil
}

// readEditorRequests reads `var editorRequests = map[string][2]any{method:
// {P{}, R{}}, ...}`: the requests the bridge sends the editor, each with
// the params it sends and the result it reads back.
func readEditorRequests(l *loader, p *pkg) ([]request, error) {
	lit, err := varLiteral(p, "editorRequests")
	if err != nil {
		return nil, err
	}
	var out []request
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: an editorRequests entry without a key", l.fset.Position(e.Pos()))
		}
		method, err := stringConst(l, p, kv.Key)
		if err != nil {
			return nil, err
		}
		pair, ok := kv.Value.(*ast.CompositeLit)
		if !ok || len(pair.Elts) != 2 {
			return nil, fmt.Errorf("%s: %s: the entry is not {params{}, result{}}", l.fset.Position(kv.Value.Pos()), method)
		}
		out = append(out, request{method: method, params: valueType(p, pair.Elts[0]), result: valueType(p, pair.Elts[1])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].method < out[j].method })
	return out, nil
}

// eventKind is one entry of ohevents.Kinds: a kind's name and its type.
type eventKind struct {
	kind string
	typ  types.Type
}

// readEventKinds reads `var Kinds = map[string]Event{kind: &T{}, ...}`.
func readEventKinds(l *loader, p *pkg) ([]eventKind, error) {
	lit, err := varLiteral(p, "Kinds")
	if err != nil {
		return nil, err
	}
	var out []eventKind
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: a Kinds entry without a key", l.fset.Position(e.Pos()))
		}
		kind, err := stringConst(l, p, kv.Key)
		if err != nil {
			return nil, err
		}
		out = append(out, eventKind{kind: kind, typ: valueType(p, kv.Value)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].kind < out[j].kind })
	return out, nil
}

// valueType is the type a table value stands for: T for T{} and &T{}.
func valueType(p *pkg, e ast.Expr) types.Type {
	t := p.info.TypeOf(e)
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	return t
}

// varLiteral finds `var name = <composite literal>` in p.
func varLiteral(p *pkg, name string) (*ast.CompositeLit, error) {
	for _, f := range p.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name || i >= len(vs.Values) {
						continue
					}
					if c, ok := vs.Values[i].(*ast.CompositeLit); ok {
						return c, nil
					}
				}
			}
		}
	}
	return nil, fmt.Errorf("%s: no `var %s = map[string]...{...}`", p.types.Path(), name)
}

func stringConst(l *loader, p *pkg, e ast.Expr) (string, error) {
	tv := p.info.Types[e]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", fmt.Errorf("%s: the key is not a constant string", l.fset.Position(e.Pos()))
	}
	return constant.StringVal(tv.Value), nil
}

func isMap(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Map)
	return ok
}
