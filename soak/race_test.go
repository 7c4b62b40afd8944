//go:build race

package soak

// raceDetector is on: the test process's RSS then includes the detector's
// shadow memory, which grows with every goroutine and object and is not
// given back, so RSS says nothing about the in-process bridge.
const raceDetector = true
