package dist

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build makes every package into Out from the binaries in Bins.
type Build struct {
	// Root is the repository, where packaging/ and extension/LICENSE are.
	Root string
	// Bins holds each platform's binary as <Target>/<Exe>, as `task
	// packages` leaves them in extension/bin.
	Bins string
	// Out receives the packages; what was there is removed first.
	Out     string
	Version string
	Log     io.Writer
}

// Where the packages land in Out.
const (
	ReleaseDir  = "release"
	RegistryDir = "acp-registry"
)

// Run builds the npm tarballs, the wheels, the release archives and the
// registry entry.
func (b *Build) Run(ctx context.Context) error {
	read := func(path ...string) ([]byte, error) {
		return os.ReadFile(filepath.Join(append([]string{b.Root}, path...)...))
	}
	license, err := read("extension", "LICENSE")
	if err != nil {
		return err
	}
	binaries := map[string][]byte{}
	for _, p := range append(append([]Platform(nil), Platforms...), Windows) {
		path := filepath.Join(b.Bins, p.Target, p.Exe())
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%w: build it with `task dist`, which builds each platform's binary first", err)
		}
		binaries[p.Target] = data
	}
	if err := os.RemoveAll(b.Out); err != nil {
		return err
	}
	for _, d := range []string{b.Out, filepath.Join(b.Out, ReleaseDir), filepath.Join(b.Out, RegistryDir, RegistryID)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := b.npm(ctx, license, binaries); err != nil {
		return err
	}
	if err := b.wheels(license, binaries); err != nil {
		return err
	}
	if err := b.archives(license, binaries); err != nil {
		return err
	}
	return b.registry()
}

func (b *Build) npm(ctx context.Context, license []byte, binaries map[string][]byte) error {
	launcher, err := os.ReadFile(filepath.Join(b.Root, "packaging", "npm", "bin", "oh-bridge"))
	if err != nil {
		return err
	}
	readme, err := os.ReadFile(filepath.Join(b.Root, "packaging", "npm", "README.md"))
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp("", "oh-bridge-npm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	dirs, err := stageNPM(stage, b.Version, launcher, readme, license, binaries)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(b.Out)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		cmd := exec.CommandContext(ctx, "npm", "pack", "--ignore-scripts", "--pack-destination", out)
		cmd.Dir = d
		// npm writes its cache and logs under a home of this build's
		// own, and asks the registry nothing.
		cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(stage, ".npm"), "npm_config_update_notifier=false", "npm_config_offline=true")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		name, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("npm pack in %s: %w\n%s", d, err, stderr.Bytes())
		}
		b.logFile(strings.TrimSpace(string(name)))
	}
	return nil
}

func (b *Build) wheels(license []byte, binaries map[string][]byte) error {
	readme, err := os.ReadFile(filepath.Join(b.Root, "packaging", "python", "README.md"))
	if err != nil {
		return err
	}
	fallback, err := os.ReadFile(filepath.Join(b.Root, "packaging", "python", "oh_bridge", "__init__.py"))
	if err != nil {
		return err
	}
	write := func(name string, w *Wheel) error {
		f, err := os.Create(filepath.Join(b.Out, name))
		if err != nil {
			return err
		}
		if err := w.Write(f); err != nil {
			f.Close()
			return err
		}
		b.logFile(name)
		return f.Close()
	}
	for _, p := range Platforms {
		w := &Wheel{Version: b.Version, Tags: p.WheelTags, Readme: string(readme), License: license,
			Files: []File{{Path: DataScripts(b.Version) + "oh-bridge", Data: binaries[p.Target], Mode: 0o755}}}
		if err := write(p.WheelFile(b.Version), w); err != nil {
			return err
		}
	}
	fallbackWheel := &Wheel{Version: b.Version, Readme: string(readme), License: license,
		Files:       []File{{Path: "oh_bridge/__init__.py", Data: fallback, Mode: 0o644}},
		EntryPoints: "[console_scripts]\noh-bridge = oh_bridge:main\n"}
	return write(AnyWheelFile(b.Version), fallbackWheel)
}

func (b *Build) archives(license []byte, binaries map[string][]byte) error {
	for _, p := range append(append([]Platform(nil), Platforms...), Windows) {
		name := p.Archive(b.Version)
		f, err := os.Create(filepath.Join(b.Out, ReleaseDir, name))
		if err != nil {
			return err
		}
		files := []File{{Path: p.Exe(), Data: binaries[p.Target], Mode: 0o755}, {Path: "LICENSE", Data: license, Mode: 0o644}}
		write := WriteTarGz
		if p.GOOS == "windows" {
			write = WriteZip
		}
		if err := write(f, files); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		b.logFile(filepath.Join(ReleaseDir, name))
	}
	return nil
}

func (b *Build) registry() error {
	dir := filepath.Join(b.Out, RegistryDir, RegistryID)
	entry, err := json.MarshalIndent(Registry(b.Version), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), append(entry, '\n'), 0o644); err != nil {
		return err
	}
	icon, err := os.ReadFile(filepath.Join(b.Root, "packaging", "acp-registry", "icon.svg"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "icon.svg"), icon, 0o644); err != nil {
		return err
	}
	b.logFile(filepath.Join(RegistryDir, RegistryID, "agent.json"))
	return nil
}

// logFile says what was made and how big it is.
func (b *Build) logFile(name string) {
	if b.Log == nil {
		return
	}
	fi, err := os.Stat(filepath.Join(b.Out, name))
	if err != nil {
		fmt.Fprintf(b.Log, "dist/%s: %v\n", name, err)
		return
	}
	size := fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
	if fi.Size() < 1e5 {
		size = fmt.Sprintf("%.1f KB", float64(fi.Size())/1e3)
	}
	fmt.Fprintf(b.Log, "dist/%-100s %8s\n", name, size)
}

// ExtensionVersion is the version in extension/package.json under root:
// the one version of the extension, the packages and the binary.
func ExtensionVersion(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "extension", "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version == "" {
		return "", fmt.Errorf("extension/package.json has no version: %v", err)
	}
	return pkg.Version, nil
}
