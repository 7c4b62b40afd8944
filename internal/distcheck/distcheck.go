// Package distcheck checks what `task dist` builds into dist/ (package
// dist): each package carries its platform's binary, static and at the
// extension's version, and installs and runs as a person would install
// it: npm from the tarballs and from a registry on loopback that serves
// them, pip and uvx from the wheels, a real agent configured with npx,
// and the ACP registry's own checks on the entry. Its tests need dist/
// built; its helpers read the packages as the archives they are.
package distcheck

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"sort"
)

// Entry is a file in a package.
type Entry struct {
	Path string
	Mode fs.FileMode
	Data []byte
}

// ReadTarGz reads the regular files of a gzipped tar (an npm tarball, a
// release archive).
func ReadTarGz(file string) ([]Entry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	var out []Entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Path: h.Name, Mode: fs.FileMode(h.Mode).Perm(), Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ReadZip reads the files of a zip (a wheel, the Windows archive).
func ReadZip(file string) ([]Entry, error) {
	z, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var out []Entry
	for _, zf := range z.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Path: zf.Name, Mode: zf.Mode().Perm(), Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Find is the entry at path.
func Find(entries []Entry, path string) (Entry, bool) {
	for _, e := range entries {
		if e.Path == path {
			return e, true
		}
	}
	return Entry{}, false
}

// Paths lists the entries' paths.
func Paths(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}
