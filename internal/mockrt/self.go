package mockrt

import (
	"os"
	"strings"
)

// Setenver is what SetSelf needs of a test: testing.TB's Setenv.
type Setenver interface{ Setenv(key, value string) }

// SelfEnv is the environment, as KEY=value entries, that makes a runtime
// started from this test binary (os.Args[0], whose TestMain calls
// ServeIfHelper) serve as the mock: HelperEnv is "mockrt", and GORACE
// turns off the 1 s sleep a -race binary makes in its exit (the race
// runtime's atexit_sleep_ms), so that closing the mock is quick and never
// outlasts a driver's shutdown timeout.
func SelfEnv() []string {
	return []string{HelperEnv + "=mockrt", "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}
}

// SetSelf puts SelfEnv in t's environment (t.Setenv: undone when the test
// ends), for the runtimes that a driver under test starts.
func SetSelf(t Setenver) {
	for _, kv := range SelfEnv() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
