package distcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/dist"
	"github.com/oh-bridge/oh-bridge/internal/pkgcheck"
)

// installHooks are the package.json scripts npm runs when it installs a
// package; none may be there. (A binding.gyp would make npm run node-gyp
// as an implicit install script.)
var installHooks = []string{"preinstall", "install", "postinstall", "prepare"}

// TestNPMPackages: the main tarball holds the launcher and its manifest,
// whose optional dependencies are each platform's package at the same
// version; each platform's tarball holds its binary, executable, for its
// os and cpu, and no install script anywhere. Logs each one's size.
func TestNPMPackages(t *testing.T) {
	dir, version := distDir(t)
	t.Run(dist.NPMName, func(t *testing.T) {
		file := filepath.Join(dir, dist.NPMTarball(dist.NPMName, version))
		entries := readTarball(t, file)
		wantFiles(t, file, entries, "package/LICENSE", "package/README.md", "package/bin/oh-bridge", "package/package.json")
		m := manifest(t, entries)
		if m.Name != dist.NPMName || m.Version != version || m.Bin["oh-bridge"] != "bin/oh-bridge" {
			t.Errorf("package.json: name %q, version %q, bin %v; want %s, %s, oh-bridge: bin/oh-bridge", m.Name, m.Version, m.Bin, dist.NPMName, version)
		}
		want := map[string]string{}
		for _, p := range dist.Platforms {
			want[p.NPMPackage()] = version
		}
		if fmt.Sprint(m.OptionalDependencies) != fmt.Sprint(want) {
			t.Errorf("optionalDependencies = %v, want %v", m.OptionalDependencies, want)
		}
		launcher, _ := Find(entries, "package/bin/oh-bridge")
		if launcher.Mode != 0o755 || !bytes.HasPrefix(launcher.Data, []byte("#!/usr/bin/env node\n")) {
			t.Errorf("bin/oh-bridge: mode %v, first line %q; want 0755 and a node script", launcher.Mode, bytes.SplitN(launcher.Data, []byte("\n"), 2)[0])
		}
		// The launcher's table is the platforms' packages, no more.
		got := map[string]string{}
		for _, m := range regexp.MustCompile(`'([a-z0-9]+-[a-z0-9]+)': '(oh-bridge-[a-z0-9-]+)'`).FindAllStringSubmatch(string(launcher.Data), -1) {
			got[m[1]] = m[2]
		}
		wantTable := map[string]string{}
		for _, p := range dist.Platforms {
			wantTable[p.Target] = p.NPMPackage()
		}
		if fmt.Sprint(got) != fmt.Sprint(wantTable) {
			t.Errorf("the launcher's platforms are %v, want %v", got, wantTable)
		}
		noInstallScripts(t, m, entries)
		logSize(t, file, nil)
	})
	for _, p := range dist.Platforms {
		t.Run(p.NPMPackage(), func(t *testing.T) {
			file := filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version))
			entries := readTarball(t, file)
			wantFiles(t, file, entries, "package/LICENSE", "package/README.md", "package/bin/oh-bridge", "package/package.json")
			m := manifest(t, entries)
			if m.Name != p.NPMPackage() || m.Version != version || !slices.Equal(m.OS, []string{p.NodeOS()}) || !slices.Equal(m.CPU, []string{p.NodeCPU()}) || m.Bin != nil {
				t.Errorf("package.json: name %q, version %q, os %v, cpu %v, bin %v; want %s, %s, [%s], [%s] and no bin",
					m.Name, m.Version, m.OS, m.CPU, m.Bin, p.NPMPackage(), version, p.NodeOS(), p.NodeCPU())
			}
			noInstallScripts(t, m, entries)
			b := binaryIn(t, file, entries, "package/bin/oh-bridge", p)
			logSize(t, file, b)
		})
	}
}

// TestWheels: each platform's wheel holds its binary as the script
// oh-bridge, executable, with the tags its name says; the wheel for any
// platform holds no binary and an oh-bridge entry point; every RECORD
// lists each file with its hash and size, as PEP 427 asks.
func TestWheels(t *testing.T) {
	dir, version := distDir(t)
	script := dist.DataScripts(version) + "oh-bridge"
	info := fmt.Sprintf("oh_bridge-%s.dist-info/", version)
	for _, p := range dist.Platforms {
		t.Run(p.Target, func(t *testing.T) {
			file := filepath.Join(dir, p.WheelFile(version))
			entries := readZip(t, file)
			wantFiles(t, file, entries, script, info+"LICENSE", info+"METADATA", info+"RECORD", info+"WHEEL")
			var tags []string
			for _, tag := range p.WheelTags {
				tags = append(tags, "py3-none-"+tag)
			}
			checkWheelMeta(t, entries, info, version, false, tags)
			b := binaryIn(t, file, entries, script, p)
			logSize(t, file, b)
		})
	}
	t.Run("any", func(t *testing.T) {
		file := filepath.Join(dir, dist.AnyWheelFile(version))
		entries := readZip(t, file)
		wantFiles(t, file, entries, info+"LICENSE", info+"METADATA", info+"RECORD", info+"WHEEL", info+"entry_points.txt", "oh_bridge/__init__.py")
		checkWheelMeta(t, entries, info, version, true, []string{"py3-none-any"})
		if ep, _ := Find(entries, info+"entry_points.txt"); !strings.Contains(string(ep.Data), "[console_scripts]\noh-bridge = oh_bridge:main\n") {
			t.Errorf("entry_points.txt is %q, want the console script oh-bridge = oh_bridge:main", ep.Data)
		}
		for _, e := range entries {
			if b, _ := pkgcheck.Inspect(e.Path, e.Data); b != nil {
				t.Errorf("the wheel for any platform carries a binary, %s (%s)", e.Path, b.Format)
			}
		}
		logSize(t, file, nil)
	})
}

// checkWheelMeta checks WHEEL, METADATA and RECORD.
func checkWheelMeta(t *testing.T, entries []Entry, info, version string, pure bool, tags []string) {
	t.Helper()
	wheel, _ := Find(entries, info+"WHEEL")
	var gotTags []string
	purelib := ""
	for _, line := range strings.Split(string(wheel.Data), "\n") {
		if v, ok := strings.CutPrefix(line, "Tag: "); ok {
			gotTags = append(gotTags, v)
		}
		if v, ok := strings.CutPrefix(line, "Root-Is-Purelib: "); ok {
			purelib = v
		}
	}
	if !strings.HasPrefix(string(wheel.Data), "Wheel-Version: 1.0\n") || !slices.Equal(gotTags, tags) || purelib != fmt.Sprint(pure) {
		t.Errorf("WHEEL:\n%s\nwant Wheel-Version 1.0, Root-Is-Purelib: %t and the tags %q", wheel.Data, pure, tags)
	}
	meta, _ := Find(entries, info+"METADATA")
	for _, want := range []string{"Metadata-Version: 2.1\n", "\nName: " + dist.PyPIName + "\n", "\nVersion: " + version + "\n", "\nLicense: MIT\n"} {
		if !strings.Contains(string(meta.Data), want) {
			t.Errorf("METADATA has no %q:\n%.600s", strings.TrimSpace(want), meta.Data)
		}
	}
	record, _ := Find(entries, info+"RECORD")
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(string(record.Data), "\n"), "\n") {
		path, rest, _ := strings.Cut(line, ",")
		listed[path] = rest
	}
	for _, e := range entries {
		sum := sha256.Sum256(e.Data)
		want := fmt.Sprintf("sha256=%s,%d", base64.RawURLEncoding.EncodeToString(sum[:]), len(e.Data))
		if e.Path == info+"RECORD" {
			want = ","
		}
		if listed[e.Path] != want {
			t.Errorf("RECORD says %s,%s; the file is %s", e.Path, listed[e.Path], want)
		}
		delete(listed, e.Path)
	}
	for path := range listed {
		t.Errorf("RECORD lists %s, which the wheel does not hold", path)
	}
}

// TestReleaseArchives: each archive the registry entry names holds the
// binary for its platform, executable, and the license.
func TestReleaseArchives(t *testing.T) {
	dir, version := distDir(t)
	for _, p := range append(append([]dist.Platform(nil), dist.Platforms...), dist.Windows) {
		t.Run(p.Registry, func(t *testing.T) {
			file := filepath.Join(dir, dist.ReleaseDir, p.Archive(version))
			var entries []Entry
			if p.GOOS == "windows" {
				entries = readZip(t, file)
			} else {
				entries = readTarball(t, file)
			}
			wantFiles(t, file, entries, "LICENSE", p.Exe())
			b := binaryIn(t, file, entries, p.Exe(), p)
			logSize(t, file, b)
		})
	}
}

// TestSameBinaries: every package carries, byte for byte, the binary
// `task packages` built for the extension (extension/bin/<target>), and
// the one in the extension's package when that is built too.
func TestSameBinaries(t *testing.T) {
	dir, version := distDir(t)
	for _, p := range dist.Platforms {
		t.Run(p.Target, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(root, "extension", "bin", p.Target, "oh-bridge"))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{}
			npm := readTarball(t, filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version)))
			e, _ := Find(npm, "package/bin/oh-bridge")
			got["npm"] = e.Data
			e, _ = Find(readZip(t, filepath.Join(dir, p.WheelFile(version))), dist.DataScripts(version)+"oh-bridge")
			got["wheel"] = e.Data
			e, _ = Find(readTarball(t, filepath.Join(dir, dist.ReleaseDir, p.Archive(version))), "oh-bridge")
			got["archive"] = e.Data
			vsix := filepath.Join(root, "extension", "dist", pkgcheck.FileName(p.Target))
			if _, err := os.Stat(vsix); err == nil {
				e, _ = Find(readZip(t, vsix), pkgcheck.BridgePath(p.Target))
				got["vsix"] = e.Data
			}
			for kind, data := range got {
				if !bytes.Equal(data, want) {
					t.Errorf("the %s package's binary (%d bytes) is not extension/bin/%s/oh-bridge (%d bytes)", kind, len(data), p.Target, len(want))
				}
			}
		})
	}
}

// TestBinariesStart runs the binary of each package this machine can
// run: linux-x64 natively on linux/amd64, linux-arm64 under qemu-user.
// Each prints the extension's version.
func TestBinariesStart(t *testing.T) {
	dir, version := distDir(t)
	for _, target := range []string{"linux-x64", "linux-arm64"} {
		var p dist.Platform
		for _, q := range dist.Platforms {
			if q.Target == target {
				p = q
			}
		}
		t.Run(target, func(t *testing.T) {
			var runner []string
			switch {
			case target == "linux-arm64":
				runner = []string{need(t, "qemu-aarch64", "apt-get install qemu-user (.ci/run installs it)")}
			case runtime.GOOS != "linux" || runtime.GOARCH != "amd64":
				t.Skipf("the linux-x64 binary runs only on linux/amd64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
			}
			from := map[string][]byte{}
			e, _ := Find(readTarball(t, filepath.Join(dir, dist.NPMTarball(p.NPMPackage(), version))), "package/bin/oh-bridge")
			from["npm"] = e.Data
			e, _ = Find(readZip(t, filepath.Join(dir, p.WheelFile(version))), dist.DataScripts(version)+"oh-bridge")
			from["wheel"] = e.Data
			e, _ = Find(readTarball(t, filepath.Join(dir, dist.ReleaseDir, p.Archive(version))), "oh-bridge")
			from["archive"] = e.Data
			for _, kind := range []string{"npm", "wheel", "archive"} {
				bin := filepath.Join(t.TempDir(), "oh-bridge")
				if err := os.WriteFile(bin, from[kind], 0o755); err != nil {
					t.Fatal(err)
				}
				args := append(append([]string(nil), runner...), bin, "--version")
				r := run(t, time.Minute, "", nil, args[0], args[1:]...)
				if r.err != nil || r.stdout != versionLine(version) {
					t.Errorf("%s's binary: %s: %s\nwant %q", kind, strings.Join(args, " "), r, versionLine(version))
					continue
				}
				t.Logf("%s's binary: %s", kind, strings.TrimSpace(r.stdout))
			}
		})
	}
}

// TestEveryPlatformHasItsPackages: the platforms with packages are the
// extension's (pkgcheck.Targets, the Taskfile's TARGETS).
func TestEveryPlatformHasItsPackages(t *testing.T) {
	var got, want []string
	for _, p := range dist.Platforms {
		got = append(got, fmt.Sprintf("%s %s/%s", p.Target, p.GOOS, p.GOARCH))
	}
	for _, p := range pkgcheck.Targets {
		want = append(want, fmt.Sprintf("%s %s/%s", p.Name, p.GOOS, p.GOARCH))
	}
	if !slices.Equal(got, want) {
		t.Errorf("dist.Platforms are %q; pkgcheck.Targets are %q", got, want)
	}
}

func readTarball(t *testing.T, file string) []Entry {
	t.Helper()
	entries, err := ReadTarGz(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return entries
}

func readZip(t *testing.T, file string) []Entry {
	t.Helper()
	entries, err := ReadZip(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return entries
}

// wantFiles: the package holds these files and no other.
func wantFiles(t *testing.T, file string, entries []Entry, want ...string) {
	t.Helper()
	if got := Paths(entries); !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", filepath.Base(file), got, want)
	}
}

func manifest(t *testing.T, entries []Entry) dist.Manifest {
	t.Helper()
	e, ok := Find(entries, "package/package.json")
	if !ok {
		t.Fatal("no package/package.json")
	}
	var m dist.Manifest
	if err := json.Unmarshal(e.Data, &m); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	return m
}

func noInstallScripts(t *testing.T, m dist.Manifest, entries []Entry) {
	t.Helper()
	for _, h := range installHooks {
		if s, ok := m.Scripts[h]; ok {
			t.Errorf("%s has an install script, %s: %q", m.Name, h, s)
		}
	}
	if _, ok := Find(entries, "package/binding.gyp"); ok {
		t.Errorf("%s has a binding.gyp, which npm builds at install", m.Name)
	}
}

// binaryIn checks the package's binary at path: p's header, no dynamic
// loader, executable.
func binaryIn(t *testing.T, file string, entries []Entry, path string, p dist.Platform) *pkgcheck.Binary {
	t.Helper()
	e, ok := Find(entries, path)
	if !ok {
		t.Fatalf("%s has no %s", filepath.Base(file), path)
	}
	b, err := pkgcheck.Inspect(path, e.Data)
	if err != nil || b == nil {
		t.Fatalf("%s: %s is no executable (%v)", filepath.Base(file), path, err)
	}
	for _, problem := range b.Problems(p.GOOS, p.GOARCH) {
		t.Errorf("%s: %s", filepath.Base(file), problem)
	}
	if e.Mode != 0o755 {
		t.Errorf("%s: %s has mode %v, want 0755", filepath.Base(file), path, e.Mode)
	}
	return b
}

func logSize(t *testing.T, file string, b *pkgcheck.Binary) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("%s: %d bytes (%.1f MB)", filepath.Base(file), fi.Size(), float64(fi.Size())/1e6)
	if b != nil {
		line += fmt.Sprintf("; its binary, %s %s, %.1f MB uncompressed", b.Format, b.Platform(), float64(b.Size)/1e6)
	}
	t.Log(line)
}
