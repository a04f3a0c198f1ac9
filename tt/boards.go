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
// values; the subsystem ids are the board codes tt-kmd and tt-umd decode
// from the board id (for Blackhole they are also the PCI subsystem ids).
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
