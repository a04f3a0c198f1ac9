// Package tt is the Tenstorrent backend: it finds cards in sysfs, knows
// their boards (chips, DRAM), and drives one zyx-tt-runtime process per chip
// (or the emulator when no card is present) as a pool and a device per chip
// running three-section programs.
package tt

import "fmt"

// PCI ids of Tenstorrent chips.
const (
	VendorTenstorrent = 0x1e52
	DeviceGrayskull   = 0xfaca
	DeviceWormhole    = 0x401e
	DeviceBlackhole   = 0xb140
)

// The architectures, spelt as the runtime reports them.
const (
	ArchGrayskull = "grayskull"
	ArchWormhole  = "wormhole_b0"
	ArchBlackhole = "blackhole"
)

// ArchOf names the architecture of a PCI device id, or "".
func ArchOf(deviceID uint16) string {
	switch deviceID {
	case DeviceGrayskull:
		return ArchGrayskull
	case DeviceWormhole:
		return ArchWormhole
	case DeviceBlackhole:
		return ArchBlackhole
	}
	return ""
}

const gib = int64(1) << 30

// Board is what is known about one board model.
type Board struct {
	Name string // as tt-kmd's tt_card_type spells it
	Arch string
	// Chips on the board. An n300 shows one PCI function (its second chip
	// is reached through the first); a p300 shows one per chip.
	Chips int
	// DRAMPerChip is each chip's device memory in bytes.
	DRAMPerChip int64
	// Subsystem is the PCI subsystem device id of the board.
	Subsystem uint16
}

// DRAM is the board's total device memory.
func (b Board) DRAM() int64 { return int64(b.Chips) * b.DRAMPerChip }

// boards lists the supported boards. The names are tt-kmd's tt_card_type
// values. The subsystem ids are the board codes (UPI) that tt-kmd, tt-umd,
// luwen and tt-smi all decode from the telemetry board id (n300 0x14, n150
// 0x18, p100 0x36, p150a-c 0x40-0x42, p100a 0x43, p300b/a/c 0x44-0x46). The
// tools treat the PCI subsystem device id as that same code on both arches:
// pyluwen's pci_board_type() returns the subsystem id, luwen picks a
// Wormhole's SPI mode by "subsystem id, else telemetry UPI, == 0x35", and
// tt-kmd and tt-smi know the galaxy boards by subsystem ids 0x0035 and 0x0047,
// which are their board codes. No public lspci dump of an n150 or n300 was
// found, so tt_card_type, where tt-kmd exposes it, is still preferred.
var boards = []Board{
	{"n150", ArchWormhole, 1, 12 * gib, 0x0018},
	{"n300", ArchWormhole, 2, 12 * gib, 0x0014},
	{"p100", ArchBlackhole, 1, 28 * gib, 0x0036},
	{"p100a", ArchBlackhole, 1, 28 * gib, 0x0043},
	{"p150a", ArchBlackhole, 1, 32 * gib, 0x0040},
	{"p150b", ArchBlackhole, 1, 32 * gib, 0x0041},
	{"p150c", ArchBlackhole, 1, 32 * gib, 0x0042},
	{"p300b", ArchBlackhole, 2, 32 * gib, 0x0044},
	{"p300a", ArchBlackhole, 2, 32 * gib, 0x0045},
	{"p300c", ArchBlackhole, 2, 32 * gib, 0x0046},
}

// BoardByName finds a board by its tt_card_type name.
func BoardByName(name string) (Board, bool) {
	for _, b := range boards {
		if b.Name == name {
			return b, true
		}
	}
	return Board{}, false
}

// BoardBySubsystem finds a board of arch by its PCI subsystem device id.
func BoardBySubsystem(arch string, id uint16) (Board, bool) {
	for _, b := range boards {
		if b.Subsystem == id && b.Arch == arch {
			return b, true
		}
	}
	return Board{}, false
}

// Boards lists the known boards.
func Boards() []Board { return append([]Board(nil), boards...) }

// FormatBytes writes n as GiB or MiB.
func FormatBytes(n int64) string {
	switch {
	case n >= gib && n%gib == 0:
		return fmt.Sprintf("%d GiB", n/gib)
	case n >= gib:
		return fmt.Sprintf("%.1f GiB", float64(n)/float64(gib))
	default:
		return fmt.Sprintf("%d MiB", n>>20)
	}
}
