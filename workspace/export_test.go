package workspace

// Switches for the external tests (package workspace_test), which drive the
// workspace through the editor and so cannot live in this package.

// SetOpenat2ForTest turns the use of openat2 on or off (off: walkBeneath)
// and returns the function restoring the kernel's answer.
func SetOpenat2ForTest(on bool) (restore func()) {
	old := openat2Works.Load()
	openat2Works.Store(on && old)
	return func() { openat2Works.Store(old) }
}

// Openat2Available reports whether this kernel answers openat2.
func Openat2Available() bool { return openat2Works.Load() }

// SetWriteHookForTest runs h at the start of every WriteTextFile, after the
// editor's read and before the write.
func SetWriteHookForTest(h func(resolved string)) (restore func()) {
	testHookWrite = h
	return func() { testHookWrite = nil }
}
