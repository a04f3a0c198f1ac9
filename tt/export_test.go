package tt

import (
	"maps"
	"slices"
	"sort"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// ProgramIDs are the runtime's ids of the executable's programs, for tests
// that ask the runtime directly whether it still holds them.
func (e *Executable) ProgramIDs() []uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []uint64
	for _, rp := range e.progs {
		out = append(out, rp.id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Requests are the compile requests of the executable's programs.
func (e *Executable) Requests() []ttruntime.CompileRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []ttruntime.CompileRequest
	for _, k := range slices.Sorted(maps.Keys(e.progs)) {
		out = append(out, e.progs[k].req)
	}
	return out
}

// Client is the device's runtime client.
func (d *Device) Client() *ttruntime.Client { return d.rt }

// Device is the executable's device.
func (e *Executable) Device() *Device { return e.dev }

// RuntimeBuffer is the runtime's id of a pool buffer.
func (p *Pool) RuntimeBuffer(id driver.BufferID) (uint64, error) {
	b, err := p.lookup("test", id)
	if err != nil {
		return 0, err
	}
	return b.rid, nil
}
