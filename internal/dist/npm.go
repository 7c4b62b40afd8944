package dist

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// The npm packages follow esbuild's and Biome's layout: the main package
// has the `oh-bridge` command, a small launcher (packaging/npm/bin/
// oh-bridge), and one optional dependency per platform whose os and cpu
// fields make npm install only the one that fits. None has an install
// script: npm runs nothing at install.

// Manifest is a package.json, as far as these packages use it.
type Manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	Keywords             []string          `json:"keywords,omitempty"`
	Homepage             string            `json:"homepage,omitempty"`
	Repository           Repo              `json:"repository"`
	License              string            `json:"license"`
	Bin                  map[string]string `json:"bin,omitempty"`
	Files                []string          `json:"files"`
	Engines              map[string]string `json:"engines,omitempty"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
	// PreferUnplugged asks Yarn's Plug'n'Play to keep the package on
	// disk, where its binary can be run.
	PreferUnplugged bool `json:"preferUnplugged,omitempty"`
	// Scripts is here so the checks can see there is none.
	Scripts map[string]string `json:"scripts,omitempty"`
}

// Repo is package.json's repository.
type Repo struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// LauncherPath is where the main package keeps its command.
const LauncherPath = "bin/oh-bridge"

// BinaryPath is where a platform's package keeps the binary, for the
// launcher to find.
const BinaryPath = "bin/oh-bridge"

// MainManifest is the main package's package.json at version.
func MainManifest(version string) Manifest {
	deps := map[string]string{}
	for _, p := range Platforms {
		deps[p.NPMPackage()] = version
	}
	return Manifest{
		Name:                 NPMName,
		Version:              version,
		Description:          Summary,
		Keywords:             []string{"openhands", "agent", "mcp", "acp", "editor", "terminal"},
		Homepage:             Repository + "#readme",
		Repository:           Repo{"git", "git+" + Repository + ".git"},
		License:              License,
		Bin:                  map[string]string{"oh-bridge": LauncherPath},
		Files:                []string{LauncherPath},
		Engines:              map[string]string{"node": ">=18"},
		OptionalDependencies: deps,
	}
}

// PlatformManifest is the package.json of p's package at version.
func PlatformManifest(p Platform, version string) Manifest {
	return Manifest{
		Name:            p.NPMPackage(),
		Version:         version,
		Description:     fmt.Sprintf("The oh-bridge binary for %s. Install oh-bridge, which runs it.", p.Target),
		Homepage:        Repository + "#readme",
		Repository:      Repo{"git", "git+" + Repository + ".git"},
		License:         License,
		Files:           []string{BinaryPath},
		OS:              []string{p.NodeOS()},
		CPU:             []string{p.NodeCPU()},
		PreferUnplugged: true,
	}
}

func platformReadme(p Platform) string {
	return fmt.Sprintf("# %s\n\nThe [oh-bridge](%s) binary for %s (%s/%s). It is installed by the\n"+
		"`oh-bridge` package, as an optional dependency that npm takes only on\nthis platform, and run by its `oh-bridge` command:\n\n"+
		"```sh\nnpx -y oh-bridge --version\n```\n", p.NPMPackage(), Repository, p.Target, p.GOOS, p.GOARCH)
}

// stageNPM writes each npm package's directory under dir, ready for `npm
// pack`, and returns them, the main package first.
func stageNPM(dir, version string, launcher, readme, license []byte, binaries map[string][]byte) ([]string, error) {
	type pkg struct {
		manifest Manifest
		files    []File
	}
	pkgs := []pkg{{MainManifest(version), []File{
		{Path: LauncherPath, Data: launcher, Mode: 0o755},
		{Path: "README.md", Data: readme, Mode: 0o644},
	}}}
	for _, p := range Platforms {
		bin, ok := binaries[p.Target]
		if !ok {
			return nil, fmt.Errorf("no binary for %s", p.Target)
		}
		pkgs = append(pkgs, pkg{PlatformManifest(p, version), []File{
			{Path: BinaryPath, Data: bin, Mode: 0o755},
			{Path: "README.md", Data: []byte(platformReadme(p)), Mode: 0o644},
		}})
	}
	var dirs []string
	for _, p := range pkgs {
		d := filepath.Join(dir, p.manifest.Name)
		manifest, err := json.MarshalIndent(p.manifest, "", "  ")
		if err != nil {
			return nil, err
		}
		files := append(p.files, File{Path: "package.json", Data: append(manifest, '\n'), Mode: 0o644}, File{Path: "LICENSE", Data: license, Mode: 0o644})
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		for _, f := range files {
			path := filepath.Join(d, filepath.FromSlash(f.Path))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, f.Data, modeOf(f)); err != nil {
				return nil, err
			}
			// WriteFile keeps the mode of a file already there, and
			// the umask may have masked the new one's.
			if err := os.Chmod(path, modeOf(f)); err != nil {
				return nil, err
			}
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}
