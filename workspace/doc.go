// Package workspace owns the agent's view of the files under the workspace
// roots: path containment, text reads and atomic writes with version tokens,
// listings, the overlay of unsaved editor buffers, and change watching.
//
// It must not know about JSON-RPC, LSP or OpenHands: callers map the typed
// errors in this package (each has a stable Kind) to wire codes, and plug the
// editor's buffers in through the BufferEditor interface.
//
// Every path a caller passes is resolved by Roots.Resolve, which checks it
// against the roots by name. The system calls then never take a path
// string: each root is held open (a directory fd on Unix, an os.Root on
// Windows), and every open, create, rename and delete resolves the path
// beneath it (openat2 RESOLVE_BENEATH, or a component-by-component walk
// with O_NOFOLLOW where openat2 is missing, or os.Root's own walk on
// Windows; beneath.go), so a symlink swapped in between the check and the
// call (by another process, or the agent's own shell) cannot lead outside.
//
// Writes replace files atomically: the new bytes go to a temporary file in the
// same directory, named ".<name>.oh-bridge-tmp-<random>", which is fsynced and
// renamed over the target in the directory held open (whose fsync follows,
// on Unix; Windows cannot fsync a directory). A failed write removes it
// and leaves the old content; one a killed process leaves behind is removed
// at the next start, from a journal of names in flight (tmpjournal.go).
// Disk faults answer *IOError, naming the path, the cause and the fix.
// docs/safety.md describes both.
package workspace
