//go:build race

package httpapi_test

// raceDetector: this test binary runs under the race detector (go test -race).
const raceDetector = true
