package workspace

// The openat2 switch for the external race test (beneath_race_test.go),
// Linux's alone.

// SetOpenat2ForTest turns the use of openat2 on or off (off: walkBeneath)
// and returns the function restoring the kernel's answer.
func SetOpenat2ForTest(on bool) (restore func()) {
	old := openat2Works.Load()
	openat2Works.Store(on && old)
	return func() { openat2Works.Store(old) }
}

// Openat2Available reports whether this kernel answers openat2.
func Openat2Available() bool { return openat2Works.Load() }
