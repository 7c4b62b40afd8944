package editor

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// The text Python gives a failed system call, for OHEditor's "Ran into
// {e} while trying to ..." messages: str() of the OSError, not the
// bridge's own sentence about the fault.

// pyOSError is str(e) of the OSError Python raises where the bridge's
// call failed with err: "[Errno 28] No space left on device", with
// ": 'name'" when the call that failed opened a file (name is what Python
// opened) and ": 'src' -> 'dst'" for a rename to renamedTo (": 'name'"
// when Python renames nothing, renamedTo ""). ok is false when err
// carries no errno.
func pyOSError(err error, name, renamedTo string) (s string, ok bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "", false
	}
	s = fmt.Sprintf("[Errno %d] %s", int(errno), pyStrerror(errno))
	var link *os.LinkError
	var path *os.PathError
	switch {
	case errors.As(err, &link) && renamedTo != "":
		s += ": " + pytext.Repr(name) + " -> " + pytext.Repr(renamedTo)
	case errors.As(err, &link), errors.As(err, &path) && opensFile(path.Op):
		s += ": " + pytext.Repr(name)
	}
	return s, true
}

// opensFile reports whether a failed call of this op names its file in
// Python's error: opening and creating do; a write, fsync or close on an
// open file does not ("[Errno 28] No space left on device").
func opensFile(op string) bool {
	switch op {
	case "open", "openat", "openat2", "create", "mkdir":
		return true
	}
	return false
}

// pyStrerror is C's strerror for errno, as Python prints it: Go's text
// with its first letter capitalised back ("no space left on device" is
// glibc's "No space left on device").
func pyStrerror(errno syscall.Errno) string {
	s := errno.Error()
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// faultKind is the kind of the fault a workspace error reports ("no_space",
// "read_only_file_system", "is_directory", ...), or KindIO when it says
// none.
func faultKind(err error) string {
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return KindIO
}
