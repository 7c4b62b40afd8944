//go:build !race

package soak

// raceDetector is off (see race_test.go).
const raceDetector = false
