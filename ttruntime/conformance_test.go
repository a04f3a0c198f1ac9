package ttruntime_test

// Conformance of the C++ runtime (bin/zyx-tt-runtime, emu layer) with the Go
// driver and docs/protocol.md. `make test` builds the binary first; when it
// is missing these tests fail, they do not skip. ZYX_TT_RUNTIME names
// another binary.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// runtimeBinary is the C++ runtime under test: $ZYX_TT_RUNTIME, else the
// repository's bin/zyx-tt-runtime (go test runs in ttruntime/).
func runtimeBinary(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("ZYX_TT_RUNTIME")
	source := "ZYX_TT_RUNTIME"
	if p == "" {
		abs, err := filepath.Abs(filepath.Join("..", "bin", ttruntime.RuntimeName))
		require.NoError(tb, err)
		p, source = abs, "the repository's bin/"
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		tb.Fatalf("the C++ runtime is missing (%s: %s: %v): build it with `make runtime`", source, p, err)
	}
	return p
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// emuConfig starts the C++ runtime on the emulator's board preset.
func emuConfig(tb testing.TB, board string, chip int) ttruntime.Config {
	return ttruntime.Config{
		Path:             runtimeBinary(tb),
		Timeout:          60 * time.Second,
		HandshakeTimeout: 30 * time.Second,
		ShutdownTimeout:  5 * time.Second,
		Logger:           discardLogger(),
		Init:             ttruntime.InitRequest{Layer: "emu", Board: board, Chip: chip, CacheDir: tb.TempDir()},
	}
}

func startEmu(tb testing.TB) *ttruntime.Client {
	tb.Helper()
	c, err := ttruntime.Start(context.Background(), emuConfig(tb, "n150", 0))
	require.NoError(tb, err, "starting the C++ runtime in emu mode")
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// requireCode checks that err is an error reply with the given code.
func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err, "want a %s reply", code)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re, "want a %s reply, got %v", code, err)
	require.Equal(t, code, re.Code, "message: %s", re.Message)
	require.NotErrorIs(t, err, backends.ErrDeviceLost, "an error reply must not cost the runtime")
}

func newSegment(t *testing.T, size int64) *shm.Segment {
	t.Helper()
	seg, err := shm.Create(shm.NewName(), size)
	require.NoError(t, err)
	t.Cleanup(func() { _ = seg.Close() })
	return seg
}

func TestRuntimeHandshake(t *testing.T) {
	for _, tc := range []struct {
		board string
		chip  int
		arch  string
	}{
		{"n150", 0, "wormhole_b0"},
		{"n300", 1, "wormhole_b0"},
		{"p150a", 0, "blackhole"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.board, tc.chip), func(t *testing.T) {
			c, err := ttruntime.Start(context.Background(), emuConfig(t, tc.board, tc.chip))
			require.NoError(t, err)
			info := c.Info()
			require.Equal(t, ttruntime.ProtocolVersion, info.Protocol)
			require.Equal(t, "emu", info.Runtime)
			require.Equal(t, tc.arch, info.Arch)
			require.Equal(t, tc.board, info.Board)
			require.Equal(t, tc.chip, info.Chip)
			require.NotEmpty(t, info.Version)
			require.NotZero(t, info.Grid.Rows)
			require.NotZero(t, info.Grid.Cols)
			require.NotZero(t, info.DRAM.Total())
			require.NotZero(t, info.L1.Usable())
			require.NoError(t, c.Ping(context.Background()))
			require.NoError(t, c.Close())
			require.False(t, c.Alive())
		})
	}
}

func TestRuntimeInitFailures(t *testing.T) {
	// A build without tt-metal (or a machine without a card) cannot do metal.
	cfg := emuConfig(t, "n150", 0)
	cfg.Init.Layer = "metal"
	_, err := ttruntime.Start(context.Background(), cfg)
	require.ErrorIs(t, err, backends.ErrUnsupported)

	cfg = emuConfig(t, "n999", 0)
	_, err = ttruntime.Start(context.Background(), cfg)
	require.Error(t, err)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re, "an unknown board is an error reply, not a crash: %v", err)

	cfg = emuConfig(t, "n150", 5)
	_, err = ttruntime.Start(context.Background(), cfg)
	require.ErrorAs(t, err, &re, "chip 5 of an n150: %v", err)
}

func TestRuntimeRoundTrips(t *testing.T) {
	c := startEmu(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 4))
	seg := newSegment(t, 4<<20)
	mem := seg.Bytes()

	for _, tc := range []struct{ size, page uint64 }{
		{1, 2048}, {7, 32}, {2049, 2048}, {100003, 1024}, {1<<20 + 13, 4096}, {3 * 2048 * 12, 2048},
	} {
		a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: tc.size, PageSize: tc.page})
		require.NoError(t, err)
		// The model is what the buffer must hold: a full write, then random
		// partial writes at odd offsets and lengths from odd segment offsets.
		model := make([]byte, tc.size)
		fill := func(b []byte) {
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
		}
		fill(mem[:tc.size])
		copy(model, mem[:tc.size])
		require.NoError(t, c.Write(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), Length: tc.size}))
		for range 20 {
			off := rng.Uint64N(tc.size)
			n := 1 + rng.Uint64N(tc.size-off)
			segOff := 1 + rng.Uint64N(uint64(len(mem))-n-1)
			fill(mem[segOff : segOff+n])
			copy(model[off:], mem[segOff:segOff+n])
			require.NoError(t, c.Write(ctx, ttruntime.TransferRequest{
				Buffer: a.Buffer, Offset: off, Segment: seg.Name(), SegmentOffset: segOff, Length: n}))
			// Read an odd window back somewhere else and compare at once.
			roff := rng.Uint64N(tc.size)
			rn := 1 + rng.Uint64N(tc.size-roff)
			dst := uint64(len(mem)) - rn - rng.Uint64N(7)
			require.NoError(t, c.Read(ctx, ttruntime.TransferRequest{
				Buffer: a.Buffer, Offset: roff, Segment: seg.Name(), SegmentOffset: dst, Length: rn}))
			require.Equal(t, model[roff:roff+rn], mem[dst:dst+rn], "size %d page %d: window [%d,+%d)", tc.size, tc.page, roff, rn)
		}
		clear(mem[:tc.size])
		require.NoError(t, c.Read(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), Length: tc.size}))
		require.Equal(t, model, mem[:tc.size], "size %d page %d: whole buffer", tc.size, tc.page)
		require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: a.Buffer}))
	}
	// Explicit map and unmap; transfers map on first use as well.
	require.NoError(t, c.Map(ctx, ttruntime.SegmentRequest{Segment: seg.Name()}))
	require.NoError(t, c.Unmap(ctx, ttruntime.SegmentRequest{Segment: seg.Name()}))
	require.NoError(t, c.Close())
}

// Trivial kernels in tt-metal's two styles, for run-time checks.
const (
	emptyDataflow = "#include \"dataflow_api.h\"\nvoid kernel_main() {}\n"
	emptyCompute  = "#include \"compute_kernel_api.h\"\nnamespace NAMESPACE {\nvoid MAIN {}\n}\n"
)

func section(src string) ttruntime.Section {
	var s ttruntime.Section
	s.SetSource(src)
	return s
}

func emptyProgram() ttruntime.CompileRequest {
	return ttruntime.CompileRequest{
		Name: "empty",
		Params: []ttruntime.ParamDesc{
			{Name: "a", Kind: "global", DType: "f32"},
			{Name: "n", Kind: "variable", DType: "u32"},
		},
		Reader:        section(emptyDataflow),
		Compute:       section(emptyCompute),
		Writer:        section(emptyDataflow),
		CBs:           []ttruntime.CBDesc{{Index: 0, Format: "Float32", PageBytes: 4096, Pages: 2}},
		ComputeConfig: ttruntime.ComputeConfig{MathFidelity: "HiFi4"},
	}
}

func TestRuntimeErrors(t *testing.T) {
	c := startEmu(t)
	ctx := context.Background()
	info := c.Info()
	seg := newSegment(t, 1<<16)
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 4096})
	require.NoError(t, err)

	// Requests no typed call can send (unknown commands, fields of the wrong
	// type) go through the generic call.
	call := func(cmd string, req any) error { return c.RawCall(ctx, cmd, req, nil) }
	type m = map[string]any
	cases := []struct {
		name string
		cmd  string
		req  any
		code string
	}{
		{"unknown command", "frobnicate", nil, ttruntime.CodeUnknownCommand},
		{"alloc size 0", ttruntime.CmdAlloc, m{"size": 0}, ttruntime.CodeInvalidArgument},
		{"alloc page past 32 bits", ttruntime.CmdAlloc, m{"size": 64, "page_size": uint64(1) << 32}, ttruntime.CodeInvalidArgument},
		{"alloc past DRAM", ttruntime.CmdAlloc, m{"size": info.DRAM.Total() + 1}, ttruntime.CodeOutOfMemory},
		{"alloc size as string", ttruntime.CmdAlloc, m{"size": "4096"}, ttruntime.CodeBadRequest},
		{"alloc negative", ttruntime.CmdAlloc, m{"size": -1}, ttruntime.CodeBadRequest},
		{"alloc missing size", ttruntime.CmdAlloc, m{}, ttruntime.CodeBadRequest},
		{"free unknown", ttruntime.CmdFree, m{"buffer": a.Buffer + 1000}, ttruntime.CodeUnknownBuffer},
		{"free as float", ttruntime.CmdFree, m{"buffer": 1.5}, ttruntime.CodeBadRequest},
		{"write past buffer", ttruntime.CmdWrite, ttruntime.TransferRequest{Buffer: a.Buffer, Offset: 4000, Segment: seg.Name(), Length: 97}, ttruntime.CodeInvalidArgument},
		{"write offset overflow", ttruntime.CmdWrite, ttruntime.TransferRequest{Buffer: a.Buffer, Offset: ^uint64(0), Segment: seg.Name(), Length: 2}, ttruntime.CodeInvalidArgument},
		{"read past segment", ttruntime.CmdRead, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), SegmentOffset: 1<<16 - 10, Length: 11}, ttruntime.CodeShmError},
		{"segment escapes /dev/shm", ttruntime.CmdWrite, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: "../etc/passwd", Length: 1}, ttruntime.CodeShmError},
		{"segment missing", ttruntime.CmdWrite, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: "zyx-conformance-no-such-segment", Length: 1}, ttruntime.CodeShmError},
		{"map escapes", ttruntime.CmdMap, ttruntime.SegmentRequest{Segment: "../../etc/shadow"}, ttruntime.CodeShmError},
		{"map empty", ttruntime.CmdMap, ttruntime.SegmentRequest{Segment: ""}, ttruntime.CodeShmError},
		{"read unknown buffer", ttruntime.CmdRead, ttruntime.TransferRequest{Buffer: 999999, Segment: seg.Name(), Length: 1}, ttruntime.CodeUnknownBuffer},
		{"run unknown program", ttruntime.CmdRun, ttruntime.RunRequest{Program: 4242, Grid: [2]uint32{1, 1}}, ttruntime.CodeUnknownProgram},
		{"release unknown program", ttruntime.CmdRelease, ttruntime.ProgramRequest{Program: 4242}, ttruntime.CodeUnknownProgram},
		{"compile without sections", ttruntime.CmdCompile, m{"name": "x", "params": []any{}}, ttruntime.CodeBadRequest},
		{"second init", ttruntime.CmdInit, ttruntime.InitRequest{Protocol: 1, Layer: "emu", Board: "n150"}, ttruntime.CodeInvalidArgument},
		{"init of protocol 2", ttruntime.CmdInit, ttruntime.InitRequest{Protocol: 2, Layer: "emu"}, ttruntime.CodeVersionMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireCode(t, call(tc.cmd, tc.req), tc.code)
			require.NoError(t, c.Ping(ctx), "the runtime keeps serving")
		})
	}

	t.Run("double free", func(t *testing.T) {
		b, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 100})
		require.NoError(t, err)
		require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: b.Buffer}))
		err = c.Free(ctx, ttruntime.BufferRequest{Buffer: b.Buffer})
		requireCode(t, err, ttruntime.CodeUnknownBuffer)
		require.ErrorIs(t, err, backends.ErrUnknownBuffer)
	})

	t.Run("compile error", func(t *testing.T) {
		p := emptyProgram()
		p.Compute = section("#error \"zyx conformance: this kernel must not build\"\n")
		_, err := c.Compile(ctx, p)
		requireCode(t, err, ttruntime.CodeCompileError)
		require.ErrorIs(t, err, backends.ErrCompile)
		require.Contains(t, err.Error(), "must not build", "the compiler's diagnostics come back")
	})

	t.Run("run checks", func(t *testing.T) {
		p, err := c.Compile(ctx, emptyProgram())
		require.NoError(t, err)
		args := []ttruntime.RunArg{ttruntime.BufferArg(a.Buffer), ttruntime.ValueArg(7)}
		run := func(grid [2]uint32, args []ttruntime.RunArg) error {
			_, err := c.Run(ctx, ttruntime.RunRequest{Program: p.Program, Grid: grid, Args: args})
			return err
		}
		r, err := c.Run(ctx, ttruntime.RunRequest{Program: p.Program, Grid: [2]uint32{2, 2}, Args: args, Timed: true})
		require.NoError(t, err)
		require.NotZero(t, r.ElapsedNS, "a timed run reports the device time")
		require.NoError(t, run([2]uint32{info.Grid.Rows, info.Grid.Cols}, args), "the whole grid")
		for _, g := range [][2]uint32{{0, 1}, {1, 0}, {info.Grid.Rows + 1, 1}, {1, info.Grid.Cols + 1}} {
			requireCode(t, run(g, args), ttruntime.CodeInvalidArgument)
		}
		requireCode(t, run([2]uint32{1, 1}, args[:1]), ttruntime.CodeInvalidArgument)
		requireCode(t, run([2]uint32{1, 1}, []ttruntime.RunArg{ttruntime.BufferArg(777777), ttruntime.ValueArg(1)}), ttruntime.CodeUnknownBuffer)
		requireCode(t, run([2]uint32{1, 1}, []ttruntime.RunArg{ttruntime.ValueArg(1), ttruntime.ValueArg(1)}), ttruntime.CodeBadRequest)
		require.NoError(t, c.Release(ctx, ttruntime.ProgramRequest{Program: p.Program}))
		requireCode(t, run([2]uint32{1, 1}, args), ttruntime.CodeUnknownProgram)
		requireCode(t, c.Release(ctx, ttruntime.ProgramRequest{Program: p.Program}), ttruntime.CodeUnknownProgram)
	})
	require.True(t, c.Alive())
	require.NoError(t, c.Close())
}

// rawRuntime runs the binary on bare pipes, for input the driver never sends.
type rawRuntime struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startRaw(t *testing.T) *rawRuntime {
	t.Helper()
	cmd := exec.Command(runtimeBinary(t))
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &rawRuntime{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}
}

func (r *rawRuntime) reply(t *testing.T) ttruntime.ReplyHeader {
	t.Helper()
	line, err := r.out.ReadBytes('\n')
	require.NoError(t, err, "the runtime must answer")
	var h ttruntime.ReplyHeader
	require.NoError(t, json.Unmarshal(line, &h), "reply line: %q", line)
	require.NotNil(t, h.OK, "reply line: %q", line)
	return h
}

func TestRuntimeOneReplyPerLine(t *testing.T) {
	r := startRaw(t)
	seg := newSegment(t, 4096)
	type line struct {
		text string
		id   uint64 // the id the reply must carry
		code string // "" for success
	}
	lines := []line{
		{`{"id":1,"cmd":"ping"}`, 1, ""},
		{`{"id":2,"cmd":"alloc","size":16}`, 2, ttruntime.CodeNotInitialized},
		{`{"id":3,"cmd":"init","protocol":1,"layer":"emu","board":"n150","cache_dir":"` + t.TempDir() + `"}`, 3, ""},
		{`not json at all`, 0, ttruntime.CodeBadRequest},
		{``, 0, ttruntime.CodeBadRequest},
		{`{"id":"4","cmd":"ping"}`, 0, ttruntime.CodeBadRequest},
		{`{"cmd":"ping"}`, 0, ttruntime.CodeBadRequest},
		{`{"id":5}`, 5, ttruntime.CodeBadRequest},
		{`{"id":6,"cmd":"ping"`, 0, ttruntime.CodeBadRequest},
		{`[1,2,3]`, 0, ttruntime.CodeBadRequest},
		{"{\"id\":7,\"cmd\":\"\xff\xfe\"}", 0, ttruntime.CodeBadRequest},
		{`{"id":8,"cmd":"alloc","size":4096,"page_size":1024}`, 8, ""},
		{`{"id":9,"cmd":"write","buffer":1,"segment":"../etc/passwd","length":1}`, 9, ttruntime.CodeShmError},
		{`{"id":10,"cmd":"write","buffer":1,"segment":"` + seg.Name() + `","length":"x"}`, 10, ttruntime.CodeBadRequest},
		{`{"id":11,"cmd":"run","program":1,"grid":[0,0],"args":[]}`, 11, ttruntime.CodeUnknownProgram},
		{`{"id":12,"cmd":"compile","name":"q\"\n\\","params":[{"name":"a","kind":"texture","dtype":"f32"}]}`, 12, ttruntime.CodeBadRequest},
		{strings.Repeat("[", 100000), 0, ttruntime.CodeBadRequest},
		{`{"id":13,"cmd":"ping"}`, 13, ""},
	}
	// Random garbage after the fixed lines, none of it holding a newline.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		b := make([]byte, rng.IntN(300))
		for j := range b {
			b[j] = byte(rng.IntN(256))
			if b[j] == '\n' {
				b[j] = ' '
			}
		}
		// A few are valid requests with a garbage field, to keep ids in play.
		if i%4 == 0 {
			junk, err := json.Marshal(strings.ToValidUTF8(string(b), "?"))
			require.NoError(t, err)
			lines = append(lines, line{fmt.Sprintf(`{"id":%d,"cmd":"ping","junk":%s}`, 100+i, junk), uint64(100 + i), ""})
			continue
		}
		lines = append(lines, line{string(b), 0, ""})
	}
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(r.in, l.text+"\n"); err != nil {
				return
			}
		}
	}()
	for i, l := range lines {
		h := r.reply(t)
		if l.id == 0 && l.code == "" {
			// Garbage: id 0 with an error, unless the bytes happened to parse
			// as a request (they cannot carry a valid id and a known cmd).
			require.False(t, *h.OK, "line %d %q", i, l.text)
			continue
		}
		require.Equal(t, l.id, h.ID, "line %d %q", i, l.text)
		if l.code == "" {
			require.True(t, *h.OK, "line %d %q: %+v", i, l.text, h.Error)
		} else {
			require.False(t, *h.OK, "line %d %q", i, l.text)
			require.Equal(t, l.code, h.Error.Code, "line %d %q: %s", i, l.text, h.Error.Message)
		}
	}

	// A line over 64 MiB: one line_too_long reply (id 0), then service resumes.
	big := make([]byte, ttruntime.MaxLineBytes+10)
	for i := range big {
		big[i] = 'a'
	}
	big[len(big)-1] = '\n'
	done := make(chan error, 1)
	go func() {
		_, err := r.in.Write(big)
		if err == nil {
			_, err = io.WriteString(r.in, `{"id":14,"cmd":"ping"}`+"\n")
		}
		done <- err
	}()
	h := r.reply(t)
	require.False(t, *h.OK)
	require.Zero(t, h.ID)
	require.Equal(t, ttruntime.CodeLineTooLong, h.Error.Code)
	h = r.reply(t)
	require.EqualValues(t, 14, h.ID)
	require.True(t, *h.OK)
	require.NoError(t, <-done)

	// EOF: everything is released and the process exits 0 with nothing more on stdout.
	require.NoError(t, r.in.Close())
	rest, err := io.ReadAll(r.out)
	require.NoError(t, err)
	require.Empty(t, rest)
	require.NoError(t, r.cmd.Wait())
}

func TestRuntimeExitReplies(t *testing.T) {
	r := startRaw(t)
	_, err := io.WriteString(r.in, `{"id":1,"cmd":"init","protocol":1,"layer":"emu","board":"n150","cache_dir":"`+t.TempDir()+`"}`+"\n"+
		`{"id":2,"cmd":"alloc","size":100}`+"\n"+`{"id":3,"cmd":"exit"}`+"\n"+`{"id":4,"cmd":"ping"}`+"\n")
	require.NoError(t, err)
	for id := uint64(1); id <= 3; id++ {
		h := r.reply(t)
		require.Equal(t, id, h.ID)
		require.True(t, *h.OK)
	}
	rest, err := io.ReadAll(r.out)
	require.NoError(t, err)
	require.Empty(t, rest, "nothing is answered after exit")
	require.NoError(t, r.cmd.Wait())
}

// BenchmarkRuntimePingVsPipe is BenchmarkPingVsPipe against the C++ runtime
// (emulator layer) instead of the mock: the same raw echo reference and the
// same metrics, measured in one run.
func BenchmarkRuntimePingVsPipe(b *testing.B) { benchPingVsPipe(b, emuConfig(b, "n150", 0)) }

// BenchmarkRuntimeTransfer64MiB measures, in one run, a 64 MiB upload (write)
// and download (read) through shm to the C++ runtime against a 64 MiB
// in-process copy.
func BenchmarkRuntimeTransfer64MiB(b *testing.B) {
	const size = 64 << 20
	c, err := ttruntime.Start(context.Background(), emuConfig(b, "n150", 0))
	require.NoError(b, err)
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	seg, err := shm.Create(shm.NewName(), size)
	require.NoError(b, err)
	defer func() { _ = seg.Close() }()
	src := seg.Bytes()
	for i := range src {
		src[i] = byte(i * 31)
	}
	dst := make([]byte, size)
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: size})
	require.NoError(b, err)
	xfer := func(cmd string) {
		req := ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), Length: size}
		err := c.Write(ctx, req)
		if cmd == ttruntime.CmdRead {
			err = c.Read(ctx, req)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	xfer(ttruntime.CmdWrite) // maps the segment and touches the buffer
	xfer(ttruntime.CmdRead)
	copy(dst, src)

	var up, down, mem time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		xfer(ttruntime.CmdWrite)
		t1 := time.Now()
		xfer(ttruntime.CmdRead)
		t2 := time.Now()
		copy(dst, src)
		t3 := time.Now()
		up += t1.Sub(t0)
		down += t2.Sub(t1)
		mem += t3.Sub(t2)
	}
	b.StopTimer()
	gbps := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / 1e9 }
	b.ReportMetric(gbps(up), "GB/s-upload")
	b.ReportMetric(gbps(down), "GB/s-download")
	b.ReportMetric(gbps(mem), "GB/s-memcpy")
	// Bandwidth ratios, as the tt backend's benchmark reports them: above 1
	// means faster than memcpy.
	b.ReportMetric(float64(mem)/float64(up), "upload/memcpy")
	b.ReportMetric(float64(mem)/float64(down), "download/memcpy")
}
