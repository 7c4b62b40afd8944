package pkgcheck

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPackages checks each package `task packages` built: its platform's
// bridge and nothing else, or no binary at all for the universal one. It
// logs each package's size.
func TestPackages(t *testing.T) {
	dist := distDir(t)
	for _, name := range append(targetNames(), Universal) {
		t.Run(name, func(t *testing.T) {
			p, err := Read(filepath.Join(dist, FileName(name)))
			if err != nil {
				t.Fatal(err)
			}
			for _, problem := range p.Problems(name) {
				t.Errorf("%s: %s", FileName(name), problem)
			}
			size := fmt.Sprintf("%s: %d bytes (%.1f MB)", FileName(name), p.Size, mb(p.Size))
			if b, ok := p.Bridge(BridgePath(name)); ok {
				size += fmt.Sprintf("; its bridge, %s %s, %d bytes (%.1f MB) uncompressed", b.Format, b.platform(), b.Size, mb(b.Size))
			}
			t.Log(size)
		})
	}
}

// TestBridgeStarts runs the packaged bridges this machine can run: the
// linux-arm64 one under qemu-user (Debian's qemu-user package), the
// linux-x64 one natively on linux/amd64. Each must print the extension's
// version, which `task packages` builds into it.
func TestBridgeStarts(t *testing.T) {
	dist := distDir(t)
	want := "oh-bridge " + extensionVersion(t) + "\n"
	run := func(t *testing.T, target string, runner ...string) {
		file := filepath.Join(dist, FileName(target))
		bin, err := Extract(file, BridgePath(target), t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args := append(runner, bin, "--version")
		out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
		if err != nil || string(out) != want {
			t.Fatalf("%s: %v\n%s\nwant %q", strings.Join(args, " "), err, out, want)
		}
		t.Logf("%s: %s", strings.Join(args, " "), bytes.TrimSpace(out))
	}
	t.Run("linux-arm64 under qemu-aarch64", func(t *testing.T) {
		qemu, err := exec.LookPath("qemu-aarch64")
		if err != nil {
			missing(t, "qemu-aarch64 is not installed, so the linux-arm64 bridge was not started: apt-get install qemu-user (.ci/run installs it)")
		}
		run(t, "linux-arm64", qemu)
	})
	t.Run("linux-x64", func(t *testing.T) {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			t.Skipf("the linux-x64 bridge runs only on linux/amd64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
		}
		run(t, "linux-x64")
	})
}

// TestProblemsAreFound: the checks fail the packages they exist to catch,
// so a broken Problems cannot pass silently.
func TestProblemsAreFound(t *testing.T) {
	arm := fakeELF(t, elf.EM_AARCH64, "")
	x86 := fakeELF(t, elf.EM_X86_64, "")
	cases := []struct {
		name     string
		target   string
		manifest string // TargetPlatform
		files    map[string][]byte
		want     string // in the problems; "" for none
	}{
		{"right", "linux-arm64", "linux-arm64", map[string][]byte{BridgePath("linux-arm64"): arm}, ""},
		{"right on macOS", "darwin-arm64", "darwin-arm64", map[string][]byte{BridgePath("darwin-arm64"): fakeMachO(t, macho.CpuArm64)}, ""},
		{"right universal", Universal, "", nil, ""},
		{"another CPU's bridge", "linux-arm64", "linux-arm64", map[string][]byte{BridgePath("linux-arm64"): x86},
			"extension/bin/linux-arm64/oh-bridge is a ELF binary for linux/amd64, want linux/arm64"},
		{"another OS's bridge", "darwin-x64", "darwin-x64", map[string][]byte{BridgePath("darwin-x64"): x86},
			"is a ELF binary for linux/amd64, want darwin/amd64"},
		{"a Mach-O for the other CPU", "darwin-x64", "darwin-x64", map[string][]byte{BridgePath("darwin-x64"): fakeMachO(t, macho.CpuArm64)},
			"is a Mach-O binary for darwin/arm64, want darwin/amd64"},
		{"another platform's bridge beside its own", "linux-x64", "linux-x64", map[string][]byte{BridgePath("linux-x64"): x86, BridgePath("linux-arm64"): arm},
			"extension/bin/linux-arm64/oh-bridge (ELF, linux/arm64) is not this package's bridge"},
		{"no bridge", "linux-x64", "linux-x64", nil, "holds no file at extension/bin/linux-x64/oh-bridge"},
		{"a bridge that is no executable", "linux-x64", "linux-x64", map[string][]byte{BridgePath("linux-x64"): []byte("#!/bin/sh\n")}, "holds a file that is no executable"},
		{"linked dynamically", "linux-x64", "linux-x64", map[string][]byte{BridgePath("linux-x64"): fakeELF(t, elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2")},
			"is linked dynamically (interpreter /lib64/ld-linux-x86-64.so.2)"},
		{"no platform in the manifest", "linux-x64", "", map[string][]byte{BridgePath("linux-x64"): x86}, `TargetPlatform="", want "linux-x64"`},
		{"a universal package with a bridge", Universal, "", map[string][]byte{BridgePath("linux-x64"): x86},
			"the universal package carries a binary, extension/bin/linux-x64/oh-bridge"},
		{"a universal package with a platform", Universal, "linux-x64", nil, `TargetPlatform="linux-x64"; the universal package has none`},
		{"a binary hidden elsewhere", Universal, "", map[string][]byte{"extension/out/helper": arm}, "carries a binary, extension/out/helper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vsix := fakeVSIX(t, c.manifest, c.files)
			p, err := ReadFrom(bytes.NewReader(vsix), int64(len(vsix)))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(p.Problems(c.target), "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("Problems(%s) = %q, want %q", c.target, got, c.want)
			}
		})
	}
}

func targetNames() []string {
	var names []string
	for _, t := range Targets {
		names = append(names, t.Name)
	}
	return names
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// distDir is extension/dist, holding every package. Outside CI, a missing
// package skips the test and says how to build it.
func distDir(t *testing.T) string {
	t.Helper()
	dist := filepath.Join("..", "..", "extension", "dist")
	for _, name := range append(targetNames(), Universal) {
		if _, err := os.Stat(filepath.Join(dist, FileName(name))); err != nil {
			missing(t, fmt.Sprintf("extension/dist/%s is not built: run `go run github.com/go-task/task/v3/cmd/task@v3.53.1 packages` (the test task does)", FileName(name)))
		}
	}
	return dist
}

// missing fails the test in CI, which must have everything, and skips it
// elsewhere.
func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func extensionVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "extension", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version == "" {
		t.Fatalf("extension/package.json has no version: %v", err)
	}
	return pkg.Version
}

// fakeVSIX is a package holding files, package.json, a bundle and a
// manifest naming target (none when empty).
func fakeVSIX(t *testing.T, target string, files map[string][]byte) []byte {
	t.Helper()
	attr := ""
	if target != "" {
		attr = fmt.Sprintf(` TargetPlatform=%q`, target)
	}
	all := map[string][]byte{
		"extension.vsixmanifest":        fmt.Appendf(nil, `<?xml version="1.0" encoding="utf-8"?><PackageManifest Version="2.0.0"><Metadata><Identity Language="en-US" Id="oh-bridge" Version="0.1.0" Publisher="oh-bridge"%s/></Metadata></PackageManifest>`, attr),
		"extension/package.json":        []byte(`{}`),
		"extension/out/extension.js":    []byte(`"use strict";`),
		"extension/media/openhands.svg": []byte(`<svg/>`),
	}
	for name, data := range files {
		all[name] = data
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, data := range all {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeELF is a 64-bit little-endian ELF executable's header for machine;
// with interp, a PT_INTERP program header naming that loader.
func fakeELF(t *testing.T, machine elf.Machine, interp string) []byte {
	t.Helper()
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT), Ehsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	var progs []elf.Prog64
	if interp != "" {
		h.Phoff, h.Phentsize, h.Phnum = 64, 56, 1
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Off: 64 + 56, Filesz: uint64(len(interp) + 1), Memsz: uint64(len(interp) + 1)})
	}
	var buf bytes.Buffer
	for _, v := range []any{h, progs} {
		if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	if interp != "" {
		buf.WriteString(interp + "\x00")
	}
	return buf.Bytes()
}

// fakeMachO is a 64-bit Mach-O executable's header for cpu, with no load
// commands.
func fakeMachO(t *testing.T, cpu macho.Cpu) []byte {
	t.Helper()
	var buf bytes.Buffer
	h := macho.FileHeader{Magic: macho.Magic64, Cpu: cpu, Type: macho.TypeExec}
	if err := binary.Write(&buf, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	buf.Write(make([]byte, 4)) // the 64-bit header's reserved word
	return buf.Bytes()
}

// TestTargetsAreTheTaskfiles: Targets are the platforms the Taskfile
// builds packages for (its TARGETS), in its order.
func TestTargetsAreTheTaskfiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  TARGETS: (.+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("Taskfile.yml has no TARGETS variable")
	}
	if got, want := strings.Fields(string(m[1])), targetNames(); !slices.Equal(got, want) {
		t.Errorf("Taskfile.yml's TARGETS are %q; pkgcheck.Targets are %q", got, want)
	}
}
