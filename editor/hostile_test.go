//go:build unix

package editor_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
)

// TestViewSpecialFiles: view of a FIFO or a socket planted from a shell
// fails with not_regular_file, and its data names the path and the type,
// as fs/read_text_file's does.
func TestViewSpecialFiles(t *testing.T) {
	e, _, root := newEditor(t, editor.Options{}, nil)
	plant := exec.Command("bash", "-c", `mkfifo fifo && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'`)
	plant.Dir = root
	if out, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("planting: %v\n%s", err, out)
	}
	for _, c := range []struct{ name, typ string }{{"fifo", "fifo"}, {"sock", "socket"}} {
		p := filepath.Join(root, c.name)
		_, err := e.Execute(context.Background(), editor.Request{Command: editor.CommandView, Path: p})
		var te *editor.ToolError
		if !errors.As(err, &te) {
			t.Fatalf("view %s: %v, want a ToolError", c.name, err)
		}
		d := te.Data()
		if te.Kind != "not_regular_file" || d["type"] != c.typ || d["path"] != p {
			t.Errorf("view %s: kind %s, data %v; want not_regular_file with type %s and path %s", c.name, te.Kind, d, c.typ, p)
		}
	}
}
