package ohevents_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohevents"
)

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// TestCheckVersion: the range the types are for. A 1.x from
// OldestSupported on is spoken to; an older 1.x is refused in words
// naming both versions and how to upgrade; another major version too; all
// with the kind unsupported_api_version.
func TestCheckVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		old     bool
		words   []string // none: accepted
	}{
		{ohevents.OldestSupported, false, nil},
		{ohevents.NewestTested, false, nil},
		{"1.49.1.post1", false, nil},
		{"1.100.0", false, nil},
		{"1.49.0", true, []string{"is version 1.49.0, older than 1.49.1, the oldest the bridge supports", "uv tool upgrade openhands-agent-server"}},
		{"1.21.0", true, []string{"is version 1.21.0, older than 1.49.1"}},
		{"0.62.0", false, []string{"speaks API version 0.62.0"}},
		{"2.0.0", false, []string{"speaks API version 2.0.0"}},
		{"", false, []string{"speaks API version ;"}},
	} {
		err := ohevents.CheckVersion("http://h:1", c.version)
		if c.words == nil {
			if err != nil {
				t.Errorf("%s refused: %v", c.version, err)
			}
			continue
		}
		var ve *ohevents.VersionError
		if !errors.As(err, &ve) || ve.Kind() != "unsupported_api_version" || ve.Old != c.old {
			t.Errorf("%s: %v (%T); want a VersionError, old %v", c.version, err, err, c.old)
			continue
		}
		for _, w := range append(c.words, "http://h:1") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
	}
}
