package distcheck

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The ACP registry's rules for an entry, written from its repository
// (github.com/agentclientprotocol/registry at 3de1678): agent.schema.json
// (the JSON Schema every agent.json must meet) and the checks of
// .github/workflows/build_registry.py that go beyond it (the id is the
// directory's name, binaries for every OS, versions that agree, the
// icon). Its URL checks ask the network whether each archive and package
// is published; nothing is published from here, so the tests check
// instead that each names a file dist/ holds.

// RegistryPlatforms are the binary distribution's platforms.
var RegistryPlatforms = []string{"darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"}

var (
	idPattern      = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)
)

// EntryProblems lists what the registry would refuse in agent.json (raw)
// found in directory dir; none when it would take it.
func EntryProblems(dir string, raw []byte) []string {
	var entry map[string]any
	if err := json.Unmarshal(raw, &entry); err != nil {
		return []string{fmt.Sprintf("agent.json is invalid JSON: %v", err)}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	// agent.schema.json
	for _, k := range []string{"id", "name", "version", "description", "distribution"} {
		if _, ok := entry[k]; !ok {
			add("%s is required", k)
		}
	}
	str := func(k string, minLen int) (string, bool) {
		v, present := entry[k]
		if !present {
			return "", false
		}
		s, ok := v.(string)
		if !ok {
			add("%s must be a string", k)
			return "", false
		}
		if len(s) < minLen {
			add("%s must not be empty", k)
		}
		return s, true
	}
	id, _ := str("id", 0)
	if _, ok := entry["id"]; ok && !idPattern.MatchString(id) {
		add("id %q must match %s", id, idPattern)
	}
	str("name", 1)
	str("description", 1)
	version, hasVersion := str("version", 0)
	if hasVersion && !versionPattern.MatchString(version) {
		add("version %q must match %s", version, versionPattern)
	}
	if repo, ok := str("repository", 0); ok && !isURI(repo) {
		add("repository %q must be a URI", repo)
	}
	str("license", 0)
	str("icon", 0)
	if a, ok := entry["authors"]; ok && !stringList(a) {
		add("authors must be a list of strings")
	}
	dist, _ := entry["distribution"].(map[string]any)
	if _, ok := entry["distribution"]; ok && dist == nil {
		add("distribution must be an object")
	}
	if dist != nil && len(dist) == 0 {
		add("distribution must have at least one of binary, npx, uvx")
	}
	for k, v := range dist {
		switch k {
		case "binary":
			out = append(out, binaryProblems(v)...)
		case "npx", "uvx":
			out = append(out, packageProblems(k, v)...)
		default:
			add("distribution.%s is not a distribution type (binary, npx, uvx)", k)
		}
	}

	// build_registry.py
	if id != "" && id != dir {
		add("id %q must be the directory's name, %q", id, dir)
	}
	if hasVersion {
		parts := strings.Split(version, ".")
		if len(parts) < 3 || !digits(parts[0]) || !digits(parts[1]) || !digits(parts[2]) {
			add("version %q must be a semantic version (1.0.0)", version)
		}
	}
	if bin, ok := dist["binary"].(map[string]any); ok && len(bin) > 0 {
		families := map[string]bool{}
		for p := range bin {
			if slices.Contains(RegistryPlatforms, p) {
				families[strings.Split(p, "-")[0]] = true
			}
		}
		for _, os := range []string{"darwin", "linux", "windows"} {
			if !families[os] {
				add("the binary distribution must include builds for every OS: %s is missing", os)
			}
		}
		for _, p := range sortedKeys(bin) {
			target, _ := bin[p].(map[string]any)
			archive, _ := target["archive"].(string)
			if strings.Contains(archive, "/latest/") {
				add("the binary URL for %s uses /latest/: use the version", p)
			} else if v := urlVersion(archive); v != "" && v != version {
				add("the binary URL for %s has version %s, the entry %s", p, v, version)
			}
		}
	}
	if npx, ok := dist["npx"].(map[string]any); ok {
		pkg, _ := npx["package"].(string)
		if strings.Contains(strings.ToLower(pkg), "@latest") {
			add("the npx package uses @latest: use the version (%s)", pkg)
		} else if v := npmVersion(pkg); v != "" && v != version {
			add("the npx package's version (%s) is not the entry's (%s)", v, version)
		}
	}
	if uvx, ok := dist["uvx"].(map[string]any); ok {
		pkg, _ := uvx["package"].(string)
		if strings.Contains(strings.ToLower(pkg), "@latest") {
			add("the uvx package uses @latest: use the version (%s)", pkg)
		}
		if m := regexp.MustCompile(`[=@]+([\d.]+)`).FindStringSubmatch(pkg); m != nil && m[1] != version {
			add("the uvx package's version (%s) is not the entry's (%s)", m[1], version)
		}
	}
	return out
}

func binaryProblems(v any) []string {
	bin, ok := v.(map[string]any)
	if !ok {
		return []string{"distribution.binary must be an object"}
	}
	if len(bin) == 0 {
		return []string{"distribution.binary must have at least one platform"}
	}
	var out []string
	for _, p := range sortedKeys(bin) {
		if !slices.Contains(RegistryPlatforms, p) {
			out = append(out, fmt.Sprintf("distribution.binary.%s is not a platform (%s)", p, strings.Join(RegistryPlatforms, ", ")))
		}
		target, ok := bin[p].(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("distribution.binary.%s must be an object", p))
			continue
		}
		where := "distribution.binary." + p
		for _, k := range []string{"archive", "cmd"} {
			if _, ok := target[k].(string); !ok {
				out = append(out, fmt.Sprintf("%s.%s is required, a string", where, k))
			}
		}
		if a, ok := target["archive"].(string); ok && !isURI(a) {
			out = append(out, fmt.Sprintf("%s.archive %q must be a URI", where, a))
		}
		out = append(out, argsEnvProblems(where, target, "archive", "cmd")...)
	}
	return out
}

func packageProblems(kind string, v any) []string {
	pkg, ok := v.(map[string]any)
	where := "distribution." + kind
	if !ok {
		return []string{where + " must be an object"}
	}
	var out []string
	if s, ok := pkg["package"].(string); !ok || s == "" {
		out = append(out, where+".package is required, a package name (with its version)")
	}
	return append(out, argsEnvProblems(where, pkg, "package")...)
}

// argsEnvProblems checks args and env, and that obj has no key but
// these and allowed (additionalProperties: false).
func argsEnvProblems(where string, obj map[string]any, allowed ...string) []string {
	var out []string
	for _, k := range sortedKeys(obj) {
		switch {
		case k == "args":
			if !stringList(obj[k]) {
				out = append(out, where+".args must be a list of strings")
			}
		case k == "env":
			env, ok := obj[k].(map[string]any)
			if !ok {
				out = append(out, where+".env must be an object")
			}
			for name, v := range env {
				if _, ok := v.(string); !ok {
					out = append(out, fmt.Sprintf("%s.env.%s must be a string", where, name))
				}
			}
		case !slices.Contains(allowed, k):
			out = append(out, fmt.Sprintf("%s.%s is not a field the registry knows", where, k))
		}
	}
	return out
}

// IconProblems lists what the registry would refuse in icon.svg.
func IconProblems(svg string) []string {
	var out []string
	w := regexp.MustCompile(`<svg[^>]*\swidth=["'](\d+)`).FindStringSubmatch(svg)
	h := regexp.MustCompile(`<svg[^>]*\sheight=["'](\d+)`).FindStringSubmatch(svg)
	var width, height float64
	if w == nil || h == nil {
		vb := regexp.MustCompile(`viewBox=["'][\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)`).FindStringSubmatch(svg)
		if vb == nil {
			return []string{"the icon has no width and height, and no viewBox"}
		}
		width, _ = strconv.ParseFloat(vb[1], 64)
		height, _ = strconv.ParseFloat(vb[2], 64)
	} else {
		width, _ = strconv.ParseFloat(w[1], 64)
		height, _ = strconv.ParseFloat(h[1], 64)
	}
	if width != height {
		out = append(out, fmt.Sprintf("the icon must be square (it is %gx%g)", width, height))
	}
	if width != 16 || height != 16 {
		out = append(out, fmt.Sprintf("the icon must be 16x16 (it is %gx%g)", width, height))
	}
	allowed := []string{"currentcolor", "none", "inherit"}
	for _, attr := range []string{"fill", "stroke"} {
		for _, m := range regexp.MustCompile(`(?i)\b`+attr+`\s*=\s*["']([^"']+)["']`).FindAllStringSubmatch(svg, -1) {
			if !slices.Contains(allowed, strings.ToLower(strings.TrimSpace(m[1]))) {
				out = append(out, fmt.Sprintf("the icon has a colour, %s=%q: use currentColor or none", attr, m[1]))
			}
		}
	}
	for _, m := range regexp.MustCompile(`(?i)\bstyle\s*=\s*["']([^"']+)["']`).FindAllStringSubmatch(svg, -1) {
		for _, attr := range []string{"fill", "stroke"} {
			if s := regexp.MustCompile(`(?i)\b` + attr + `\s*:\s*([^;]+)`).FindStringSubmatch(m[1]); s != nil &&
				!slices.Contains(allowed, strings.ToLower(strings.TrimSpace(s[1]))) {
				out = append(out, fmt.Sprintf("the icon's style has a colour, %s: %s", attr, strings.TrimSpace(s[1])))
			}
		}
	}
	if !regexp.MustCompile(`(?i)currentColor`).MatchString(svg) {
		out = append(out, "the icon must use currentColor, so that it follows the theme")
	}
	return out
}

func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}

func stringList(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range list {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// urlVersion is the version a release URL carries (/download/v1.2.3/),
// padded to three parts as the registry pads it.
func urlVersion(u string) string {
	m := regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`).FindStringSubmatch(u)
	if m == nil {
		if m := regexp.MustCompile(`/-/[^/]+-(\d+\.\d+\.\d+)\.tgz`).FindStringSubmatch(u); m != nil {
			return m[1]
		}
		return ""
	}
	parts := strings.Split(m[1], ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return strings.Join(parts[:3], ".")
}

// npmVersion is the version in an npm package spec (name@1.2.3,
// @scope/name@1.2.3); "" for none.
func npmVersion(spec string) string {
	rest := spec
	if strings.HasPrefix(spec, "@") {
		rest = spec[1:]
	}
	if i := strings.Index(rest, "@"); i >= 0 {
		return rest[i+1:]
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
