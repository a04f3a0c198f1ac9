package tt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// EnvSysfsRoot names the directory that stands for / when reading sysfs, so
// tests and probes can use fixture trees.
const EnvSysfsRoot = "ZYX_SYSFS_ROOT"

const pciDevicesDir = "sys/bus/pci/devices"

// Card is one Tenstorrent board found in sysfs, with what could be read
// about it and what could not.
type Card struct {
	// PCIAddresses are the board's PCI functions: one per PCIe-attached
	// chip (two on a p300), in address order.
	PCIAddresses []string
	DeviceID     uint16
	SubsystemID  uint16
	// HasDeviceID and HasSubsystemID say whether those ids were readable.
	HasDeviceID, HasSubsystemID bool
	Arch                        string // "" when the device id is unreadable or unknown
	// Board is the board name, "" when unknown.
	Board string
	Info  Board // valid when Board != ""
	// Chips is how many chips the board has; 1 for an unknown board (the
	// chip behind the PCI function).
	Chips int
	// CardType is tt-kmd's tt_card_type, when it was readable.
	CardType string
	Serial   string
	// Attrs are tt-kmd telemetry attributes (firmware versions, clocks)
	// by file name, as the driver printed them.
	Attrs map[string]string
	// TempC and PowerW come from hwmon; NaN-free: Has* says whether set.
	TempC, PowerW   float64
	HasTemp, HasPow bool
	Problems        []string
}

// PCIAddress is the first PCI function of the card.
func (c *Card) PCIAddress() string {
	if len(c.PCIAddresses) == 0 {
		return ""
	}
	return c.PCIAddresses[0]
}

// Supported reports whether zyx-tt can drive the card.
func (c *Card) Supported() bool {
	return c.Arch == ArchWormhole || c.Arch == ArchBlackhole
}

// DRAMPerChip is each chip's memory, 0 when the board is unknown.
func (c *Card) DRAMPerChip() int64 {
	if c.Board == "" {
		return 0
	}
	return c.Info.DRAMPerChip
}

// ArchName is a human name for the card's architecture.
func (c *Card) ArchName() string {
	switch c.Arch {
	case ArchWormhole:
		return "Wormhole"
	case ArchBlackhole:
		return "Blackhole"
	case ArchGrayskull:
		return "Grayskull"
	}
	return "unknown architecture"
}

// The tt-kmd telemetry attributes read, in display order.
var kmdAttrs = []string{
	"tt_serial", "tt_asic_id", "tt_fw_bundle_ver", "tt_arc_fw_ver", "tt_eth_fw_ver",
	"tt_m3bl_fw_ver", "tt_m3app_fw_ver", "tt_ttflash_ver", "tt_aiclk", "tt_axiclk", "tt_arcclk",
}

// SysfsRoot is the sysfs root from $ZYX_SYSFS_ROOT, default "/".
func SysfsRoot() string {
	if r := os.Getenv(EnvSysfsRoot); r != "" {
		return r
	}
	return "/"
}

// DiscoverCards scans SysfsRoot for Tenstorrent cards.
func DiscoverCards() ([]Card, error) {
	root := SysfsRoot()
	st, err := os.Stat(root)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("tt: sysfs root %s (%s) is not a directory", root, EnvSysfsRoot)
	}
	return Discover(os.DirFS(root)), nil
}

// Discover scans fsys, a tree rooted where / would be, for Tenstorrent
// cards. It never fails as a whole: whatever is unreadable or garbage
// becomes a problem of the card it belongs to.
func Discover(fsys fs.FS) []Card {
	ents, err := fs.ReadDir(fsys, pciDevicesDir)
	if err != nil {
		return nil // no PCI bus in this tree: no cards
	}
	var cards []Card
	for _, e := range ents {
		dir := path.Join(pciDevicesDir, e.Name())
		vendor, err := readHex16(fsys, path.Join(dir, "vendor"))
		if err != nil || vendor != VendorTenstorrent {
			continue // not ours, or not readable enough to say
		}
		cards = append(cards, readCard(fsys, dir, e.Name()))
	}
	cards = mergeMultiChip(cards)
	sort.Slice(cards, func(i, j int) bool { return cards[i].PCIAddress() < cards[j].PCIAddress() })
	return cards
}

func readCard(fsys fs.FS, dir, addr string) Card {
	c := Card{PCIAddresses: []string{addr}, Attrs: map[string]string{}, Chips: 1}
	problem := func(format string, args ...any) { c.Problems = append(c.Problems, fmt.Sprintf(format, args...)) }

	dev, err := readHex16(fsys, path.Join(dir, "device"))
	if err != nil {
		problem("device id: %v", err)
	} else {
		c.DeviceID, c.HasDeviceID = dev, true
		c.Arch = ArchOf(dev)
		switch c.Arch {
		case "":
			problem("unknown Tenstorrent device id 0x%04x", dev)
		case ArchGrayskull:
			problem("Grayskull is not supported by zyx-tt")
		}
	}
	sub, subErr := readHex16(fsys, path.Join(dir, "subsystem_device"))
	if subErr != nil {
		problem("subsystem id: %v", subErr)
	} else {
		c.SubsystemID, c.HasSubsystemID = sub, true
	}

	// tt-kmd's class device: <pci>/tenstorrent/tenstorrent!N/
	if kmd := kmdDir(fsys, dir); kmd != "" {
		for _, name := range append([]string{"tt_card_type"}, kmdAttrs...) {
			v, err := readAttr(fsys, path.Join(kmd, name))
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				problem("%s: %v", name, err)
			case name == "tt_card_type":
				c.CardType = v
			case name == "tt_serial":
				c.Serial = v
				c.Attrs[name] = v
			default:
				c.Attrs[name] = v
			}
		}
	}
	readHwmon(fsys, dir, &c, problem)

	// The board: tt_card_type when tt-kmd knows it, else the subsystem id.
	var byType, bySub Board
	okType, okSub := false, false
	if c.CardType != "" && c.CardType != "unknown" {
		byType, okType = BoardByName(c.CardType)
		if !okType && c.Supported() {
			problem("unknown card type %q", c.CardType)
		}
	}
	if subErr == nil && c.Arch != "" {
		bySub, okSub = BoardBySubsystem(c.Arch, c.SubsystemID)
	}
	switch {
	case okType:
		c.Board, c.Info = byType.Name, byType
		if okSub && bySub.Name != byType.Name {
			problem("tt_card_type says %s but subsystem id 0x%04x is %s; trusting tt_card_type", byType.Name, c.SubsystemID, bySub.Name)
		}
		if byType.Arch != c.Arch && c.Arch != "" {
			problem("card type %s is %s, but the PCI device id is %s", byType.Name, byType.Arch, c.Arch)
		}
	case okSub:
		c.Board, c.Info = bySub.Name, bySub
	case c.Supported():
		problem("unknown board (subsystem id 0x%04x): chip count assumed 1, DRAM size unknown", c.SubsystemID)
	}
	if c.Board != "" {
		c.Chips = c.Info.Chips
	}
	return c
}

func kmdDir(fsys fs.FS, dir string) string {
	ents, err := fs.ReadDir(fsys, path.Join(dir, "tenstorrent"))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tenstorrent") {
			return path.Join(dir, "tenstorrent", e.Name())
		}
	}
	return ""
}

// readHwmon reads temperature (millidegrees C) and power (microwatts) from
// the card's first hwmon device.
func readHwmon(fsys fs.FS, dir string, c *Card, problem func(string, ...any)) {
	ents, err := fs.ReadDir(fsys, path.Join(dir, "hwmon"))
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "hwmon") {
			continue
		}
		h := path.Join(dir, "hwmon", e.Name())
		if v, err := readInt(fsys, path.Join(h, "temp1_input")); err == nil {
			c.TempC, c.HasTemp = float64(v)/1000, true
		} else if !errors.Is(err, fs.ErrNotExist) {
			problem("temperature: %v", err)
		}
		if v, err := readInt(fsys, path.Join(h, "power1_input")); err == nil {
			c.PowerW, c.HasPow = float64(v)/1e6, true
		} else if !errors.Is(err, fs.ErrNotExist) {
			problem("power: %v", err)
		}
		return
	}
}

// mergeMultiChip joins the PCI functions of one multi-chip board (a p300
// shows one per chip) into one card, by board and serial.
func mergeMultiChip(cards []Card) []Card {
	var out []Card
	index := map[string]int{}
	for _, c := range cards {
		if c.Board == "" || c.Info.Chips < 2 || c.Serial == "" {
			out = append(out, c)
			continue
		}
		key := c.Board + "/" + c.Serial
		i, seen := index[key]
		if !seen || len(out[i].PCIAddresses) >= out[i].Info.Chips {
			index[key] = len(out)
			out = append(out, c)
			continue
		}
		m := &out[i]
		m.PCIAddresses = append(m.PCIAddresses, c.PCIAddresses...)
		sort.Strings(m.PCIAddresses)
		m.Problems = append(m.Problems, c.Problems...)
	}
	return out
}

const maxAttr = 4096

// readAttr reads a small text attribute: trimmed, printable, bounded.
func readAttr(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttr+1))
	if err != nil {
		return "", fmt.Errorf("unreadable: %w", err)
	}
	if len(b) > maxAttr {
		return "", fmt.Errorf("longer than %d bytes", maxAttr)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("empty")
	}
	for _, r := range s {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return "", fmt.Errorf("garbage %q", clip(s, 40))
		}
	}
	return s, nil
}

func readHex16(fsys fs.FS, name string) (uint16, error) {
	s, err := readAttr(fsys, name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 16)
	if err != nil {
		return 0, fmt.Errorf("garbage %q (want a 16-bit hex id)", clip(s, 40))
	}
	return uint16(v), nil
}

func readInt(fsys fs.FS, name string) (int64, error) {
	s, err := readAttr(fsys, name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("garbage %q (want an integer)", clip(s, 40))
	}
	return v, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
