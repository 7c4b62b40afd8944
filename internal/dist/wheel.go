package dist

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// A wheel is a zip (PEP 427, the binary distribution format): the files
// to install, and a NAME-VERSION.dist-info directory with METADATA (the
// core metadata), WHEEL (the format's version and the tags) and RECORD
// (each file's hash and size). Files under NAME-VERSION.data/scripts/
// are installed into the environment's bin directory; pip and uv keep a
// file there as it is unless it starts with "#!python", and make it
// executable when its zip entry is.

// Wheel describes one wheel.
type Wheel struct {
	Version string
	// Tags are the platform tags; none makes a wheel for any platform.
	Tags []string
	// Readme is the description the index shows (Markdown).
	Readme string
	// Files are the wheel's contents, beside the .dist-info files.
	Files []File
	// EntryPoints is entry_points.txt ("" for none).
	EntryPoints string
	// License is the license's text, kept in the .dist-info.
	License []byte
}

// File is a file in a package.
type File struct {
	Path string
	Data []byte
	Mode uint32 // 0o644 or 0o755
}

// Epoch is the time every file in a package carries, so that the same
// binary makes the same bytes.
var Epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func (w *Wheel) distInfo() string { return fmt.Sprintf("%s-%s.dist-info", wheelDist, w.Version) }

// DataScripts is where a wheel of version keeps its scripts.
func DataScripts(version string) string {
	return fmt.Sprintf("%s-%s.data/scripts/", wheelDist, version)
}

// Write writes the wheel to out.
func (w *Wheel) Write(out io.Writer) error {
	files := append([]File(nil), w.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	info := w.distInfo()
	meta := []File{
		{Path: info + "/METADATA", Data: []byte(w.metadata()), Mode: 0o644},
		{Path: info + "/WHEEL", Data: []byte(w.wheelFile()), Mode: 0o644},
	}
	if w.License != nil {
		meta = append(meta, File{Path: info + "/LICENSE", Data: w.License, Mode: 0o644})
	}
	if w.EntryPoints != "" {
		meta = append(meta, File{Path: info + "/entry_points.txt", Data: []byte(w.EntryPoints), Mode: 0o644})
	}
	// The .dist-info comes last, RECORD at its end, as PEP 427
	// recommends: an installer can read the files before the record.
	files = append(files, meta...)
	var record strings.Builder
	z := zip.NewWriter(out)
	for _, f := range files {
		if err := addZip(z, f); err != nil {
			return err
		}
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.Path, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.Data))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	if err := addZip(z, File{Path: info + "/RECORD", Data: []byte(record.String()), Mode: 0o644}); err != nil {
		return err
	}
	return z.Close()
}

// metadata is the core metadata (version 2.1, which every installer in
// use reads), with the readme as its body.
func (w *Wheel) metadata() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n", PyPIName, w.Version, Summary)
	fmt.Fprintf(&b, "Home-page: %s\nLicense: %s\n", Repository, License)
	fmt.Fprintf(&b, "Project-URL: Source, %s\nProject-URL: Documentation, %s/blob/main/README.md\n", Repository, Repository)
	b.WriteString("Keywords: openhands,agent,mcp,acp,editor\n")
	for _, c := range []string{
		"Development Status :: 4 - Beta",
		"Environment :: Console",
		"Intended Audience :: Developers",
		"License :: OSI Approved :: MIT License",
		"Operating System :: MacOS",
		"Operating System :: POSIX :: Linux",
		"Programming Language :: Go",
		"Topic :: Software Development",
	} {
		fmt.Fprintf(&b, "Classifier: %s\n", c)
	}
	b.WriteString("Description-Content-Type: text/markdown\n\n")
	b.WriteString(w.Readme)
	return b.String()
}

func (w *Wheel) wheelFile() string {
	var b strings.Builder
	b.WriteString("Wheel-Version: 1.0\nGenerator: oh-bridge internal/dist\n")
	// A wheel with a platform is not pure: its files belong to this
	// platform's platlib, though it has none but its script.
	fmt.Fprintf(&b, "Root-Is-Purelib: %t\n", len(w.Tags) == 0)
	if len(w.Tags) == 0 {
		b.WriteString("Tag: py3-none-any\n")
	}
	for _, t := range w.Tags {
		fmt.Fprintf(&b, "Tag: py3-none-%s\n", t)
	}
	return b.String()
}

func addZip(z *zip.Writer, f File) error {
	h := &zip.FileHeader{Name: f.Path, Method: zip.Deflate, Modified: Epoch}
	h.SetMode(modeOf(f))
	w, err := z.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, bytes.NewReader(f.Data))
	return err
}
