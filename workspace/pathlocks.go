package workspace

import "sync"

// PathLocks is a keyed mutex: one lock per resolved path, dropped when
// unused. Its zero value is ready; the FS and the editor both serialize
// read-modify-write cycles with it.
type PathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

// Lock locks path p and returns the function that unlocks it.
func (l *PathLocks) Lock(p string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*pathLock)
	}
	pl := l.m[p]
	if pl == nil {
		pl = &pathLock{}
		l.m[p] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.mu.Lock()
	return func() {
		pl.mu.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.m, p)
		}
		l.mu.Unlock()
	}
}
