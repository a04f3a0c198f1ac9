package main

import (
	"io"
	"os"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/bundle"
)

// progress draws bars on a terminal and nothing elsewhere (CI logs, pipes,
// files), so logs stay quiet: a spinner while the kernels build, bars for
// the upload, the --repeat launches and the download. Each is removed from
// the screen when its work ends, so the report follows a clean screen. A nil *progress is valid and draws nothing.
type progress struct {
	p *mpb.Progress
}

// newProgress returns bars drawn to w when w is a terminal, else nil.
func newProgress(w io.Writer) *progress {
	if os.Getenv("ZYX_PROGRESS") == "0" || !isTerminal(w) {
		return nil
	}
	return &progress{p: mpb.New(mpb.WithConsoleWriter(sizedWriter{cupwriter.New(w, false)}), mpb.WithWidth(40))}
}

// sizedWriter is mpb's terminal writer with a size when the terminal
// reports none: a pseudo-terminal whose size was never set (script(1)
// without a terminal, some CI runners and editors) reports 0x0, and mpb
// would draw no row at all.
type sizedWriter struct{ *cupwriter.Writer }

func (w sizedWriter) GetTermSize() (int, int, error) {
	width, height, err := w.Writer.GetTermSize()
	if err != nil || width <= 0 || height <= 0 {
		return 80, 24, nil
	}
	return width, height, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// bar is one progress bar; a nil *bar ignores every call.
type bar struct{ b *mpb.Bar }

// spinner shows a task of unknown length (compiling).
func (p *progress) spinner(name string) *bar {
	if p == nil {
		return nil
	}
	return &bar{p.p.AddSpinner(0,
		mpb.PrependDecorators(decor.Name(name, decor.WC{W: 12, C: decor.DindentRight})),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)),
		mpb.BarRemoveOnComplete(),
	)}
}

// bytes shows a transfer of total bytes.
func (p *progress) bytes(name string, total int64) *bar {
	return p.counter(name, total, decor.CountersKibiByte("% .1f / % .1f"))
}

// count shows n repetitions.
func (p *progress) count(name string, total int64) *bar {
	return p.counter(name, total, decor.CountersNoUnit("%d / %d"))
}

// counter is a bar of total named name, its count shown by counters.
func (p *progress) counter(name string, total int64, counters decor.Decorator) *bar {
	if p == nil {
		return nil
	}
	return &bar{p.p.AddBar(total,
		mpb.PrependDecorators(decor.Name(name, decor.WC{W: 12, C: decor.DindentRight})),
		mpb.AppendDecorators(counters),
		mpb.BarRemoveOnComplete(),
	)}
}

func (b *bar) set(n int64) {
	if b != nil {
		b.b.SetCurrent(n)
	}
}

func (b *bar) add(n int64) {
	if b != nil {
		b.b.IncrInt64(n)
	}
}

// done completes the bar (a spinner stops; an unfinished bar is dropped).
func (b *bar) done() {
	if b == nil {
		return
	}
	if b.b.Current() == 0 || !b.b.Completed() {
		b.b.SetTotal(-1, true)
	}
}

// wait flushes the bars; call it before printing the report.
func (p *progress) wait() {
	if p != nil {
		p.p.Wait()
	}
}

// bundleProgress draws the bundle pipeline's progress with p's bars; nil
// when p draws nothing.
func (p *progress) bundleProgress() bundle.Progress {
	if p == nil {
		return nil
	}
	return bundleBars{p}
}

type bundleBars struct{ p *progress }

func (b bundleBars) Spinner(name string) bundle.Bar            { return b.p.spinner(name) }
func (b bundleBars) Bytes(name string, total int64) bundle.Bar { return b.p.bytes(name, total) }
func (b bundleBars) Count(name string, total int64) bundle.Bar { return b.p.count(name, total) }

// The bundle.Bar methods.

// Set moves the bar to n.
func (b *bar) Set(n int64) { b.set(n) }

// Add advances the bar by n.
func (b *bar) Add(n int64) { b.add(n) }

// Done completes the bar.
func (b *bar) Done() { b.done() }
