package layers

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

func kindNames() []string {
	var out []string
	for k := range ohevents.Kinds {
		out = append(out, k)
	}
	return out
}

// TestOnlyTheEventsPackageDecodesEvents reads every non-test Go file of
// the module's packages, the demo's included, and fails where one reads
// an agent-server event by hand (EventReaders).
func TestOnlyTheEventsPackageDecodesEvents(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles", Module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	files := 0
	for {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, Module+"/")
		if strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "extension/") {
			continue // the tests' helpers (a scripted model, the real server's runner) speak other protocols
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files++
			found, err := EventReaders(pkg, path, src, kindNames())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range found {
				t.Error(f)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if files < 100 {
		t.Fatalf("go list found only %d files", files)
	}
}

// TestEventReadersAreFound: the ways the bridge read events before
// ohevents (agentserver's header, the tracker's struct, a switch on the
// kind's name in the demo) are caught; reading the typed values is not.
func TestEventReadersAreFound(t *testing.T) {
	cases := []struct {
		name, pkg, src, want string
	}{
		{"a header struct", "agentserver", "package agentserver\ntype header struct {\n\tActionID string `json:\"action_id\"`\n}\n",
			`agentserver declares a struct field "action_id" of an agent-server event`},
		{"a switch on the kind", "updates", "package updates\nfunc f(kind string) bool {\n\tswitch kind {\n\tcase \"ObservationEvent\":\n\t\treturn true\n\t}\n\treturn false\n}\n",
			`updates names the event kind "ObservationEvent"`},
		{"a map read by hand", "demo", "package main\nfunc f(e map[string]any) bool { return e[\"kind\"] == \"ActionEvent\" }\n",
			`demo names the event kind "ActionEvent"`},
		{"an anonymous struct", "conversation", "package conversation\nvar a struct {\n\tToolName string `json:\"tool_name,omitempty\"`\n}\n",
			`conversation declares a struct field "tool_name"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := EventReaders(c.pkg, "x.go", []byte(c.src), kindNames())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("EventReaders = %q, want one containing %q", got, c.want)
			}
		})
	}
	typed := "package updates\nimport \"github.com/oh-bridge/oh-bridge/ohevents\"\nfunc f(ev ohevents.Event) string {\n\tif a, ok := ev.(*ohevents.ActionEvent); ok {\n\t\treturn a.ToolName\n\t}\n\treturn \"\"\n}\n"
	if got, _ := EventReaders("updates", "x.go", []byte(typed), kindNames()); len(got) != 0 {
		t.Errorf("typed reading reported: %q", got)
	}
	if got, _ := EventReaders(EventsPackage, "x.go", []byte("package ohevents\nvar k = \"ActionEvent\"\n"), kindNames()); len(got) != 0 {
		t.Errorf("the events package reported: %q", got)
	}
}
