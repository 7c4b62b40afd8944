package ohevents

import (
	"fmt"
	"strconv"
	"strings"
)

// OldestSupported is the oldest agent-server the bridge speaks to: the
// oldest it is tested against (the one it starts itself through uvx, and
// the one Agent Canvas 1.20.0 starts), whose events these types read.
// docs/openhands-v1.md says why.
const OldestSupported = "1.49.1"

// NewestTested is the newest agent-server the types were read from and
// the tests run against; a later 1.x is spoken to, and a kind it adds is
// passed on as an Other.
const NewestTested = "1.58.2"

// CheckVersion refuses an agent-server at url whose /server_info version
// the bridge does not speak: another major version, or a 1.x older than
// OldestSupported. The error is a *VersionError.
func CheckVersion(url, version string) error {
	v, ok := parseVersion(version)
	if !ok || v[0] != 1 {
		return &VersionError{URL: url, Version: version}
	}
	if oldest, _ := parseVersion(OldestSupported); compareVersions(v, oldest) < 0 {
		return &VersionError{URL: url, Version: version, Old: true}
	}
	return nil
}

// VersionError: an agent-server whose API version the bridge does not
// speak: another major version, or a 1.x older than OldestSupported.
type VersionError struct {
	URL     string
	Version string // what the server says it is
	// Old is set when the server is a 1.x older than OldestSupported.
	Old bool
}

func (e *VersionError) Error() string {
	if e.Old {
		return fmt.Sprintf("the agent-server at %s is version %s, older than %s, the oldest the bridge supports "+
			"(it relies on the session socket and the requests of %s and later); upgrade it: "+
			"`uv tool upgrade openhands-agent-server`, or `pip install --upgrade openhands-agent-server` in its environment, "+
			"or pull a newer agent-server image", e.URL, e.Version, OldestSupported, OldestSupported)
	}
	return fmt.Sprintf("the agent-server at %s speaks API version %s; the bridge speaks the agent-server API of version 1 (1.x); update the agent-server or the bridge", e.URL, e.Version)
}

// Kind is "unsupported_api_version".
func (e *VersionError) Kind() string { return "unsupported_api_version" }

// Data says which version the server speaks, and which the bridge does.
func (e *VersionError) Data() map[string]any {
	return map[string]any{"serverVersion": e.Version, "supported": "1.x", "oldestSupported": OldestSupported}
}

// parseVersion reads "1.58.2" (a leading v, and what follows a part's
// digits, as in "1.50.0rc1" or "1.49.1.post1", are passed over; a missing
// part is 0). ok is false when the major version is not a number.
func parseVersion(s string) (v [3]int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(s), "v"), ".", 4)
	for i := 0; i < len(v) && i < len(parts); i++ {
		digits := parts[i]
		if end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); end >= 0 {
			digits = digits[:end]
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			if i == 0 {
				return v, false
			}
			break
		}
		v[i] = n
	}
	return v, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
