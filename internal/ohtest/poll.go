package ohtest

import (
	"fmt"
	"testing"
	"time"
)

// pollEvery spaces Poll's looks: often enough that a test waits little
// past the moment, seldom enough to leave the CPU to what it waits for.
const pollEvery = 10 * time.Millisecond

// Poll is how a test waits for state that sends no event: a process gone,
// a file written, what another process reports. It calls get until get
// says done, and returns get's value; past within, the test fails, naming
// what it waited for and the last value got. In-process state is awaited
// on a channel instead.
func Poll[T any](t testing.TB, within time.Duration, what string, get func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		v, done := get()
		if done {
			return v
		}
		if time.Now().After(deadline) {
			if _, cond := any(v).(bool); cond {
				t.Fatalf("timed out after %s waiting for %s", within, what)
			}
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", within, what, fmt.Sprintf("%+v", v))
		}
		time.Sleep(pollEvery)
	}
}

// WaitFor is Poll of a condition, for up to 20 s.
func WaitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	WaitWithin(t, 20*time.Second, what, ok)
}

// WaitWithin is Poll of a condition, for up to within.
func WaitWithin(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	Poll(t, within, what, func() (bool, bool) { v := ok(); return v, v })
}
