// Package conformance runs backendtest's shared suites on the tt backend's
// pools, under the mock runtime and the C++ runtime's emulator. It is a
// package of its own because backendtest imports bundle: the tt package's
// tests build without it.
package conformance
