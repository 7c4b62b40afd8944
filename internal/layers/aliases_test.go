package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoorsExportNoAliases reads the module's source: ohtools exports no
// alias of an engine type.
func TestDoorsExportNoAliases(t *testing.T) {
	got, err := AliasViolations(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		t.Error(v)
	}
}

// TestAliasesAreFound: the rule finds the alias it exists to forbid (the
// one ohtools had, CommandInfo = engine.Record), under any import name and
// inside a type expression, and leaves unexported aliases, aliases of
// other packages' types, and test files alone.
func TestAliasesAreFound(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("observation.go", `package ohtools

import (
	"github.com/oh-bridge/oh-bridge/editor"
	eng "github.com/oh-bridge/oh-bridge/engine"
)

// CommandInfo is the engine's record.
type CommandInfo = eng.Record

type (
	Records = []*eng.Record
	record  = eng.Record
	Request = editor.Request
	Own     struct{ R eng.Record }
)
`)
	write("x_test.go", `package ohtools

import "github.com/oh-bridge/oh-bridge/engine"

type TestRecord = engine.Record
`)
	got, err := Aliases(dir, []string{"engine"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"observation.go:9: CommandInfo = eng.Record", "observation.go:12: Records = eng.Record"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Aliases = %q, want %q", got, want)
	}
}
