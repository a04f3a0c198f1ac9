package backendtest

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
	"github.com/zyxtt/zyxtt/hostpool"
)

// BadInput is the bad input RunBadInputConformance feeds a device: a good
// program and its args, which every case breaks a copy of, and what the
// device promises beyond the common cases.
type BadInput struct {
	// Program returns a fresh copy of a program the device compiles and
	// launches with Args.
	Program func(t testing.TB) *driver.Program
	Args    []Arg
	// Check, when set, proves after each case that the device still
	// computes (CheckVadd for vadd). A good launch must succeed in any
	// case.
	Check func(t testing.TB, dev *backends.Device, exe *backends.Executable)
	// BuildsCode: the device builds a variant of a format it accepts, so it
	// refuses a program with none (ErrNoVariant) and an entry the code
	// lacks (ErrCompile). Every backend but the dummy, which compiles any
	// valid program.
	BuildsCode bool
	// GridLimits: a launch whose grid exceeds Info().MaxGlobalWorkDims is
	// refused (ErrInvalidArgument).
	GridLimits bool
	// Cases are the backend's own, run the same way after the shared ones.
	Cases []BadCase
}

// BadCase is one bad input. Run makes it on the device and returns the
// error, which must wrap Want (nil: any error) and name the backend unless
// it is the context's own error.
type BadCase struct {
	Name string
	Want error
	Run  func(t testing.TB, e *BadEnv) error
}

// BadEnv is what a case runs against: the device, the good program
// compiled, and good args on the device's pool.
type BadEnv struct {
	Dev  *backends.Device
	Good *backends.Executable
	Args []driver.LaunchArg
	in   *BadInput
}

// Program is a fresh copy of the suite's program, for a case to break.
func (e *BadEnv) Program(t testing.TB) *driver.Program { return e.in.Program(t) }

// Compile compiles p on the device and returns the error; an executable
// that does compile is released.
func (e *BadEnv) Compile(p *driver.Program) error {
	exe, err := e.Dev.Compile(context.Background(), p)
	if exe != nil {
		_ = exe.Release()
	}
	return err
}

// LaunchWith compiles p (which must compile) and launches it with args.
func (e *BadEnv) LaunchWith(t testing.TB, p *driver.Program, args []driver.LaunchArg) error {
	exe, err := e.Dev.Compile(context.Background(), p)
	require.NoError(t, err)
	defer exe.Release()
	return exe.Launch(context.Background(), args)
}

// RunBadInputConformance feeds dev every kind of bad input a backend must
// refuse with a clear error, as a subtest each, and after each proves that
// the device still launches the good program (and, with in.Check, still
// computes). The shared cases:
//
//   - Compile: a nil program (an error, no panic); an invalid program
//     (ErrInvalidArgument); with in.BuildsCode, a program with no variant
//     in a format the device accepts (ErrNoVariant) and an entry the code
//     does not define (ErrCompile, where the variant names an entry); a
//     cancelled context;
//   - Launch: fewer or more args than params, a scalar where a buffer
//     belongs and the reverse, a scalar of the wrong dtype
//     (ErrInvalidArgument); a freed buffer and a buffer of another pool
//     (ErrUnknownBuffer); with in.GridLimits, a grid beyond the device
//     (ErrInvalidArgument); a cancelled context.
//
// Then in.Cases.
func RunBadInputConformance(t *testing.T, devDriver driver.Device, in BadInput) {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	ctx := context.Background()
	good, err := dev.Compile(ctx, in.Program(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = good.Release() })
	e := &BadEnv{Dev: dev, Good: good, Args: MakeArgs(t, dev.Pool(), in.Args), in: &in}
	require.NoError(t, good.Launch(ctx, e.Args), "the good program launches")

	for _, c := range append(sharedBadCases(t, e), in.Cases...) {
		t.Run(c.Name, func(t *testing.T) {
			err := c.Run(t, e)
			require.Error(t, err)
			if c.Want != nil {
				require.ErrorIs(t, err, c.Want)
			}
			if c.Want != context.Canceled {
				requireNamesBackend(t, dev.Backend(), err, c.Name)
			}
			// The device is still usable.
			require.NoError(t, good.Launch(ctx, e.Args))
			if in.Check != nil {
				in.Check(t, dev, good)
			}
		})
	}
}

func sharedBadCases(t *testing.T, e *BadEnv) []BadCase {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	prog := e.in.Program(t)
	firstOf := func(buffer bool) int {
		for i, p := range prog.Params {
			if p.Kind.IsBuffer() == buffer {
				return i
			}
		}
		return -1
	}
	withArg := func(i int, a driver.LaunchArg) []driver.LaunchArg {
		args := append([]driver.LaunchArg(nil), e.Args...)
		args[i] = a
		return args
	}
	launch := func(args []driver.LaunchArg) error { return e.Good.Launch(context.Background(), args) }

	cases := []BadCase{
		{"nil program", nil, func(t testing.TB, e *BadEnv) error { return e.Compile(nil) }},
		{"invalid program", backends.ErrInvalidArgument, func(t testing.TB, e *BadEnv) error {
			p := e.Program(t)
			p.Params = append(p.Params, driver.Param{Name: "bad", Kind: driver.Variable, DType: driver.DType(250)})
			return e.Compile(p)
		}},
		{"compile with a cancelled context", context.Canceled, func(t testing.TB, e *BadEnv) error {
			exe, err := e.Dev.Compile(cancelled, e.Program(t))
			if exe != nil {
				_ = exe.Release()
			}
			return err
		}},
		{"fewer args than params", backends.ErrInvalidArgument, func(testing.TB, *BadEnv) error {
			return launch(e.Args[:len(e.Args)-1])
		}},
		{"more args than params", backends.ErrInvalidArgument, func(testing.TB, *BadEnv) error {
			return launch(append(append([]driver.LaunchArg(nil), e.Args...), driver.VarArg(driver.UintConst(driver.U32, 1))))
		}},
		{"launch with a cancelled context", context.Canceled, func(testing.TB, *BadEnv) error {
			return e.Good.Launch(cancelled, e.Args)
		}},
	}
	if e.in.BuildsCode {
		cases = append(cases, BadCase{"no variant the device accepts", driver.ErrNoVariant, func(t testing.TB, e *BadEnv) error {
			p := e.Program(t)
			for _, f := range e.Dev.Info().Formats {
				p.RemoveVariant(f)
			}
			return e.Compile(p)
		}})
		if entry := variantEntry(prog, e.Dev.Info().Formats); entry != nil {
			cases = append(cases, BadCase{"missing entry", driver.ErrCompile, func(t testing.TB, e *BadEnv) error {
				p := e.Program(t)
				*variantEntry(p, e.Dev.Info().Formats) = "no_such_entry"
				return e.Compile(p)
			}})
		}
	}
	if b := firstOf(true); b >= 0 {
		cases = append(cases,
			BadCase{"scalar where a buffer belongs", backends.ErrInvalidArgument, func(testing.TB, *BadEnv) error {
				return launch(withArg(b, driver.VarArg(driver.UintConst(driver.U32, 1))))
			}},
			BadCase{"freed buffer", driver.ErrUnknownBuffer, func(t testing.TB, e *BadEnv) error {
				size, err := e.Dev.Pool().Size(e.Args[b].Buffer)
				require.NoError(t, err)
				id, err := e.Dev.Pool().Alloc(context.Background(), size)
				require.NoError(t, err)
				require.NoError(t, e.Dev.Pool().Release(id))
				return launch(withArg(b, driver.BufArg(id)))
			}},
			BadCase{"buffer of another pool", driver.ErrUnknownBuffer, func(t testing.TB, e *BadEnv) error {
				size, err := e.Dev.Pool().Size(e.Args[b].Buffer)
				require.NoError(t, err)
				other := foreignPool(t, e.Dev.Pool())
				id, err := other.Alloc(context.Background(), size)
				require.NoError(t, err)
				defer other.Release(id)
				return launch(withArg(b, driver.BufArg(id)))
			}},
		)
	}
	if v := firstOf(false); v >= 0 {
		wrong := driver.UintConst(driver.U32, 1)
		if prog.Params[v].DType == driver.U32 {
			wrong = driver.IntConst(driver.I64, 1)
		}
		cases = append(cases, BadCase{"scalar of the wrong dtype", backends.ErrInvalidArgument, func(testing.TB, *BadEnv) error {
			return launch(withArg(v, driver.VarArg(wrong)))
		}})
		if b := firstOf(true); b >= 0 {
			cases = append(cases, BadCase{"buffer where a scalar belongs", backends.ErrInvalidArgument, func(testing.TB, *BadEnv) error {
				return launch(withArg(v, e.Args[b]))
			}})
		}
	}
	if e.in.GridLimits {
		if lim := e.Dev.Info().MaxGlobalWorkDims; len(lim) > 0 && lim[0] < math.MaxUint64 {
			cases = append(cases, BadCase{"grid beyond the device", backends.ErrInvalidArgument, func(t testing.TB, e *BadEnv) error {
				p := e.Program(t)
				beyond := []driver.GwsDim{driver.ConstDim(lim[0] + 1)}
				p.Grid = beyond
				for i := range p.Variants {
					p.Variants[i].Grid = beyond
				}
				return e.LaunchWith(t, p, e.Args)
			}})
		}
	}
	return cases
}

// variantEntry is the entry field of the variant p's device would compile
// (the first in a format of formats), or nil where that code names no
// entry (GEMM).
func variantEntry(p *driver.Program, formats []driver.Format) *string {
	v := p.Variant(formats...)
	if v == nil {
		return nil
	}
	switch c := v.Code.(type) {
	case *driver.SourceVariant:
		return &c.Entry
	case *driver.SPIRVVariant:
		return &c.Entry
	}
	return nil
}

// foreignPool is a pool that is not p: the host pool, or, when p is a
// host pool, a dummy device's pool of the test's own.
func foreignPool(t testing.TB, p *backends.Pool) *backends.Pool {
	t.Helper()
	if _, isHost := p.Driver().(*hostpool.Pool); !isHost {
		host, err := backends.HostPool()
		require.NoError(t, err)
		return host
	}
	d, err := dummy.New(dummy.Config{Memory: 1 << 30})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return backends.DeviceOf(d).Pool()
}
