package bundle

import (
	"context"

	"github.com/zyxtt/zyxtt/backends"
)

// Workload is the run's inputs as a backends.Workload: selection measures a
// device with it ("fastest") and looks its size up in the performance
// record ("auto").
func (r *Run) Workload() backends.Workload { return runWorkload{r} }

type runWorkload struct{ r *Run }

// Bytes is the size of the run's buffers.
func (w runWorkload) Bytes() int64 {
	var n int64
	for i, p := range w.r.B.Params {
		if p.Kind.IsBuffer() {
			n += Elems(w.r.Shapes[i]) * int64(p.DType.Size())
		}
	}
	return n
}

// Measure runs the program on dev as Execute does (upload, a first launch
// that warms it up, launches timed launches, download) and gives every
// buffer it made back. The transfers it reports are a second round's: a
// first upload and download on a device pay costs a process pays once
// (pinning host-pool memory, making staging buffers, a driver's first
// allocations), which on a GPU are many times the copy itself and would
// make the record rank a device by its set-up instead of its work.
func (w runWorkload) Measure(ctx context.Context, dev *backends.Device, exe *backends.Executable, launches int) (backends.Measurement, error) {
	r := w.r
	p, err := r.B.Program(r.Vals)
	if err != nil {
		return backends.Measurement{}, err
	}
	mark := len(r.owned)
	defer r.releaseFrom(mark)
	if _, err := r.Execute(ctx, dev, exe, p, 0, false); err != nil {
		return backends.Measurement{}, err
	}
	r.releaseFrom(mark)
	res, err := r.Execute(ctx, dev, exe, p, launches, false)
	if err != nil {
		return backends.Measurement{}, err
	}
	return backends.Measurement{Upload: res.Upload, Download: res.Download, Launches: res.Timed}, nil
}

// releaseFrom releases the buffers allocated since mark.
func (r *Run) releaseFrom(mark int) {
	for i := len(r.owned) - 1; i >= mark; i-- {
		_ = r.owned[i].pool.Release(r.owned[i].id)
	}
	r.owned = r.owned[:mark]
}
