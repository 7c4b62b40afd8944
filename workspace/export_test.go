package workspace

// Switches for the external tests (package workspace_test), which drive the
// workspace through the editor and so cannot live in this package.

// SetWriteHookForTest runs h at the start of every WriteTextFile, after the
// editor's read and before the write.
func SetWriteHookForTest(h func(resolved string)) (restore func()) {
	testHookWrite = h
	return func() { testHookWrite = nil }
}
