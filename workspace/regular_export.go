package workspace

import (
	"errors"
	"os"
)

// The rule of regular.go for callers that read bytes the FS does not
// serve as text: V0's read action sniffs a file for NUL bytes and reads
// images, PDFs and videos whole, and the UI's git_diff.py helper reads the
// file it compares (package ohactions). They read the agent's files, so by
// the same rule as the agent's reads: beneath the root, without blocking,
// regular files only, capped.

// OpenRegular opens path (absolute, or relative to the first root) for
// reading if it is a regular file inside the roots: resolved and opened
// beneath its root, without blocking (a FIFO with no writer does not hold
// the call), and checked through the open fd. A path outside the roots is
// *OutsideRootsError, a missing one *NotFoundError, a directory
// *IsDirectoryError, a FIFO, socket or device *SpecialFileError, each
// naming path as given.
func (r *Roots) OpenRegular(path string) (*os.File, error) {
	p, err := r.Resolve(path)
	if err != nil {
		return nil, err
	}
	f, _, err := r.openRegular(p)
	if err != nil {
		return nil, regularError(err, path)
	}
	return f, nil
}

// ReadRegular reads the regular file path as OpenRegular opens it, at most
// limit bytes: a larger file is *NotTextError with reason too_large, its
// size (as far as it was read) and the limit.
func (r *Roots) ReadRegular(path string, limit int64) ([]byte, error) {
	p, err := r.Resolve(path)
	if err != nil {
		return nil, err
	}
	data, err := r.readFile(p, limit)
	var over *errOverCap
	switch {
	case errors.As(err, &over):
		return nil, &NotTextError{Path: path, Reason: NotTextTooLarge, Size: over.size, Limit: limit}
	case err != nil:
		return nil, regularError(err, path)
	}
	return data, nil
}
