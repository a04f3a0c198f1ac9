package tt_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/tt"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func fixture(name string) string { return filepath.Join("testdata", "sysfs", name) }

func discover(t *testing.T, name string) []tt.Card {
	t.Helper()
	return tt.Discover(os.DirFS(fixture(name)))
}

func TestDiscoverFixtures(t *testing.T) {
	cases := []struct {
		fixture   string
		pci       []string
		arch      string
		board     string
		chips     int
		dram      int64 // per chip; 0 = unknown
		problems  []string
		supported bool
	}{
		{"n150", []string{"0000:01:00.0"}, tt.ArchWormhole, "n150", 1, 12 << 30, nil, true},
		{"n300", []string{"0000:02:00.0"}, tt.ArchWormhole, "n300", 2, 12 << 30, nil, true},
		{"p100a", []string{"0000:03:00.0"}, tt.ArchBlackhole, "p100a", 1, 28 << 30, nil, true},
		{"p150a", []string{"0000:04:00.0"}, tt.ArchBlackhole, "p150a", 1, 32 << 30, nil, true},
		{"p300c", []string{"0000:05:00.0", "0000:06:00.0"}, tt.ArchBlackhole, "p300c", 2, 32 << 30, nil, true},
		{"unknown", []string{"0000:07:00.0"}, tt.ArchWormhole, "", 1, 0, []string{"unknown board (subsystem id 0x0abc)"}, true},
		{"broken", []string{"0000:09:00.0"}, "", "n150", 1, 12 << 30, []string{"device id: garbage", "subsystem id: unreadable", "tt_arc_fw_ver: garbage", "temperature: garbage"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			cards := discover(t, tc.fixture)
			require.NotEmpty(t, cards)
			c := cards[0]
			require.Equal(t, tc.pci, c.PCIAddresses)
			require.Equal(t, tc.arch, c.Arch)
			require.Equal(t, tc.board, c.Board)
			require.Equal(t, tc.chips, c.Chips)
			require.Equal(t, tc.dram, c.DRAMPerChip())
			require.Equal(t, tc.supported, c.Supported())
			require.Len(t, c.Problems, len(tc.problems), "problems: %q", c.Problems)
			for i, p := range tc.problems {
				require.Contains(t, c.Problems[i], p)
			}
		})
	}
}

func TestDiscoverDetails(t *testing.T) {
	c := discover(t, "n150")
	require.Len(t, c, 1, "the Intel NIC in the tree is not a card")
	require.Equal(t, "0000046131000ABC", c[0].Serial)
	require.Equal(t, "80.17.0.0", c[0].Attrs["tt_fw_bundle_ver"])
	require.Equal(t, "6.15.0", c[0].Attrs["tt_eth_fw_ver"])
	require.Equal(t, "1000", c[0].Attrs["tt_aiclk"])
	require.True(t, c[0].HasTemp)
	require.InDelta(t, 45.25, c[0].TempC, 1e-9)
	require.InDelta(t, 18.0, c[0].PowerW, 1e-9)

	u := discover(t, "unknown")
	require.Len(t, u, 2)
	require.Equal(t, tt.ArchGrayskull, u[1].Arch)
	require.False(t, u[1].Supported())
	require.Contains(t, u[1].Problems[0], "Grayskull is not supported")

	require.Empty(t, discover(t, "none"))
	require.Empty(t, tt.Discover(fstest.MapFS{}), "a tree without a PCI bus has no cards")
}

func TestDiscoverCardsHonoursEnv(t *testing.T) {
	t.Setenv(tt.EnvSysfsRoot, fixture("n300"))
	cards, err := tt.DiscoverCards()
	require.NoError(t, err)
	require.Len(t, cards, 1)
	require.Equal(t, "n300", cards[0].Board)

	t.Setenv(tt.EnvSysfsRoot, filepath.Join(t.TempDir(), "missing"))
	_, err = tt.DiscoverCards()
	require.ErrorContains(t, err, tt.EnvSysfsRoot)
}

// The inventory of every fixture is kept as a golden file: what probe shows.
func TestInventoryGolden(t *testing.T) {
	for _, name := range []string{"n150", "n300", "p100a", "p150a", "p300c", "unknown", "broken", "none"} {
		t.Run(name, func(t *testing.T) {
			cards := discover(t, name)
			hw := make([]driver.Hardware, 0, len(cards))
			for i := range cards {
				hw = append(hw, tt.CardHardware(&cards[i]))
			}
			got, err := json.MarshalIndent(hw, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./tt -run Golden -update to create it")
			require.Equal(t, string(want), string(got))
		})
	}
	// The facts probe must show.
	cards := discover(t, "n300")
	h := tt.CardHardware(&cards[0])
	facts := map[string]string{}
	for _, f := range h.Facts {
		facts[f.Key] = f.Value
	}
	require.Equal(t, "n300", facts["board"])
	require.Equal(t, "2", facts["chips"])
	require.Equal(t, "2 × 12 GiB", facts["dram"])
	require.Equal(t, "0000:02:00.0", facts["pci"])
}

func FuzzSysfs(f *testing.F) {
	f.Add("0x401e", "0x0018", "n150", "45000", "0000046131000ABC")
	f.Add("0xb140", "0x0046", "p300c", "-1", "")
	f.Add("zz", "\xff", "\x00", "hot", "1")
	f.Add("0x401e\n\n", "0x14", "unknown", "99999999999999999999", strings.Repeat("x", 5000))
	f.Fuzz(func(t *testing.T, device, subsys, cardType, temp, serial string) {
		fsys := fstest.MapFS{}
		for _, addr := range []string{"0000:01:00.0", "0000:02:00.0"} {
			dir := "sys/bus/pci/devices/" + addr
			fsys[dir+"/vendor"] = &fstest.MapFile{Data: []byte("0x1e52\n")}
			fsys[dir+"/device"] = &fstest.MapFile{Data: []byte(device)}
			fsys[dir+"/subsystem_device"] = &fstest.MapFile{Data: []byte(subsys)}
			fsys[dir+"/tenstorrent/tenstorrent!0/tt_card_type"] = &fstest.MapFile{Data: []byte(cardType)}
			fsys[dir+"/tenstorrent/tenstorrent!0/tt_serial"] = &fstest.MapFile{Data: []byte(serial)}
			fsys[dir+"/hwmon/hwmon0/temp1_input"] = &fstest.MapFile{Data: []byte(temp)}
		}
		cards := tt.Discover(fsys)
		n := 0
		for i := range cards {
			c := &cards[i]
			n += len(c.PCIAddresses)
			require.GreaterOrEqual(t, c.Chips, 1)
			require.LessOrEqual(t, len(c.PCIAddresses), max(c.Chips, 1))
			if c.Board == "" {
				require.Zero(t, c.DRAMPerChip(), "an unknown board has no guessed DRAM")
			}
			if !c.Supported() {
				require.NotEmpty(t, c.Problems, "an unsupported card says why")
			}
			h := tt.CardHardware(c)
			require.NotEmpty(t, h.Facts)
		}
		require.Equal(t, 2, n, "every PCI function is reported exactly once")
		_ = bytes.MinRead
	})
}
