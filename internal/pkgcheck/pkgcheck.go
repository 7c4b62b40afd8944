// Package pkgcheck checks the VS Code extension's packages that `task
// packages` builds into extension/dist/: each platform's package carries
// exactly one bridge, its own, built for its OS and CPU and statically
// linked, and says its platform in its manifest; the universal package
// carries no binary at all. It reads a .vsix as the zip it is and a
// binary's header with debug/elf, debug/macho and debug/pe; it knows
// nothing of what the bridge does.
package pkgcheck

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// Target is a platform with a package of its own.
type Target struct {
	Name         string // VS Code's name, as vsce --target takes it
	GOOS, GOARCH string
}

// Targets are the platforms `task packages` builds a package for (its
// TARGETS); every other platform gets the universal package.
var Targets = []Target{
	{"linux-x64", "linux", "amd64"},
	{"linux-arm64", "linux", "arm64"},
	{"darwin-x64", "darwin", "amd64"},
	{"darwin-arm64", "darwin", "arm64"},
}

// Universal names the package without a target.
const Universal = "universal"

// FileName is the package's name in extension/dist/ for a target's Name
// or Universal.
func FileName(target string) string { return "oh-bridge-" + target + ".vsix" }

// BridgePath is where a target's bridge lies inside its package
// (extension/src/binary.ts looks for it there).
func BridgePath(target string) string { return "extension/bin/" + target + "/oh-bridge" }

// Package is what a .vsix holds, as far as the checks go.
type Package struct {
	Size int64 // of the .vsix
	// TargetPlatform is the manifest's; empty for the universal package.
	TargetPlatform string
	Files          []string
	Binaries       []Binary
}

// Binary is an executable found in a package by its header.
type Binary struct {
	Path         string // inside the package
	Size         int64  // uncompressed
	Format       string // ELF, Mach-O or PE
	GOOS, GOARCH string // as the header says; empty when the header names no platform Go builds for
	// Interpreter is an ELF's PT_INTERP: the dynamic loader a binary
	// linked against libc needs. A CGO_ENABLED=0 build has none.
	Interpreter string
}

// Read opens the .vsix at file.
func Read(file string) (*Package, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return ReadFrom(f, info.Size())
}

// ReadFrom reads a .vsix of size bytes from r.
func ReadFrom(r io.ReaderAt, size int64) (*Package, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, err
	}
	p := &Package{Size: size}
	for _, zf := range z.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		p.Files = append(p.Files, zf.Name)
		if zf.Name == "extension.vsixmanifest" {
			if p.TargetPlatform, err = targetPlatform(zf); err != nil {
				return nil, err
			}
			continue
		}
		b, err := readBinary(zf)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", zf.Name, err)
		}
		if b != nil {
			p.Binaries = append(p.Binaries, *b)
		}
	}
	sort.Strings(p.Files)
	return p, nil
}

// targetPlatform reads the Identity's TargetPlatform in the manifest, which
// vsce --target writes and the Marketplace and VS Code read.
func targetPlatform(zf *zip.File) (string, error) {
	rc, err := zf.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	var m struct {
		Identity struct {
			TargetPlatform string `xml:",attr"`
		} `xml:"Metadata>Identity"`
	}
	if err := xml.NewDecoder(rc).Decode(&m); err != nil {
		return "", fmt.Errorf("extension.vsixmanifest: %w", err)
	}
	return m.Identity.TargetPlatform, nil
}

// readBinary reads zf's header; nil when zf is not an executable.
func readBinary(zf *zip.File) (*Binary, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(rc, magic); err != nil {
		return nil, nil // shorter than any header
	}
	if formatOf(magic) == "" {
		return nil, nil
	}
	rest, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	return Inspect(zf.Name, append(magic, rest...))
}

// Inspect reads the header of data, the file at path in a package (a
// .vsix, an npm tarball, a wheel, an archive); nil when it is not an
// executable.
func Inspect(path string, data []byte) (*Binary, error) {
	if len(data) < 4 {
		return nil, nil
	}
	format := formatOf(data[:4])
	if format == "" {
		return nil, nil
	}
	r := bytes.NewReader(data)
	b := &Binary{Path: path, Size: int64(len(data)), Format: format}
	switch format {
	case "ELF":
		f, err := elf.NewFile(r)
		if err != nil {
			return nil, err
		}
		if f.OSABI == elf.ELFOSABI_NONE || f.OSABI == elf.ELFOSABI_LINUX {
			b.GOOS = "linux"
		}
		b.GOARCH = map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_ARM: "arm", elf.EM_386: "386"}[f.Machine]
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				interp, _ := io.ReadAll(prog.Open())
				b.Interpreter = string(bytes.TrimRight(interp, "\x00"))
				if b.Interpreter == "" {
					b.Interpreter = "(unreadable)"
				}
			}
		}
	case "Mach-O":
		f, err := macho.NewFile(r)
		if err != nil {
			return nil, err
		}
		b.GOOS = "darwin"
		b.GOARCH = map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	case "Mach-O universal":
		// A fat binary holds several CPUs; the packages ship one each.
		b.GOOS = "darwin"
	case "PE":
		f, err := pe.NewFile(r)
		if err != nil {
			return nil, err
		}
		b.GOOS = "windows"
		b.GOARCH = map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	return b, nil
}

// formatOf names the executable format whose magic number starts a file.
func formatOf(magic []byte) string {
	switch {
	case bytes.Equal(magic, []byte(elf.ELFMAG)):
		return "ELF"
	case bytes.Equal(magic, []byte{0xcf, 0xfa, 0xed, 0xfe}), bytes.Equal(magic, []byte{0xce, 0xfa, 0xed, 0xfe}):
		return "Mach-O" // little-endian 64- and 32-bit
	case bytes.Equal(magic, []byte{0xca, 0xfe, 0xba, 0xbe}):
		return "Mach-O universal"
	case bytes.Equal(magic[:2], []byte("MZ")):
		return "PE"
	}
	return ""
}

// Problems lists what is wrong with p as the package for target (a
// Target's Name, or Universal); none when it is right.
func (p *Package) Problems(target string) []string {
	var out []string
	for _, want := range []string{"extension/package.json", "extension/out/extension.js"} {
		if !p.has(want) {
			out = append(out, fmt.Sprintf("%s is missing", want))
		}
	}
	if target == Universal {
		if p.TargetPlatform != "" {
			out = append(out, fmt.Sprintf("the manifest says TargetPlatform=%q; the universal package has none", p.TargetPlatform))
		}
		for _, b := range p.Binaries {
			out = append(out, fmt.Sprintf("the universal package carries a binary, %s (%s, %s); it must carry none", b.Path, b.Format, b.platform()))
		}
		return out
	}
	var t *Target
	for i := range Targets {
		if Targets[i].Name == target {
			t = &Targets[i]
		}
	}
	if t == nil {
		return append(out, fmt.Sprintf("%s is not a target with a package", target))
	}
	if p.TargetPlatform != t.Name {
		out = append(out, fmt.Sprintf("the manifest says TargetPlatform=%q, want %q", p.TargetPlatform, t.Name))
	}
	found := false
	for _, b := range p.Binaries {
		if b.Path != BridgePath(t.Name) {
			out = append(out, fmt.Sprintf("%s (%s, %s) is not this package's bridge: only %s belongs in it", b.Path, b.Format, b.platform(), BridgePath(t.Name)))
			continue
		}
		found = true
		out = append(out, b.Problems(t.GOOS, t.GOARCH)...)
	}
	if !found {
		kind := "no file"
		if p.has(BridgePath(t.Name)) {
			kind = "a file that is no executable"
		}
		out = append(out, fmt.Sprintf("%s holds %s at %s, where the extension looks for its bridge", FileName(t.Name), kind, BridgePath(t.Name)))
	}
	return out
}

func (p *Package) has(name string) bool {
	i := sort.SearchStrings(p.Files, name)
	return i < len(p.Files) && p.Files[i] == name
}

// Bridge is the package's binary at path, if it carries one.
func (p *Package) Bridge(path string) (Binary, bool) {
	for _, b := range p.Binaries {
		if b.Path == path {
			return b, true
		}
	}
	return Binary{}, false
}

// Extract writes the package's file name (a path inside it) to dir,
// executable, and returns where.
func Extract(vsix, name, dir string) (string, error) {
	z, err := zip.OpenReader(vsix)
	if err != nil {
		return "", err
	}
	defer z.Close()
	rc, err := z.Open(name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	out := filepath.Join(dir, path.Base(name))
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return "", err
	}
	return out, f.Close()
}

// Problems lists what is wrong with b as the bridge for goos/goarch: a
// header for another platform, or a dynamic loader (CGO_ENABLED=0 builds
// need none, so the bridge runs on any libc, or none).
func (b Binary) Problems(goos, goarch string) []string {
	var out []string
	if b.GOOS != goos || b.GOARCH != goarch {
		out = append(out, fmt.Sprintf("%s is a %s binary for %s, want %s/%s", b.Path, b.Format, b.platform(), goos, goarch))
	}
	if b.Interpreter != "" {
		out = append(out, fmt.Sprintf("%s is linked dynamically (interpreter %s); build it with CGO_ENABLED=0", b.Path, b.Interpreter))
	}
	return out
}

// Platform is GOOS/GOARCH as the header says, with ? for what it does
// not tell.
func (b Binary) Platform() string { return b.platform() }

// platform is GOOS/GOARCH, with ? for what the header does not tell.
func (b Binary) platform() string {
	or := func(s string) string {
		if s == "" {
			return "?"
		}
		return s
	}
	return or(b.GOOS) + "/" + or(b.GOARCH)
}
