package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// NoAliases are the doors that must export their own vocabulary: package
// → the packages below it none of whose types it may export an alias of.
// An alias (type CommandInfo = engine.Record) lets the lower package leak
// through the door, and ties every reader above to it.
var NoAliases = map[string][]string{
	"ohtools": {"engine"},
}

// Aliases lists the exported type aliases in the Go files of dir (tests
// excluded) whose target names a type of one of the packages pkgs
// (module-relative), in the order of the source: "observation.go:97:
// CommandInfo = engine.Record".
func Aliases(dir string, pkgs []string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		// The names the file imports the forbidden packages under.
		names := map[string]string{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, Module+"/")
			if !ok || !contains(pkgs, rel) {
				continue
			}
			name := filepath.Base(rel)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = rel
		}
		if len(names) == 0 {
			continue
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if !ts.Assign.IsValid() || !ts.Name.IsExported() {
					continue
				}
				ast.Inspect(ts.Type, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] != "" {
						pos := fset.Position(ts.Pos())
						out = append(out, fmt.Sprintf("%s:%d: %s = %s.%s", filepath.Base(pos.Filename), pos.Line, ts.Name.Name, x.Name, sel.Sel.Name))
					}
					return false
				})
			}
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// AliasViolations checks NoAliases over the module's source at root.
func AliasViolations(root string) ([]string, error) {
	var out []string
	for pkg, below := range NoAliases {
		found, err := Aliases(filepath.Join(root, filepath.FromSlash(pkg)), below)
		if err != nil {
			return nil, err
		}
		for _, a := range found {
			out = append(out, fmt.Sprintf("%s exports an alias of %s's type (%s): a door exports types of its own; declare one and convert at the edge", pkg, strings.Join(below, ", "), a))
		}
	}
	sort.Strings(out)
	return out, nil
}
