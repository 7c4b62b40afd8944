package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
)

// loader type-checks the module's own packages from source, keeping their
// syntax and type information (the tables, method bodies and composite
// literals are read from them), and every other package through the
// standard library's source importer, which skips function bodies.
type loader struct {
	fset   *token.FileSet
	root   string // the module's directory
	module string // its path
	ctxt   build.Context
	other  types.ImporterFrom
	pkgs   map[string]*pkg
}

// pkg is a package of the module, checked with its syntax.
type pkg struct {
	types *types.Package
	files []*ast.File
	info  *types.Info
}

func newLoader(root string) (*loader, error) {
	fset := token.NewFileSet()
	return newLoaderWith(root, fset, sourceImporter(fset))
}

// sourceImporter is the standard library's source importer. Without cgo
// it reads the pure-Go files of packages like net and os/user instead of
// running the C toolchain, and the types are the same on every machine
// (importer.ForCompiler's source importer reads build.Default).
func sourceImporter(fset *token.FileSet) types.ImporterFrom {
	build.Default.CgoEnabled = false
	return importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
}

// newLoaderWith loads the module at root; other imports the rest, with
// fset.
func newLoaderWith(root string, fset *token.FileSet, other types.ImporterFrom) (*loader, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	var module string
	for _, line := range strings.Split(string(mod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			module = strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	if module == "" {
		return nil, fmt.Errorf("%s/go.mod names no module", root)
	}
	return &loader{fset: fset, root: root, module: module, ctxt: build.Default, other: other, pkgs: map[string]*pkg{}}, nil
}

func (l *loader) Import(path string) (*types.Package, error) {
	return l.ImportFrom(path, l.root, 0)
}

func (l *loader) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	if path == l.module || strings.HasPrefix(path, l.module+"/") {
		p, err := l.load(path)
		if err != nil {
			return nil, err
		}
		return p.types, nil
	}
	return l.other.ImportFrom(path, l.root, mode)
}

// load checks a package of the module, once.
func (l *loader) load(path string) (*pkg, error) {
	if p, ok := l.pkgs[path]; ok {
		if p == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return p, nil
	}
	l.pkgs[path] = nil
	dir := filepath.Join(l.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(path, l.module), "/")))
	bp, err := l.ctxt.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: l}
	tp, err := conf.Check(path, l.fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", path, err)
	}
	p := &pkg{types: tp, files: files, info: info}
	l.pkgs[path] = p
	return p, nil
}

// ofType returns the checked package that declares obj, if it is the
// module's.
func (l *loader) ofType(obj types.Object) *pkg {
	if obj.Pkg() == nil {
		return nil
	}
	return l.pkgs[obj.Pkg().Path()]
}
