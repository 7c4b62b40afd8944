package workspace

import (
	"io/fs"
	"syscall"
)

// changeTime is the file's ctime, which no user can set: a directory's
// moves when one of its entries is renamed, created or removed.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return fi.ModTime().UnixNano()
}
