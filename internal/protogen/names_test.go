package protogen

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ json, goName, cpp string }{
		{"cache_dir", "CacheDir", "CacheDir"},
		{"source_b64", "SourceB64", "SourceB64"},
		{"fp32_dest_acc", "FP32DestAcc", "Fp32DestAcc"},
		{"cbs", "CBs", "Cbs"},
		{"elapsed_ns", "ElapsedNS", "ElapsedNs"},
		{"dram_banks", "DRAMBanks", "DramBanks"},
		{"riscv_0", "Riscv0", "Riscv0"},
		{"l1", "L1", "L1"},
		{"Float16_b", "Float16B", "Float16_b"},
		{"HiFi4", "HiFi4", "HiFi4"},
	} {
		require.Equal(t, tc.goName, goName(tc.json), tc.json)
		require.Equal(t, tc.cpp, cppEnumerator(tc.json), tc.json)
	}
	for in, want := range map[string]string{
		"CBIndex": "cb_index", "DRAM": "dram", "L1": "l1", "NOC": "noc", "ReplyHeader": "reply_header",
		"ArgEntry": "arg_entry", "CoreArgs": "core_args", "InitRequest": "init_request",
	} {
		require.Equal(t, want, snake(in), in)
	}
	require.Equal(t, "default_", cppIdent("default"))
	require.Equal(t, "value", cppIdent("value"))
}

func TestWrap(t *testing.T) {
	require.Equal(t, []string{"aa bb", "cc"}, wrap("aa bb cc", 5))
	require.Equal(t, []string{"averylongword", "b"}, wrap("averylongword b", 5))
	require.Nil(t, wrap("", 5))
}
