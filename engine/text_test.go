package engine

import (
	"reflect"
	"testing"

	"github.com/oh-bridge/oh-bridge/pytext"
)

func TestSplitCommands(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"one", "ls -la", []string{"ls -la"}},
		{"semicolon", "echo a; echo b", []string{"echo a; echo b"}},
		{"and", "make && make test", []string{"make && make test"}},
		{"two lines", "echo a\necho b", []string{"echo a", "echo b"}},
		{"background then next line", "sleep 1 &\necho b", []string{"sleep 1 &", "echo b"}},
		{"heredoc", "cat <<EOF\nx\nEOF", []string{"cat <<EOF\nx\nEOF"}},
		{"heredoc then command", "cat <<EOF\nx\nEOF\necho y", []string{"cat <<EOF\nx\nEOF", "echo y"}},
		{"if block", "if true; then\n  echo y\nfi", []string{"if true; then\n  echo y\nfi"}},
		{"function", "f() {\n  echo x\n}", []string{"f() {\n  echo x\n}"}},
		{"continued line", "echo a \\\n  b", []string{"echo a \\\n  b"}},
		{"leading comment line", "# note\nls", []string{"# note", "ls"}},
		{"parse failure is one command", "echo 'unterminated\necho b", []string{"echo 'unterminated\necho b"}},
		{"empty", "  ", []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SplitCommands(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("SplitCommands(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestPyFloat(t *testing.T) {
	for in, want := range map[float64]string{2: "2.0", 0.5: "0.5", 120: "120.0", 1.25: "1.25", 1e-5: "1e-05", 1e16: "1e+16", 0: "0.0"} {
		if got := pytext.Float(in); got != want {
			t.Errorf("pytext.Float(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestPaneText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a  \nb\t\n", "a\nb\n"},
		{"10%\r100%\n", "100%\n"},
		{"abcdef\rxy\n", "xycdef\n"},
		{"a\tb", "a       b"},
		{"x\r\n", "x\n"},
	}
	for _, c := range cases {
		if got := paneText(c.in); got != c.want {
			t.Errorf("paneText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCommandOutputRemovesInputEcho(t *testing.T) {
	if got := commandOutput(" bob\nhi bob\n", "bob"); got != "hi bob" {
		t.Errorf("got %q", got)
	}
	if got := commandOutput("\x1c  x \n", ""); got != "x" {
		t.Errorf("Python whitespace: got %q", got)
	}
}
