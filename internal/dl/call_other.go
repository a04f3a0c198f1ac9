//go:build !amd64 || windows

package dl

// invoke calls f.fn with f's arguments through purego.SyscallN.
func invoke(f *frame) uintptr { return invokePurego(f) }
