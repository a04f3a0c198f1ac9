package tt

import "github.com/zyxtt/zyxtt/ttruntime"

// ProgramID is the runtime's id of the executable's program, for tests that
// ask the runtime directly whether it still holds it.
func (e *Executable) ProgramID() uint64 { return e.id }

// Client is the device's runtime client.
func (d *Device) Client() *ttruntime.Client { return d.rt }
