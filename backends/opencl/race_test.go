//go:build race

package opencl

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// purego.SyscallN's pooled argument blocks are sometimes allocated afresh.
const raceEnabled = true
