package dist

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestWheelRecord: a wheel lists every file in its RECORD with the
// file's sha256 (urlsafe base64, no padding) and size, RECORD itself
// with neither and last; its script keeps its executable mode, and
// WHEEL has a Tag line for each platform tag (PEP 427).
func TestWheelRecord(t *testing.T) {
	w := &Wheel{Version: "9.8.7", Tags: linuxTags("x86_64"), Readme: "# hi\n", License: []byte("MIT\n"),
		Files: []File{{Path: DataScripts("9.8.7") + "oh-bridge", Data: []byte("\x7fELF pretend"), Mode: 0o755}}}
	var buf bytes.Buffer
	if err := w.Write(&buf); err != nil {
		t.Fatal(err)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range z.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = data
		names = append(names, f.Name)
		if strings.HasSuffix(f.Name, "/oh-bridge") && f.Mode().Perm() != 0o755 {
			t.Errorf("%s has mode %v, want 0755", f.Name, f.Mode())
		}
	}
	if last := names[len(names)-1]; last != "oh_bridge-9.8.7.dist-info/RECORD" {
		t.Errorf("the last file is %s, want the RECORD", last)
	}
	var want strings.Builder
	for _, name := range names[:len(names)-1] {
		sum := sha256.Sum256(files[name])
		fmt.Fprintf(&want, "%s,sha256=%s,%d\n", name, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[name]))
	}
	want.WriteString("oh_bridge-9.8.7.dist-info/RECORD,,\n")
	if got := string(files["oh_bridge-9.8.7.dist-info/RECORD"]); got != want.String() {
		t.Errorf("RECORD:\n%s\nwant:\n%s", got, want.String())
	}
	wheel := string(files["oh_bridge-9.8.7.dist-info/WHEEL"])
	for _, line := range []string{"Root-Is-Purelib: false", "Tag: py3-none-manylinux_2_17_x86_64", "Tag: py3-none-manylinux2014_x86_64", "Tag: py3-none-musllinux_1_1_x86_64"} {
		if !strings.Contains(wheel, line+"\n") {
			t.Errorf("WHEEL has no %q:\n%s", line, wheel)
		}
	}
	if meta := string(files["oh_bridge-9.8.7.dist-info/METADATA"]); !strings.Contains(meta, "\nVersion: 9.8.7\n") || !strings.HasSuffix(meta, "\n\n# hi\n") {
		t.Errorf("METADATA:\n%s", meta)
	}
}
