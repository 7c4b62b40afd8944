package shellint

import (
	"errors"
	"fmt"
	"testing"
)

// TestUnsupportedPlatformError: the error a Windows editor sees for any
// terminal call names the platform, says what does work, and carries the
// kind the faces map to an error code.
func TestUnsupportedPlatformError(t *testing.T) {
	for _, tc := range []struct {
		goos, want string
	}{
		{"windows", "terminals are not supported on Windows yet; files and edits work, and commands need Linux or macOS for now"},
		{"plan9", "terminals are not supported on plan9 yet; files and edits work, and commands need Linux or macOS for now"},
	} {
		t.Run(tc.goos, func(t *testing.T) {
			var err error = fmt.Errorf("open terminal: %w", &UnsupportedPlatformError{GOOS: tc.goos})
			var u *UnsupportedPlatformError
			if !errors.As(err, &u) {
				t.Fatalf("errors.As(%v, *UnsupportedPlatformError) = false", err)
			}
			if got := u.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
			if got, want := u.Kind(), "terminals_unsupported"; got != want {
				t.Errorf("Kind() = %q, want %q", got, want)
			}
			if got := u.Data()["goos"]; got != tc.goos {
				t.Errorf(`Data()["goos"] = %v, want %q`, got, tc.goos)
			}
		})
	}
}
