package rpc

// SetTestHookServing sets testHookServing for a test (nil clears it).
func SetTestHookServing(f func()) {
	if f == nil {
		testHookServing.Store(nil)
		return
	}
	testHookServing.Store(&f)
}

// LeadLen is how much of a message over the limit is kept to find its id.
const LeadLen = leadLen
