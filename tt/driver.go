package tt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// ConfigSection is the config file section this backend reads.
const ConfigSection = "tenstorrent"

// EnvEmulator set to 0 (or false, off, no) disables the emulator devices.
const EnvEmulator = "ZYX_TT_EMU"

// Settings are the backend's config keys (section "tenstorrent"), besides
// the device_ids every section has.
type Settings struct {
	// Runtime is the runtime executable; empty means look for it.
	Runtime string `json:"runtime"`
	// Emulator offers emulator devices when no card is found (default on).
	Emulator *bool `json:"emulator"`
	// EmuBoard is the board the emulator presents (default n150).
	EmuBoard string `json:"emu_board"`
	// CacheDir is where the runtime caches kernel builds (default
	// $XDG_CACHE_HOME/zyx/tt).
	CacheDir string `json:"cache_dir"`
	// TimeoutS bounds each runtime call in seconds (absent: 120).
	TimeoutS float64 `json:"timeout_s" min:"0.001" max:"86400" unit:"seconds"`
}

// defaultSettings are the settings of an absent key.
var defaultSettings = Settings{EmuBoard: "n150"}

// Validate checks what the key types do not: the emulator board is one
// this backend knows.
func (s *Settings) Validate() error {
	if slices.Contains(EmulatorBoards, s.EmuBoard) {
		return nil
	}
	names := EmulatorBoards
	msg := fmt.Sprintf("unknown board %q (boards: %s)", s.EmuBoard, strings.Join(names, ", "))
	if near := driver.Suggest(s.EmuBoard, names); near != "" {
		msg = fmt.Sprintf("unknown board %q; did you mean %q?", s.EmuBoard, near)
	}
	return &driver.ConfigKeyError{Key: "emu_board", Msg: msg}
}

func init() {
	driver.Register(ttruntime.Backend, &Driver{})
	driver.RegisterSection(ConfigSection, defaultSettings)
}

// Driver opens Tenstorrent devices: a device per chip of every supported
// card, or emulator devices when there is no card. Each device's runtime
// is started at Open (not lazily), because the device's info — its
// harvest-aware grid, DRAM and L1 — is what the runtime reports.
type Driver struct{}

// ConfigSection is "tenstorrent", the section the backend reads.
func (Driver) ConfigSection() string { return ConfigSection }

// DeviceNamePrefixes are the names of the backend's devices: tt:N for
// chips, tt-emu:N for the emulator.
func (Driver) DeviceNamePrefixes() map[string]string {
	return map[string]string{ttruntime.Backend: "Tenstorrent", "tt-emu": "emulator"}
}

// Open finds the cards and starts a runtime per chip.
func (Driver) Open(ctx context.Context, env *driver.Env) ([]driver.Device, error) {
	cfg := env.Config
	s := defaultSettings
	if err := cfg.Section(ConfigSection, &s); err != nil {
		return nil, err
	}
	allow := cfg.Common(ConfigSection)
	cards, scanErr := DiscoverCards()
	var chips []chipSpec
	var reasons []error
	for i := range cards {
		c := &cards[i]
		if !c.Supported() {
			reasons = append(reasons, fmt.Errorf("%s at %s: %s", c.ArchName(), c.PCIAddress(), strings.Join(c.Problems, "; ")))
			continue
		}
		for k := range c.Chips {
			pci := c.PCIAddress()
			if k < len(c.PCIAddresses) {
				pci = c.PCIAddresses[k]
			}
			chips = append(chips, chipSpec{card: c, onCard: k, pci: pci})
		}
	}
	host := env.HostPool
	if dir := host.Arena().Dir(); dir != shm.SystemDir {
		return nil, fmt.Errorf("%w: the host pool's shared memory is in %s, and the Tenstorrent runtime maps segments only under %s (unset %s)",
			driver.ErrNoDevice, dir, shm.SystemDir, shm.EnvDir)
	}
	rtCfg := func() ttruntime.Config {
		c := ttruntime.Config{CleanupTimeout: cleanupTimeout, KernelOutput: env.KernelOutput, Init: ttruntime.InitRequest{CacheDir: cacheDir(s.CacheDir)}}
		if s.TimeoutS > 0 {
			c.Timeout = time.Duration(s.TimeoutS * float64(time.Second))
		}
		return c
	}

	if len(chips) > 0 {
		path, err := ttruntime.FindRuntime(s.Runtime)
		if err != nil {
			return nil, fmt.Errorf("%d Tenstorrent chip(s) found but no runtime to drive them: %w", len(chips), err)
		}
		var devs []driver.Device
		for i, ch := range chips {
			if !allow.Allows(i) {
				continue
			}
			d, err := openCard(ctx, path, rtCfg(), i, ch, host)
			if err != nil {
				reasons = append(reasons, err)
				continue
			}
			devs = append(devs, d)
		}
		return driver.Opened(ttruntime.Backend, devs, reasons, noChipLeft)
	}

	// No card: the emulator, unless switched off.
	why := "no Tenstorrent card found"
	if len(cards) > 0 {
		why = fmt.Sprintf("no supported Tenstorrent card (%d unsupported: %v)", len(cards), errors.Join(reasons...))
	}
	if scanErr != nil {
		why = scanErr.Error()
	}
	if s.Emulator != nil && !*s.Emulator {
		return nil, fmt.Errorf("%w: %s, and the emulator is disabled (config tenstorrent.emulator)", driver.ErrNoDevice, why)
	}
	if off(os.Getenv(EnvEmulator)) {
		return nil, fmt.Errorf("%w: %s, and the emulator is disabled (%s=%s)", driver.ErrNoDevice, why, EnvEmulator, os.Getenv(EnvEmulator))
	}
	board, ok := BoardByName(s.EmuBoard)
	if !ok {
		return nil, fmt.Errorf("%w: %s; emulator board %q (config tenstorrent.emu_board) is not one of %s", driver.ErrNoDevice, why, s.EmuBoard, boardNames())
	}
	path, err := ttruntime.FindRuntime(s.Runtime)
	if err != nil {
		return nil, fmt.Errorf("%w: %s, and the emulator needs the runtime: %w", driver.ErrNoDevice, why, err)
	}
	var devs []driver.Device
	for k := range board.Chips {
		if !allow.Allows(k) {
			continue
		}
		c := rtCfg()
		c.Path = path
		c.Init.Layer, c.Init.Chip, c.Init.Board = "emu", k, board.Name
		if env.KernelDebug != nil {
			debugConfig(&c)
		}
		if len(env.EmuEnv) > 0 {
			if c.Env == nil {
				c.Env = os.Environ()
			}
			c.Env = append(c.Env, env.EmuEnv...)
		}
		rt, err := ttruntime.Start(ctx, c)
		if err != nil {
			reasons = append(reasons, fmt.Errorf("tt-emu:%d: %w", k, err))
			continue
		}
		if env.KernelDebug != nil {
			env.KernelDebug(fmt.Sprintf("tt-emu:%d", k), rt.Pid())
		}
		devs = append(devs, newDevice(fmt.Sprintf("tt-emu:%d", k), true, rt, nil, host, nil))
	}
	return driver.Opened(ttruntime.Backend, devs, reasons, noChipLeft)
}

// debugDeadline stands for no deadline: a runtime stopped in a debugger
// answers nothing until the user continues it.
const debugDeadline = 30 * 24 * time.Hour

// debugConfig makes c an emulator runtime a debugger can stop: kernels
// built at -O0 with debug info, loaded where the debugger finds their
// symbols, a first run that waits for the debugger (ZYX_EMU_DEBUG), and no
// call deadline that would kill the runtime while it is stopped.
func debugConfig(c *ttruntime.Config) {
	c.Timeout, c.CleanupTimeout = debugDeadline, debugDeadline
	c.Env = append(os.Environ(), EnvEmuDebug+"=1")
}

// EnvEmuDebug is the emulator runtime's debug switch (docs/emulator.md).
const EnvEmuDebug = "ZYX_EMU_DEBUG"

type chipSpec struct {
	card   *Card
	onCard int
	pci    string
}

// openCard claims a chip and starts its runtime on the metal layer. The
// runtime's chip is the device ordinal across all cards, in PCI order. The
// runtime gets the chip lock's descriptor (--lock-fd), so that a runtime
// this process leaves behind still keeps another run off the chip.
func openCard(ctx context.Context, path string, c ttruntime.Config, ordinal int, ch chipSpec, host *hostpool.Pool) (*Device, error) {
	name := "tt:" + strconv.Itoa(ordinal)
	lock, err := ttruntime.LockChip(ch.card.PCIAddress(), ch.onCard)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.Path = path
	c.Init.Layer, c.Init.Chip, c.Init.Board = "metal", ordinal, ch.card.Board
	// The runtime inherits the lock and holds the chip while it lives,
	// also past this process.
	c.LockFile = lock.File()
	rt, err := ttruntime.Start(ctx, c)
	if err != nil {
		_ = lock.Unlock()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lock.NoteRuntime(rt.Pid())
	if rt.Info().Runtime != "metal" {
		rt.Kill()
		_ = lock.Unlock()
		return nil, fmt.Errorf("%s: %w: the runtime drives %q, not the card (built without tt-metal?)", name, driver.ErrNoDevice, rt.Info().Runtime)
	}
	return newDevice(name, false, rt, lock, host, ch.card), nil
}

// noChipLeft is why there is no chip when no chip failed.
const noChipLeft = "device_ids in config section " + ConfigSection + " leaves no chip"

func off(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return true
	}
	return false
}

// EmulatorBoards are the boards the emulator presents (config
// tenstorrent.emu_board): the runtime's emulator presets.
var EmulatorBoards = []string{"n150", "n300", "p100a", "p150a", "p300c"}

func boardNames() string { return strings.Join(EmulatorBoards, ", ") }

func cacheDir(configured string) string {
	if configured != "" {
		return configured
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "zyx", "tt")
	}
	return ""
}

// Inventory lists every Tenstorrent card in sysfs, supported or not, with
// its board, chips, DRAM, firmware, clocks and sensors, whether or not a
// runtime can drive it.
func (Driver) Inventory(ctx context.Context) []driver.Hardware {
	cards, err := DiscoverCards()
	if err != nil {
		return []driver.Hardware{{Name: "Tenstorrent", Problems: []string{err.Error()}}}
	}
	out := make([]driver.Hardware, 0, len(cards))
	for i := range cards {
		out = append(out, CardHardware(&cards[i]))
	}
	return out
}

// CardHardware describes a card for probe.
func CardHardware(c *Card) driver.Hardware {
	board := c.Board
	if board == "" {
		board = "unknown"
	}
	h := driver.Hardware{Name: fmt.Sprintf("Tenstorrent %s %s", c.ArchName(), board)}
	add := func(k, v string) { h.Facts = append(h.Facts, driver.Fact{Key: k, Value: v}) }
	add("pci", strings.Join(c.PCIAddresses, ", "))
	add("arch", c.ArchName())
	add("board", board)
	add("chips", strconv.Itoa(c.Chips))
	if per := c.DRAMPerChip(); per > 0 {
		if c.Chips > 1 {
			add("dram", fmt.Sprintf("%d × %s", c.Chips, FormatBytes(per)))
		} else {
			add("dram", FormatBytes(per))
		}
	} else {
		add("dram", "unknown")
	}
	dev, sub := "?", "?"
	if c.HasDeviceID {
		dev = fmt.Sprintf("%04x", c.DeviceID)
	}
	if c.HasSubsystemID {
		sub = fmt.Sprintf("%04x", c.SubsystemID)
	}
	add("pci ids", fmt.Sprintf("%04x:%s subsystem %s", VendorTenstorrent, dev, sub))
	for _, name := range kmdAttrs {
		if v, ok := c.Attrs[name]; ok {
			key := strings.TrimPrefix(name, "tt_")
			if strings.HasSuffix(name, "clk") {
				v += " MHz"
			}
			add(key, v)
		}
	}
	if c.HasTemp {
		add("temperature", fmt.Sprintf("%.1f °C", c.TempC))
	}
	if c.HasPow {
		add("power", fmt.Sprintf("%.1f W", c.PowerW))
	}
	h.Problems = append(h.Problems, c.Problems...)
	return h
}

var _ driver.Inventory = Driver{}
