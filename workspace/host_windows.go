package workspace

import (
	"io/fs"
)

// linkCount is 1: os.Root's FileInfo carries no link count on Windows, so
// hard links are not refused there (docs/safety.md).
func linkCount(fs.FileInfo) uint64 { return 1 }

// changeTime is the modification time: os.Root's FileInfo carries no
// change time on Windows.
func changeTime(fi fs.FileInfo) int64 { return fi.ModTime().UnixNano() }

// readTarget lstats p beneath its root and reads up to limit bytes of it
// if it is a regular file. os.Root has no open that refuses a final
// symlink, so the file is opened after the lstat.
func (r *Roots) readTarget(p string, limit int64) (hostTarget, []byte, error) {
	t, err := r.inspectTarget(p)
	if err != nil || !t.exists() || t.symlnk || !t.fi.Mode().IsRegular() {
		return t, nil, err
	}
	f, err := r.openRead(p)
	if err != nil {
		return t, nil, err
	}
	defer f.Close()
	data, err := readAtMost(f, limit)
	return t, data, err
}
