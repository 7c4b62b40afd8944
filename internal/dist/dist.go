// Package dist makes the bridge's packages for the places agents and
// editors install from: npm (a main package whose `oh-bridge` command runs
// the binary of one optional package per platform, as esbuild and Biome
// do), PyPI (a wheel per platform carrying the binary as its script, and
// a wheel for any other platform that says there is none), the archives a
// GitHub release would hold, and the ACP registry's entry. It takes the
// binaries `task packages` builds for the VS Code extension, writes the
// wheels and archives itself, and stages the npm packages for `npm pack`.
// It knows the packages' names, layouts and metadata, and nothing of what
// the bridge does.
package dist

import (
	"fmt"
	"strings"
)

// Names and places, the same in every package.
const (
	// NPMName is the npm package with the `oh-bridge` command.
	NPMName = "oh-bridge"
	// PyPIName is the PyPI project.
	PyPIName = "oh-bridge"
	// RegistryID is the ACP registry entry's id and directory.
	RegistryID = "oh-bridge"
	// Repository is the source, where a release would be published.
	Repository = "https://github.com/oh-bridge/oh-bridge"
	// License is the SPDX identifier of extension/LICENSE.
	License = "MIT"
	// Summary is the one line every package shows.
	Summary = "Lets an OpenHands agent act in your editor and workspace: files, edits in open buffers, " +
		"commands in shell-integrated terminals; MCP tools and an ACP agent"
)

// Platform is a platform with a binary of its own.
type Platform struct {
	// Target is VS Code's name for it (task packages' TARGETS), which
	// is also Node's process.platform-process.arch.
	Target       string
	GOOS, GOARCH string
	// Registry is the ACP registry's name for it.
	Registry string
	// WheelTags are the wheel's platform tags, most specific first.
	WheelTags []string
}

// Platforms are those with an npm package and a wheel: the extension's
// (pkgcheck.Targets; distcheck's TestEveryPlatformHasItsPackages). The Go binary is
// static and needs no libc, so a Linux wheel says both manylinux (glibc
// 2.17 and later, with manylinux2014, its older name, for pip before
// 20.3) and musllinux (musl 1.1 and later), as ziglang's wheels do for
// the same reason. A macOS wheel says macOS 12, the oldest Go 1.26 runs
// on.
var Platforms = []Platform{
	{"linux-x64", "linux", "amd64", "linux-x86_64", linuxTags("x86_64")},
	{"linux-arm64", "linux", "arm64", "linux-aarch64", linuxTags("aarch64")},
	{"darwin-x64", "darwin", "amd64", "darwin-x86_64", []string{"macosx_12_0_x86_64"}},
	{"darwin-arm64", "darwin", "arm64", "darwin-aarch64", []string{"macosx_12_0_arm64"}},
}

// Windows has a release archive only, for the ACP registry, whose
// binary distribution must cover macOS, Linux and Windows. On Windows
// the bridge serves files and edits, and its terminals are not ported
// (docs/platforms.md), so the npm and PyPI packages leave it out.
var Windows = Platform{Target: "win32-x64", GOOS: "windows", GOARCH: "amd64", Registry: "windows-x86_64"}

// PlatformFor is the platform whose packages carry the binary for
// goos/goarch; ok is false when no package of ours does.
func PlatformFor(goos, goarch string) (p Platform, ok bool) {
	for _, p := range Platforms {
		if p.GOOS == goos && p.GOARCH == goarch {
			return p, true
		}
	}
	return Platform{}, false
}

func linuxTags(arch string) []string {
	return []string{"manylinux_2_17_" + arch, "manylinux2014_" + arch, "musllinux_1_1_" + arch}
}

// Exe is the binary's file name on the platform.
func (p Platform) Exe() string {
	if p.GOOS == "windows" {
		return "oh-bridge.exe"
	}
	return "oh-bridge"
}

// NPMPackage is the name of the npm package that carries p's binary.
func (p Platform) NPMPackage() string { return NPMName + "-" + p.Target }

// NPMTarball is the file `npm pack` makes of package name at version.
func NPMTarball(name, version string) string { return name + "-" + version + ".tgz" }

// NodeOS and NodeCPU are the package.json os and cpu values for p.
func (p Platform) NodeOS() string { return p.GOOS }

// NodeCPU is Node's name for p's CPU.
func (p Platform) NodeCPU() string {
	return map[string]string{"amd64": "x64", "arm64": "arm64"}[p.GOARCH]
}

// wheelDist is the project's name as wheel file names spell it.
var wheelDist = strings.ReplaceAll(PyPIName, "-", "_")

// WheelFile is the file name of p's wheel at version (PEP 427, with the
// platform tags compressed as PEP 425 allows).
func (p Platform) WheelFile(version string) string {
	return fmt.Sprintf("%s-%s-py3-none-%s.whl", wheelDist, version, strings.Join(p.WheelTags, "."))
}

// AnyWheelFile is the file name of the wheel for every other platform.
func AnyWheelFile(version string) string {
	return fmt.Sprintf("%s-%s-py3-none-any.whl", wheelDist, version)
}

// Archive is the file name of p's release archive at version.
func (p Platform) Archive(version string) string {
	ext := ".tar.gz"
	if p.GOOS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("oh-bridge-%s-%s%s", version, p.Registry, ext)
}

// ReleaseURL is where a GitHub release of version would serve file.
// Nothing is published from here: the URL follows GitHub's pattern for a
// release tagged v<version>.
func ReleaseURL(version, file string) string {
	return fmt.Sprintf("%s/releases/download/v%s/%s", Repository, version, file)
}

// GoInstall is the command that builds the bridge where no package has
// a binary.
func GoInstall(version string) string {
	return "go install github.com/oh-bridge/oh-bridge/cmd/oh-bridge@v" + version
}
