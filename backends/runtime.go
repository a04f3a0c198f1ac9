package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/internal/config"
	"github.com/zyxtt/zyxtt/internal/registry"
	"github.com/zyxtt/zyxtt/internal/zlog"
)

// DefaultOpenTimeout bounds one backend's open when its driver sets no
// timeout of its own (driver.OpenTimeouter).
const DefaultOpenTimeout = 2 * time.Minute

// Options configure a Runtime. Zero fields take the defaults.
type Options struct {
	// Config is the backend config. Nil reads the config file at
	// ConfigPath; a file that cannot be used gives the defaults, and
	// Runtime.ConfigErr says why.
	Config *Config
	// Backends limits the runtime to these registered backends; nil means
	// every registered backend.
	Backends []string
	// HostPool is the host pool the runtime's devices compute on and stage
	// copies through. Nil makes a pool of the runtime's own, which Close
	// closes.
	HostPool *hostpool.Pool
	// Logger receives the runtime's and its drivers' logs; nil uses the
	// logger set with SetLogger (slog.Default() unless set).
	Logger *slog.Logger
	// OpenTimeout bounds one backend's open when its driver sets no timeout
	// of its own (default DefaultOpenTimeout).
	OpenTimeout time.Duration
	// KernelOutput receives what kernels print (Tenstorrent DPRINT), one
	// line at a time, tagged with the core and processor; nil discards it.
	KernelOutput io.Writer
	// KernelDebug, when set, starts the devices that can host a debugger
	// in kernels (the Tenstorrent emulator) for one: kernels built at -O0
	// with debug info, no call deadlines, and a first run that waits for
	// the debugger. It is called with each such device's name and the pid
	// of the process to attach to.
	KernelDebug func(device string, pid int)
	// EmuEnv adds NAME=VALUE settings to the environment of the emulator's
	// runtimes (e.g. ZYX_EMU_WATCHER for `zyx-tt run --strict-noc`); later
	// ones win over the process's own.
	EmuEnv []string
}

// Runtime owns the backends it opened, their devices, the config and the
// host pool. Backends open lazily, once each, on first use; an open is never
// bound to the first caller's context, and one that timed out is tried again
// by the next caller. Every method is safe for concurrent use. After Close,
// every method fails with ErrClosed.
type Runtime struct {
	cfg         *Config
	cfgErr      error
	cfgProblems []error
	names       []string // the backends this runtime may open, sorted
	lookup      func(name string) (any, error)
	host        *hostpool.Pool
	ownHost     bool
	env         registry.Env
	openTimeout time.Duration
	staging     stagingCache
	selectCfg   SelectConfig

	mu       sync.Mutex
	closed   bool
	backends map[string]*backendState
}

// backendState is one backend in one runtime: opened, opening or not yet.
type backendState struct {
	name   string
	driver any

	mu       sync.Mutex
	opened   bool
	devs     []*Device
	err      error
	inFlight *openAttempt
}

// openAttempt is one open in progress; waiters read its result once done
// is closed.
type openAttempt struct {
	done chan struct{}
	devs []*Device
	err  error
}

// Open makes a Runtime. It opens no backend yet: each opens on first use.
func Open(ctx context.Context, opts Options) (*Runtime, error) {
	return openRuntime(ctx, opts, registry.Lookup, registry.Names())
}

func openRuntime(_ context.Context, opts Options, lookup func(string) (any, error), registered []string) (*Runtime, error) {
	r := &Runtime{lookup: lookup, openTimeout: opts.OpenTimeout, backends: map[string]*backendState{}}
	if r.openTimeout <= 0 {
		r.openTimeout = DefaultOpenTimeout
	}
	r.names = slices.Clone(registered)
	if opts.Backends != nil {
		r.names = nil
		for _, n := range opts.Backends {
			if _, err := lookup(n); err != nil {
				return nil, err
			}
			if !slices.Contains(r.names, n) {
				r.names = append(r.names, n)
			}
		}
	}
	slices.Sort(r.names)
	r.cfg = opts.Config
	if r.cfg == nil {
		r.cfg, r.cfgErr = config.Load(config.Path())
		if r.cfgErr != nil {
			zlog.Debug(zlog.Device, "config not used; using defaults", "err", r.cfgErr)
		}
	}
	r.host = opts.HostPool
	if r.host == nil {
		hp, err := hostpool.New(hostpool.Config{})
		if err != nil {
			return nil, fmt.Errorf("backends: host pool: %w", err)
		}
		r.host, r.ownHost = hp, true
	}
	// Every section is checked now, not when its backend opens, so that
	// every command reports every fault. The sections of drivers that
	// registered no section type are known too.
	known := make([]string, 0, len(registered))
	for _, n := range registered {
		known = append(known, r.sectionOf(n))
	}
	r.cfgProblems = r.cfg.Check(known...)
	for _, e := range r.cfgProblems {
		zlog.Debug(zlog.Device, "config problem", "err", e)
	}
	// A bad select section keeps the defaults; Check listed its faults.
	_ = r.cfg.Section(SelectSection, &r.selectCfg)
	logger := opts.Logger
	if logger == nil {
		logger = zlog.Logger()
	}
	r.env = registry.Env{Config: r.cfg, HostPool: r.host, Logger: logger, KernelOutput: opts.KernelOutput, KernelDebug: opts.KernelDebug, EmuEnv: opts.EmuEnv}
	return r, nil
}

// SelectSection is the config section of device selection (SelectConfig).
const SelectSection = "select"

func init() { config.RegisterSection(SelectSection, SelectConfig{}) }

// SelectConfig is the "select" section of the config file.
type SelectConfig struct {
	// BudgetS bounds how long "fastest" measures, in seconds (0: the
	// default, 30).
	BudgetS float64 `json:"budget_s" min:"0" max:"86400" unit:"seconds"`
	// Record is the performance record's path ("off" keeps none; default
	// DefaultPerfRecord).
	Record string `json:"record"`
}

// selectDefaults are the options the config gives every selection.
func (r *Runtime) selectDefaults() []SelectOption {
	var out []SelectOption
	if r.selectCfg.BudgetS > 0 {
		out = append(out, WithBudget(time.Duration(r.selectCfg.BudgetS*float64(time.Second))))
	}
	switch r.selectCfg.Record {
	case "":
	case "off":
		out = append(out, WithRecord(nil))
	default:
		out = append(out, WithRecord(&PerfRecord{Path: r.selectCfg.Record}))
	}
	return out
}

// Config is the config the runtime's backends open with.
func (r *Runtime) Config() *Config { return r.cfg }

// ConfigErr is why the config file was not used (it could not be read, is
// not JSON, has a key twice or a bad device_ids), or nil. The runtime then
// runs on the defaults.
func (r *Runtime) ConfigErr() error { return r.cfgErr }

// ConfigProblems lists what is wrong with the config besides ConfigErr,
// one fault a line, in file order: sections no registered backend reads,
// and every key of every section that is unknown, of the wrong type or out
// of range (each the text of a ConfigError). A backend whose section has a
// fault has no devices and gives the fault as its reason; a bad select
// section leaves selection on its defaults.
func (r *Runtime) ConfigProblems() []string {
	out := make([]string, 0, len(r.cfgProblems))
	for _, e := range r.cfgProblems {
		out = append(out, e.Error())
	}
	return out
}

// sectionOf is the config section backend name reads.
func (r *Runtime) sectionOf(name string) string {
	d, err := r.lookup(name)
	if err != nil {
		return name
	}
	if s, ok := d.(interface{ ConfigSection() string }); ok {
		return s.ConfigSection()
	}
	return name
}

// HostPool is the runtime's host pool: the memory the C and CBLAS devices
// compute on and that stages every copy between pools.
func (r *Runtime) HostPool() (*Pool, error) {
	if err := r.checkOpen(); err != nil {
		return nil, err
	}
	return PoolOf(r.host), nil
}

// Registered lists the backends this runtime may open, sorted.
func (r *Runtime) Registered() []string { return slices.Clone(r.names) }

func (r *Runtime) checkOpen() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("backends: runtime: %w", ErrClosed)
	}
	return nil
}

// state is the runtime's record of backend name.
func (r *Runtime) state(name string) (*backendState, error) {
	d, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(r.names, name) {
		return nil, fmt.Errorf("backend %q is not one of this runtime's (%s)", name, strings.Join(r.names, ", "))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("backends: %s: %w", name, ErrClosed)
	}
	st := r.backends[name]
	if st == nil {
		st = &backendState{name: name, driver: d}
		r.backends[name] = st
	}
	return st, nil
}

// open opens the backend once and returns its devices or the reason it has
// none. The open runs detached from ctx (ctx only bounds how long this
// caller waits), under the driver's own timeout; an open that timed out is
// not kept, so the next caller tries again.
func (r *Runtime) open(ctx context.Context, st *backendState) ([]*Device, error) {
	st.mu.Lock()
	if st.opened {
		st.mu.Unlock()
		return st.devs, st.err
	}
	a := st.inFlight
	if a == nil {
		a = &openAttempt{done: make(chan struct{})}
		st.inFlight = a
		go r.runOpen(context.WithoutCancel(ctx), st, a)
	}
	st.mu.Unlock()
	select {
	case <-a.done:
		return a.devs, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *Runtime) runOpen(ctx context.Context, st *backendState, a *openAttempt) {
	timeout := r.openTimeout
	if t, ok := st.driver.(driver.OpenTimeouter); ok && t.OpenTimeout() > 0 {
		timeout = t.OpenTimeout()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	devs, err := r.callDriver(ctx, st)
	timedOut := err != nil && ctx.Err() != nil
	if timedOut {
		err = fmt.Errorf("%s: open did not finish within %s: %w", st.name, timeout, err)
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		// The runtime closed while the backend was opening: its devices
		// must not outlive it.
		for _, d := range devs {
			_ = d.Close()
		}
		devs, err, timedOut = nil, fmt.Errorf("backends: %s: %w", st.name, ErrClosed), false
	}
	st.mu.Lock()
	a.devs, a.err = devs, err
	st.inFlight = nil
	if !timedOut {
		st.opened, st.devs, st.err = true, devs, err
	}
	st.mu.Unlock()
	close(a.done)
}

func (r *Runtime) callDriver(ctx context.Context, st *backendState) (devs []*Device, err error) {
	defer func() {
		if p := recover(); p != nil {
			devs, err = nil, fmt.Errorf("%s: backend panicked during init: %v", st.name, p)
		}
	}()
	d, ok := st.driver.(driver.Driver)
	if !ok {
		return nil, fmt.Errorf("%s: the registered driver does not implement driver.Driver", st.name)
	}
	env := r.env
	opened, err := d.Open(ctx, &env)
	if err == nil && len(opened) == 0 {
		err = fmt.Errorf("%w: the backend found no devices", ErrNoDevice)
	}
	if err != nil {
		for _, dv := range opened {
			_ = dv.Close()
		}
		opened = nil
		zlog.Debug(zlog.Device, "backend has no devices", "backend", st.name, "reason", err)
	}
	for _, dv := range opened {
		zlog.Debug(zlog.Device, "device", "backend", st.name, "name", dv.Name(), "info", dv.Info().Name)
		devs = append(devs, DeviceOf(dv))
	}
	return devs, err
}

// BackendStatus is what one backend contributed: its devices, or the reason
// it has none.
type BackendStatus struct {
	Name    string
	Devices []*Device
	Err     error
}

// Backend opens (once) and reports one backend. The error is for a name
// that is not a backend of this runtime, a closed runtime, or ctx ending
// before the open did; the backend's own failure is the status's Err.
func (r *Runtime) Backend(ctx context.Context, name string) (BackendStatus, error) {
	st, err := r.state(name)
	if err != nil {
		return BackendStatus{}, err
	}
	devs, oerr := r.open(ctx, st)
	if ctx.Err() != nil && errors.Is(oerr, ctx.Err()) {
		return BackendStatus{}, oerr
	}
	return BackendStatus{Name: name, Devices: devs, Err: oerr}, nil
}

// Status opens every backend of the runtime and reports each, sorted by
// name.
func (r *Runtime) Status(ctx context.Context) []BackendStatus {
	out := make([]BackendStatus, 0, len(r.names))
	for _, n := range r.names {
		st, err := r.Backend(ctx, n)
		if err != nil {
			st = BackendStatus{Name: n, Err: err}
		}
		out = append(out, st)
	}
	return out
}

// Devices opens every backend and lists every device.
func (r *Runtime) Devices(ctx context.Context) []*Device {
	var out []*Device
	for _, st := range r.Status(ctx) {
		out = append(out, st.Devices...)
	}
	return out
}

// PoolStatus is one pool and its free bytes.
type PoolStatus struct {
	Pool      *Pool
	FreeBytes int64
	Devices   []string
}

// Pools lists every pool with its free bytes. A pool shared by several
// devices (the host pool) appears once.
func (r *Runtime) Pools(ctx context.Context) []PoolStatus {
	var out []PoolStatus
	index := map[*Pool]int{}
	for _, d := range r.Devices(ctx) {
		p := d.Pool()
		if i, ok := index[p]; ok {
			out[i].Devices = append(out[i].Devices, d.Name())
			continue
		}
		index[p] = len(out)
		out = append(out, PoolStatus{Pool: p, FreeBytes: p.FreeBytes(), Devices: []string{d.Name()}})
	}
	return out
}

// Inventory lists the hardware backend name found, for drivers that can
// tell (driver.Inventory); nil for the others.
func (r *Runtime) Inventory(ctx context.Context, name string) ([]Hardware, error) {
	d, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	inv, ok := d.(driver.Inventory)
	if !ok {
		return nil, nil
	}
	return inv.Inventory(ctx), nil
}

// Lookup finds one device by selector: "backend" (its first device),
// "backend:N" (the device of that name, else its N-th), or a device's exact
// name or name prefix ("tt-emu", "tt-emu:0"). A selector that names a
// backend never picks an emulated device whose name the selector does not
// spell: "tt" and "tt:0" mean Tenstorrent hardware, "tt-emu:0" the emulator.
// Only the backends the selector can name are opened.
func (r *Runtime) Lookup(ctx context.Context, selector string) (*Device, error) {
	if err := r.checkOpen(); err != nil {
		return nil, err
	}
	backend, idx, hasIdx := splitSelector(selector)
	if _, unknown := r.lookup(backend); unknown == nil && slices.Contains(r.names, backend) {
		st, err := r.Backend(ctx, backend)
		if err != nil {
			return nil, err
		}
		if st.Err != nil {
			return nil, fmt.Errorf("%s: %w", selector, st.Err)
		}
		for _, d := range st.Devices {
			if d.Name() == selector {
				return d, nil
			}
		}
		var real []*Device
		for _, d := range st.Devices {
			if !d.Info().Emulated {
				real = append(real, d)
			}
		}
		switch {
		case !hasIdx && len(real) > 0:
			return real[0], nil
		case hasIdx && idx >= 0 && idx < len(real) && !hasIndexedNames(real, backend):
			return real[idx], nil
		}
		return nil, fmt.Errorf("%s: %w: %s", selector, ErrNoDevice, describeDevices(backend, st.Devices))
	}
	// A device name or prefix: open the backends whose drivers claim it,
	// else every backend.
	candidates := r.namers(selector)
	if len(candidates) == 0 {
		candidates = r.names
	}
	var seen []*Device
	var reasons []string
	for _, n := range candidates {
		st, err := r.Backend(ctx, n)
		if err != nil {
			return nil, err
		}
		if st.Err != nil {
			what := "device"
			if d, err := r.lookup(n); err == nil {
				if dn, ok := d.(driver.DeviceNamer); ok && dn.DeviceNamePrefixes()[prefixOf(selector)] != "" {
					what = dn.DeviceNamePrefixes()[prefixOf(selector)] + " device"
				}
			}
			reasons = append(reasons, fmt.Sprintf("the %s backend has no %s: %v", n, what, st.Err))
		}
		for _, d := range st.Devices {
			if d.Name() == selector || strings.HasPrefix(d.Name(), selector+":") {
				return d, nil
			}
			if strings.HasPrefix(d.Name(), backend+":") || d.Name() == backend {
				seen = append(seen, d)
			}
		}
	}
	if len(seen) > 0 {
		return nil, fmt.Errorf("%s: %w: this host has %s: %s", selector, ErrNoDevice, plural(len(seen), backend+" device"), deviceNames(seen))
	}
	if _, err := r.lookup(backend); err != nil && len(r.namers(selector)) == 0 {
		return nil, err
	}
	if len(reasons) > 0 {
		return nil, fmt.Errorf("%s: %w: %s", selector, ErrNoDevice, strings.Join(reasons, "; "))
	}
	return nil, fmt.Errorf("%s: %w", selector, ErrNoDevice)
}

func prefixOf(selector string) string {
	prefix, _, _ := strings.Cut(selector, ":")
	return prefix
}

// namers are the backends whose drivers name devices with selector's
// prefix.
func (r *Runtime) namers(selector string) []string {
	prefix := prefixOf(selector)
	var out []string
	for _, n := range r.names {
		d, err := r.lookup(n)
		if err != nil {
			continue
		}
		if dn, ok := d.(driver.DeviceNamer); ok {
			if _, named := dn.DeviceNamePrefixes()[prefix]; named {
				out = append(out, n)
			}
		}
	}
	return out
}

// hasIndexedNames reports whether the devices are named backend:N, so that
// an index means a name, not a position.
func hasIndexedNames(devs []*Device, backend string) bool {
	for _, d := range devs {
		if strings.HasPrefix(d.Name(), backend+":") {
			return true
		}
	}
	return false
}

func describeDevices(backend string, devs []*Device) string {
	var real, emu []*Device
	for _, d := range devs {
		if d.Info().Emulated {
			emu = append(emu, d)
		} else {
			real = append(real, d)
		}
	}
	msg := fmt.Sprintf("backend %s has %s", backend, plural(len(real), "device"))
	if len(real) > 0 {
		msg += ": " + deviceNames(real)
	}
	if len(emu) > 0 {
		msg += fmt.Sprintf("; emulated devices are named on their own (%s)", deviceNames(emu))
	}
	return msg
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func deviceNames(devs []*Device) string {
	n := make([]string, len(devs))
	for i, d := range devs {
		n[i] = d.Name()
	}
	return strings.Join(n, ", ")
}

func splitSelector(s string) (backend string, idx int, hasIdx bool) {
	b, n, ok := strings.Cut(s, ":")
	if !ok {
		return s, 0, false
	}
	i, err := strconv.Atoi(n)
	if err != nil {
		return b, -1, true
	}
	return b, i, true
}

// Close closes every device the runtime opened, a backend still opening as
// soon as its open ends, the staging buffers, and the host pool when the
// runtime made it. It is safe to call more than once; later calls of every
// method fail with ErrClosed.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	states := make([]*backendState, 0, len(r.backends))
	for _, st := range r.backends {
		states = append(states, st)
	}
	r.mu.Unlock()
	var errs []error
	for _, st := range states {
		st.mu.Lock()
		if st.opened {
			for _, d := range st.devs {
				errs = append(errs, d.Close())
			}
			st.devs, st.err = nil, fmt.Errorf("backends: %s: %w", st.name, ErrClosed)
		}
		st.mu.Unlock()
	}
	errs = append(errs, r.staging.release(r.host))
	if r.ownHost {
		errs = append(errs, r.host.Close())
	}
	return errors.Join(errs...)
}
