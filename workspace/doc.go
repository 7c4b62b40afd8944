// Package workspace owns the agent's view of the files under the workspace
// roots: path containment, text reads and atomic writes with version tokens,
// listings, the overlay of unsaved editor buffers, and change watching.
//
// It must not know about JSON-RPC, LSP or OpenHands: callers map the typed
// errors in this package (each has a stable Kind) to wire codes, and plug the
// editor's buffers in through the BufferEditor interface.
//
// Every path a caller passes is resolved by Roots.Resolve before any system
// call touches it, and the operation then acts on the resolved, symlink-free
// path, never on the caller's spelling. Swapping a directory for a symlink
// between the check and the system call (a TOCTOU race by a local attacker)
// is out of scope: the threat here is an agent naming paths, not a hostile
// process racing us.
//
// Writes replace files atomically: the new bytes go to a temporary file in the
// same directory, named ".<name>.oh-bridge-tmp-<random>", which is fsynced and
// renamed over the target. A process killed mid-write can leave such a file
// behind; listings do not hide it, so the name says where it came from.
package workspace
