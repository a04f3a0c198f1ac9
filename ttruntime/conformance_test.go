package ttruntime_test

// Conformance of the C++ runtime (bin/zyx-tt-runtime, emu layer) with the Go
// driver and docs/protocol.md. `make test` builds the binary first; when it
// is missing these tests fail, they do not skip. ZYX_TT_RUNTIME names
// another binary.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/internal/rtbin"
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
		var err error
		p, err = rtbin.Path()
		require.NoError(tb, err)
		source = "the repository's bin/"
	}
	if err := rtbin.Check(p); err != nil {
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
		a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: tc.size, BufferSpec: ttruntime.BufferSpec{PageSize: tc.page}})
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

// emptyProgram is a reader, compute and writer kernel that do nothing, on
// the cores [0, 0, 1, 1], with a buffer and a variable param.
func emptyProgram() ttruntime.CompileRequest {
	p := oneGroupProgram("empty", emptyDataflow, emptyCompute, emptyDataflow)
	cores := ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 1, 1)}
	for k := range p.Kernels {
		p.Kernels[k].Cores = cores
	}
	p.CBs[0].Cores = cores
	p.Params = []ttruntime.ParamDesc{
		{Name: "a", Kind: "global", DType: "f32"},
		{Name: "n", Kind: "variable", DType: "u32"},
	}
	p.Kernels[0].RuntimeArgs = []ttruntime.CoreArgs{{Cores: cores, Args: []ttruntime.ArgEntry{
		ttruntime.ParamEntry(ttruntime.ArgBufferAddr, 0), ttruntime.ParamEntry(ttruntime.ArgParam, 1)}}}
	return p
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
		{"alloc unknown field", ttruntime.CmdAlloc, m{"size": 64, "pages": 1}, ttruntime.CodeBadRequest},
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
		{"run unknown program", ttruntime.CmdRun, ttruntime.RunRequest{Program: 4242}, ttruntime.CodeUnknownProgram},
		{"run with a v1 grid", ttruntime.CmdRun, m{"program": 4242, "grid": []int{1, 1}}, ttruntime.CodeBadRequest},
		{"release unknown program", ttruntime.CmdRelease, ttruntime.ProgramRequest{Program: 4242}, ttruntime.CodeUnknownProgram},
		{"compile without kernels", ttruntime.CmdCompile, m{"name": "x", "params": []any{}}, ttruntime.CodeBadRequest},
		{"compile of v1 sections", ttruntime.CmdCompile, m{"name": "x", "reader": m{"source": ""}}, ttruntime.CodeBadRequest},
		{"second init", ttruntime.CmdInit, ttruntime.InitRequest{Protocol: 2, Layer: "emu", Board: "n150"}, ttruntime.CodeInvalidArgument},
		{"init of protocol 1", ttruntime.CmdInit, ttruntime.InitRequest{Protocol: 1, Layer: "emu"}, ttruntime.CodeVersionMismatch},
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
		p.Kernels[1].SetSource("#error \"zyx conformance: this kernel must not build\"\n")
		_, err := c.Compile(ctx, p)
		requireCode(t, err, ttruntime.CodeCompileError)
		require.ErrorIs(t, err, backends.ErrCompile)
		require.Contains(t, err.Error(), "must not build", "the compiler's diagnostics come back")
	})

	t.Run("run checks", func(t *testing.T) {
		p, err := c.Compile(ctx, emptyProgram())
		require.NoError(t, err)
		args := []ttruntime.RunArg{ttruntime.BufferArg(a.Buffer), ttruntime.ValueArg(7)}
		run := func(args []ttruntime.RunArg) error {
			_, err := c.Run(ctx, ttruntime.RunRequest{Program: p.Program, Args: args})
			return err
		}
		r, err := c.Run(ctx, ttruntime.RunRequest{Program: p.Program, Args: args, Timed: true})
		require.NoError(t, err)
		require.NotZero(t, r.ElapsedNS, "a timed run reports the device time")
		require.NoError(t, run(args))
		requireCode(t, run(args[:1]), ttruntime.CodeInvalidArgument)
		requireCode(t, run([]ttruntime.RunArg{ttruntime.BufferArg(777777), ttruntime.ValueArg(1)}), ttruntime.CodeUnknownBuffer)
		requireCode(t, run([]ttruntime.RunArg{ttruntime.ValueArg(1), ttruntime.ValueArg(1)}), ttruntime.CodeInvalidArgument)
		require.NoError(t, c.Release(ctx, ttruntime.ProgramRequest{Program: p.Program}))
		requireCode(t, run(args), ttruntime.CodeUnknownProgram)
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
	return startRawCmd(t, exec.Command(runtimeBinary(t)))
}

func startRawCmd(t *testing.T, cmd *exec.Cmd) *rawRuntime {
	t.Helper()
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
		{`{"id":3,"cmd":"init","protocol":2,"layer":"emu","board":"n150","cache_dir":"` + t.TempDir() + `"}`, 3, ""},
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
		{`{"id":11,"cmd":"run","program":1,"args":[]}`, 11, ttruntime.CodeUnknownProgram},
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
		// A few are requests with a garbage field, to keep ids in play: a
		// field a command does not take is bad_request.
		if i%4 == 0 {
			junk, err := json.Marshal(strings.ToValidUTF8(string(b), "?"))
			require.NoError(t, err)
			lines = append(lines, line{fmt.Sprintf(`{"id":%d,"cmd":"ping","junk":%s}`, 100+i, junk), uint64(100 + i), ttruntime.CodeBadRequest})
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

// TestConformanceAfter sends the C++ server requests whose `after` names
// requests answered before (a success, a failure), never sent, id 0, named
// twice, or whose slot a later id took: it answers each with the code and
// message of docs/protocol.md, and remembers the whole window of 1024
// requests before a request.
func TestConformanceAfter(t *testing.T) {
	const inv, ok = ttruntime.CodeInvalidArgument, ""
	type line struct {
		id    uint64
		after []uint64
		junk  bool
		code  string
		msg   string
	}
	lines := []line{
		{id: 2},
		{id: 3, junk: true, code: ttruntime.CodeBadRequest},
		{id: 50},
		{id: 1074},
		{id: 35},
		{10, []uint64{2}, false, ok, ""},
		{11, []uint64{2, 3}, false, ttruntime.CodeDependencyFailed, "ping.after[1]: request 3 failed (bad_request); this request was not executed"},
		{12, []uint64{2, 7}, false, inv, "ping.after[1]: request 7 is unknown: no request 7 came before request 12"},
		{13, []uint64{0}, false, inv, "ping.after[0]: request 0 is unknown: no request 0 came before request 13"},
		{14, []uint64{2, 10, 2}, false, inv, "ping.after[2]: request 2 is named twice (also after[0])"},
		{15, []uint64{3, 3}, false, inv, "ping.after[1]: request 3 is named twice (also after[0])"},
		{40, []uint64{35}, false, ok, ""},
		{41, []uint64{39}, false, inv, "ping.after[0]: request 39 is unknown: no request 39 came before request 41"},
		{1060, []uint64{50}, false, inv, "ping.after[0]: request 50 is unknown: it did not come before request 1060, or request 1074, sent since, took its place (the runtime remembers 1024 requests of increasing ids)"},
		{42, []uint64{42}, false, inv, "ping.after[0]: request 42 is not one of the 1024 requests before request 42"},
	}
	for id := uint64(2000); id < 2000+ttruntime.AfterWindow; id++ {
		lines = append(lines, line{id: id})
	}
	lines = append(lines, line{id: 2000 + ttruntime.AfterWindow, after: []uint64{2000, 2500, 2000 + ttruntime.AfterWindow - 1}})
	for name, r := range map[string]*rawRuntime{"c++": startRaw(t)} {
		init := `{"id":1,"cmd":"init","protocol":2,"layer":"emu","board":"n150","cache_dir":"` + t.TempDir() + `"}` + "\n"
		_, err := io.WriteString(r.in, init)
		require.NoError(t, err)
		require.True(t, *r.reply(t).OK, "%s: init", name)
		for _, l := range lines {
			req := map[string]any{"id": l.id, "cmd": "ping"}
			if l.after != nil {
				req["after"] = l.after
			}
			if l.junk {
				req["junk"] = 1
			}
			b, err := json.Marshal(req)
			require.NoError(t, err)
			_, err = r.in.Write(append(b, '\n'))
			require.NoError(t, err)
			h := r.reply(t)
			require.Equal(t, l.id, h.ID, "%s: %s", name, b)
			if l.code == ok {
				require.True(t, *h.OK, "%s: %s: %+v", name, b, h.Error)
				continue
			}
			require.False(t, *h.OK, "%s: %s", name, b)
			require.Equal(t, l.code, h.Error.Code, "%s: %s: %s", name, b, h.Error.Message)
			if l.msg != "" {
				require.Equal(t, l.msg, h.Error.Message, "%s: %s", name, b)
			}
		}
	}
}

func TestRuntimeExitReplies(t *testing.T) {
	r := startRaw(t)
	_, err := io.WriteString(r.in, `{"id":1,"cmd":"init","protocol":2,"layer":"emu","board":"n150","cache_dir":"`+t.TempDir()+`"}`+"\n"+
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
// out of mock mode (the emulator layer alone): the same raw echo reference
// and the same metrics, measured in one run.
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
	req := ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), Length: size}
	up := func() error { return c.Write(ctx, req) }
	down := func() error { return c.Read(ctx, req) }
	require.NoError(b, up()) // maps the segment and touches the buffer
	require.NoError(b, down())
	copy(dst, src)
	backendtest.BenchTransfers(b, size, up, down, func() { copy(dst, src) })
}

// ---- protocol v2 conformance: the C++ server's rules ----

func u32p(v uint32) *uint32 { return &v }

func src(s string) *string { return &s }

// set is a core range set; set() is the empty set (not nil, which is sent
// as a missing field).
func set(rs ...ttruntime.CoreRange) ttruntime.CoreRangeSet {
	return append(ttruntime.CoreRangeSet{}, rs...)
}

// goodProgram is the C++ server test's reference program (cpp/tests/
// server_test.cpp, good_program) with kernels that build: two core groups,
// per-core args, every arg kind, an L1-sharded buffer under a CB, two
// semaphores, an include file, named compile args. On an 8 x 8 grid.
func goodProgram() ttruntime.CompileRequest {
	E := ttruntime.ParamEntry
	B := ttruntime.BankEntry
	readerRT0 := []ttruntime.ArgEntry{
		E(ttruntime.ArgBufferAddr, 0),
		E(ttruntime.ArgParam, 2),
		ttruntime.ConstEntry(7),
		B(ttruntime.ArgBankID, 0, 9),
		B(ttruntime.ArgBankNocX, 0, 9),
		B(ttruntime.ArgBankNocY, 0, 9),
		ttruntime.CoreNocEntry(ttruntime.ArgCoreNocX, ttruntime.CoreCoord{1, 5}),
		ttruntime.CoreNocEntry(ttruntime.ArgCoreNocY, ttruntime.CoreCoord{1, 5}),
		E(ttruntime.ArgBufferPages, 1),
		E(ttruntime.ArgPageSize, 1),
		ttruntime.SemaphoreAddrEntry(1),
	}
	reader := ttruntime.Kernel{
		Name: "reader", Processor: ttruntime.ProcRiscv0, Cores: set(ttruntime.Rect(0, 0, 1, 7)),
		Source:           src("#include \"inc/common.h\"\n" + emptyDataflow),
		Defines:          map[string]string{"BLOCK": "4"},
		CompileArgs:      []ttruntime.ArgEntry{E(ttruntime.ArgAccessor, 0), ttruntime.ConstEntry(2)},
		NamedCompileArgs: map[string]ttruntime.ArgEntry{"num_tiles": ttruntime.ConstEntry(64)},
		CommonArgs:       []ttruntime.ArgEntry{E(ttruntime.ArgBufferAddr, 0)},
		RuntimeArgs: []ttruntime.CoreArgs{
			{Cores: set(ttruntime.Rect(0, 0, 0, 7)), Args: readerRT0},
			{Cores: set(ttruntime.Rect(1, 0, 1, 7)), Args: []ttruntime.ArgEntry{ttruntime.ConstEntry(9)}},
		},
	}
	compute := ttruntime.Kernel{
		Name: "compute", Processor: ttruntime.ProcCompute, Cores: set(ttruntime.Rect(0, 0, 1, 7)), Source: src(emptyCompute),
		ComputeConfig: &ttruntime.ComputeConfig{MathFidelity: "HiFi2", FP32DestAcc: true},
	}
	writer := ttruntime.Kernel{
		Name: "writer", Processor: ttruntime.ProcRiscv1, NOC: u32p(1), Cores: set(ttruntime.Rect(0, 0, 1, 3)), Source: src(emptyDataflow),
		RuntimeArgs: []ttruntime.CoreArgs{{Cores: set(ttruntime.Rect(0, 0, 1, 3)), Args: []ttruntime.ArgEntry{E(ttruntime.ArgBufferAddr, 1)}}},
	}
	writer2 := ttruntime.Kernel{Name: "writer2", Processor: ttruntime.ProcRiscv1, Cores: set(ttruntime.Rect(0, 4, 1, 7))}
	writer2.SetSource(emptyDataflow + "// \xff\n") // not UTF-8: it travels as base64
	return ttruntime.CompileRequest{
		Name: "t",
		Params: []ttruntime.ParamDesc{
			{Name: "a", Kind: "global", DType: "f32"},
			{Name: "b", Kind: "global_mut", DType: "f32"},
			{Name: "n", Kind: "variable", DType: "u32"},
			{Name: "l1buf", Kind: "global", DType: "u8"},
		},
		Buffers: []ttruntime.BufferDecl{
			{Param: 0, BufferSpec: ttruntime.BufferSpec{Placement: "dram", Layout: "interleaved", PageSize: 2048}},
			{Param: 3, BufferSpec: ttruntime.BufferSpec{Placement: "l1", Layout: "height_sharded", PageSize: 64,
				Shard: &ttruntime.ShardSpec{Cores: set(ttruntime.Rect(0, 0, 0, 3)), Shape: [2]uint32{2, 4}, Tensor: [2]uint32{8, 4}, Orientation: "row_major"}}},
		},
		IncludeFiles: []ttruntime.IncludeFile{{Path: "inc/common.h", Source: src("#define X 1\n")}},
		Kernels:      []ttruntime.Kernel{reader, compute, writer, writer2},
		CBs: []ttruntime.CBConfig{
			{Cores: set(ttruntime.Rect(0, 0, 1, 7)), TotalBytes: 8192, Indices: []ttruntime.CBIndex{
				{Index: 0, Format: "Float16_b", PageBytes: 2048},
				{Index: 16, Format: "Bfp8_b", PageBytes: 1024, Tile: &[2]uint32{32, 32}}}},
			{Cores: set(ttruntime.Rect(0, 0, 0, 3)), TotalBytes: 512, Indices: []ttruntime.CBIndex{
				{Index: 2, Format: "UInt8", PageBytes: 64, Tile: &[2]uint32{1, 32}}}, Buffer: u32p(3)},
		},
		Semaphores: []ttruntime.Semaphore{
			{Cores: set(ttruntime.Rect(0, 0, 1, 7)), ID: 0},
			{Cores: set(ttruntime.Rect(0, 0, 0, 7)), ID: 1, Initial: 5},
		},
	}
}

type badCompile struct {
	what string
	edit func(p *ttruntime.CompileRequest)
	code string
	path string
}

// badPrograms is the C++ server test's table of bad programs as far as a
// typed request can express it (kinds of JSON that do not decode into the
// Go types are refused by the Go encoder, not the validator), one row per
// rule, in check order. Each edit of goodProgram must get this code and
// name this field path.
func badPrograms() []badCompile {
	K := func(p *ttruntime.CompileRequest, k int) *ttruntime.Kernel { return &p.Kernels[k] }
	RT := func(p *ttruntime.CompileRequest, a int) *ttruntime.ArgEntry {
		return &p.Kernels[0].RuntimeArgs[0].Args[a]
	}
	const bad, inv = ttruntime.CodeBadRequest, ttruntime.CodeInvalidArgument
	shard1 := func(p *ttruntime.CompileRequest) *ttruntime.ShardSpec { return p.Buffers[1].Shard }
	return []badCompile{
		// -- shape: bad_request --
		{"kernels missing", func(p *ttruntime.CompileRequest) { p.Kernels = nil }, bad, "compile.kernels"},
		{"param kind unknown", func(p *ttruntime.CompileRequest) { p.Params[0].Kind = "texture" }, bad, "compile.params[0].kind"},
		{"param kind empty", func(p *ttruntime.CompileRequest) { p.Params[1].Kind = "" }, bad, "compile.params[1].kind"},
		{"param dtype unknown", func(p *ttruntime.CompileRequest) { p.Params[0].DType = "f128" }, bad, "compile.params[0].dtype"},
		{"param dtype an alias", func(p *ttruntime.CompileRequest) { p.Params[2].DType = "uint32" }, bad, "compile.params[2].dtype"},
		{"param dtype empty", func(p *ttruntime.CompileRequest) { p.Params[1].DType = "" }, bad, "compile.params[1].dtype"},
		{"placement unknown", func(p *ttruntime.CompileRequest) { p.Buffers[0].Placement = "hbm" }, bad, "compile.buffers[0].placement"},
		{"buffer layout unknown", func(p *ttruntime.CompileRequest) { p.Buffers[0].Layout = "sharded" }, bad, "compile.buffers[0].layout"},
		{"interleaved with a shard", func(p *ttruntime.CompileRequest) { p.Buffers[0].Shard = p.Buffers[1].Shard }, bad, "compile.buffers[0].shard"},
		{"sharded without a shard", func(p *ttruntime.CompileRequest) { p.Buffers[1].Shard = nil }, bad, "compile.buffers[1].shard"},
		{"shard without cores", func(p *ttruntime.CompileRequest) { shard1(p).Cores = nil }, bad, "compile.buffers[1].shard.cores"},
		{"orientation unknown", func(p *ttruntime.CompileRequest) { shard1(p).Orientation = "diagonal" }, bad, "compile.buffers[1].shard.orientation"},
		{"include without source", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Source = nil }, bad, "compile.include_files[0].source"},
		{"include bad base64", func(p *ttruntime.CompileRequest) {
			p.IncludeFiles[0].Source, p.IncludeFiles[0].SourceB64 = nil, "A"
		}, bad, "compile.include_files[0].source_b64"},
		{"processor unknown", func(p *ttruntime.CompileRequest) { K(p, 0).Processor = "riscv_2" }, bad, "compile.kernels[0].processor"},
		{"processor empty", func(p *ttruntime.CompileRequest) { K(p, 2).Processor = "" }, bad, "compile.kernels[2].processor"},
		{"noc on compute", func(p *ttruntime.CompileRequest) { K(p, 1).NOC = u32p(0) }, bad, "compile.kernels[1].noc"},
		{"compute_config on data movement", func(p *ttruntime.CompileRequest) { K(p, 0).ComputeConfig = &ttruntime.ComputeConfig{} }, bad, "compile.kernels[0].compute_config"},
		{"kernel cores missing", func(p *ttruntime.CompileRequest) { K(p, 0).Cores = nil }, bad, "compile.kernels[0].cores"},
		{"both sources", func(p *ttruntime.CompileRequest) { K(p, 0).SourceB64 = "AAAA" }, bad, "compile.kernels[0].source"},
		{"no source", func(p *ttruntime.CompileRequest) { K(p, 0).Source = nil }, bad, "compile.kernels[0].source"},
		{"bad base64", func(p *ttruntime.CompileRequest) { K(p, 3).SourceB64 = "!!!" }, bad, "compile.kernels[3].source_b64"},
		{"compile arg kind unknown", func(p *ttruntime.CompileRequest) { K(p, 0).CompileArgs[1].Kind = "constant" }, bad, "compile.kernels[0].compile_args[1].kind"},
		{"named arg takes no param", func(p *ttruntime.CompileRequest) {
			e := ttruntime.ConstEntry(1)
			e.Param = u32p(0)
			K(p, 0).NamedCompileArgs["num_tiles"] = e
		}, bad, "compile.kernels[0].named_compile_args.num_tiles.param"},
		{"common arg without param", func(p *ttruntime.CompileRequest) { K(p, 0).CommonArgs[0].Param = nil }, bad, "compile.kernels[0].common_args[0].param"},
		{"arg kind unknown", func(p *ttruntime.CompileRequest) { RT(p, 0).Kind = "core_row" }, bad, "compile.kernels[0].runtime_args[0].args[0].kind"},
		{"field a kind does not take", func(p *ttruntime.CompileRequest) { RT(p, 0).Value = u32p(1) }, bad, "compile.kernels[0].runtime_args[0].args[0].value"},
		{"two fields a kind does not take", func(p *ttruntime.CompileRequest) {
			RT(p, 2).Page, RT(p, 2).Core = u32p(1), &ttruntime.CoreCoord{0, 0}
		}, bad, "compile.kernels[0].runtime_args[0].args[2].core"},
		{"const without value", func(p *ttruntime.CompileRequest) { RT(p, 2).Value = nil }, bad, "compile.kernels[0].runtime_args[0].args[2].value"},
		{"bank entry without page", func(p *ttruntime.CompileRequest) { RT(p, 3).Page = nil }, bad, "compile.kernels[0].runtime_args[0].args[3].page"},
		{"core entry without core", func(p *ttruntime.CompileRequest) { RT(p, 6).Core = nil }, bad, "compile.kernels[0].runtime_args[0].args[6].core"},
		{"semaphore_addr without semaphore", func(p *ttruntime.CompileRequest) { RT(p, 10).Semaphore = nil }, bad, "compile.kernels[0].runtime_args[0].args[10].semaphore"},
		{"semaphore on a const", func(p *ttruntime.CompileRequest) { RT(p, 2).Semaphore = u32p(0) }, bad, "compile.kernels[0].runtime_args[0].args[2].semaphore"},
		{"runtime_args without cores", func(p *ttruntime.CompileRequest) { K(p, 0).RuntimeArgs[0].Cores = nil }, bad, "compile.kernels[0].runtime_args[0].cores"},
		{"fidelity unknown", func(p *ttruntime.CompileRequest) { K(p, 1).ComputeConfig.MathFidelity = "HiFi5" }, bad, "compile.kernels[1].compute_config.math_fidelity"},
		{"cb cores missing", func(p *ttruntime.CompileRequest) { p.CBs[0].Cores = nil }, bad, "compile.cbs[0].cores"},
		{"cb indices missing", func(p *ttruntime.CompileRequest) { p.CBs[1].Indices = nil }, bad, "compile.cbs[1].indices"},
		{"format unknown", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices[0].Format = "Bfp8" }, bad, "compile.cbs[0].indices[0].format"},
		{"semaphore cores missing", func(p *ttruntime.CompileRequest) { p.Semaphores[1].Cores = nil }, bad, "compile.semaphores[1].cores"},
		// -- meaning: invalid_argument, in check order --
		{"V2 decl param out of range", func(p *ttruntime.CompileRequest) { p.Buffers[0].Param = 9 }, inv, "compile.buffers[0].param"},
		{"V2 decl of a variable", func(p *ttruntime.CompileRequest) { p.Buffers[0].Param = 2 }, inv, "compile.buffers[0].param"},
		{"V2 decl twice", func(p *ttruntime.CompileRequest) { p.Buffers = append(p.Buffers, p.Buffers[0]) }, inv, "compile.buffers[2].param"},
		{"S1 page_size past 32 bits", func(p *ttruntime.CompileRequest) { p.Buffers[0].PageSize = 1 << 32 }, inv, "compile.buffers[0].page_size"},
		{"S2 empty shard grid", func(p *ttruntime.CompileRequest) { shard1(p).Cores = set() }, inv, "compile.buffers[1].shard.cores"},
		{"S2 shard grid outside", func(p *ttruntime.CompileRequest) { shard1(p).Cores = set(ttruntime.Rect(0, 0, 0, 9)) }, inv, "compile.buffers[1].shard.cores[0]"},
		{"S2 shard ranges overlap", func(p *ttruntime.CompileRequest) {
			shard1(p).Cores = set(ttruntime.Rect(0, 0, 0, 3), ttruntime.Rect(0, 3, 0, 4))
		}, inv, "compile.buffers[1].shard.cores[1]"},
		{"S2 DRAM shard grid is 1 x banks", func(p *ttruntime.CompileRequest) {
			p.Buffers[1].Placement = "dram"
			shard1(p).Cores = set(ttruntime.Rect(1, 0, 1, 3))
		}, inv, "compile.buffers[1].shard.cores[0]"},
		{"S3 shape 0", func(p *ttruntime.CompileRequest) { shard1(p).Shape = [2]uint32{0, 4} }, inv, "compile.buffers[1].shard.shape"},
		{"S3 tensor 0", func(p *ttruntime.CompileRequest) { shard1(p).Tensor = [2]uint32{8, 0} }, inv, "compile.buffers[1].shard.tensor"},
		// 32 pages dealt out in shard rows of 3: the last shard would lose pages.
		{"S4 height shard rows that do not divide the pages", func(p *ttruntime.CompileRequest) { shard1(p).Shape = [2]uint32{2, 3} }, inv, "compile.buffers[1].shard.shape"},
		// A width shard shorter than the tensor is taken; here it makes 8 shards for 4 cores.
		{"S5 width shards past the cores", func(p *ttruntime.CompileRequest) {
			p.Buffers[1].Layout = "width_sharded"
			shard1(p).Shape = [2]uint32{4, 1}
		}, inv, "compile.buffers[1].shard.cores"},
		{"S5 more shards than cores", func(p *ttruntime.CompileRequest) { shard1(p).Shape = [2]uint32{1, 4} }, inv, "compile.buffers[1].shard.cores"},
		{"V3 absolute include", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Path = "/etc/x.h" }, inv, "compile.include_files[0].path"},
		{"V3 include with ..", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Path = "inc/../../x.h" }, inv, "compile.include_files[0].path"},
		{"V3 include with an empty component", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Path = "inc//x.h" }, inv, "compile.include_files[0].path"},
		{"V3 include ./", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Path = "./x.h" }, inv, "compile.include_files[0].path"},
		{"V3 empty include path", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Path = "" }, inv, "compile.include_files[0].path"},
		{"V3 include with NUL", func(p *ttruntime.CompileRequest) { p.IncludeFiles[0].Path = "a\x00b.h" }, inv, "compile.include_files[0].path"},
		{"V3 include twice", func(p *ttruntime.CompileRequest) { p.IncludeFiles = append(p.IncludeFiles, p.IncludeFiles[0]) }, inv, "compile.include_files[1].path"},
		{"V4 no kernels", func(p *ttruntime.CompileRequest) { p.Kernels = []ttruntime.Kernel{} }, inv, "compile.kernels"},
		{"V4 65 kernels", func(p *ttruntime.CompileRequest) {
			k := p.Kernels[3]
			p.Kernels = nil
			for range 65 {
				p.Kernels = append(p.Kernels, k)
			}
		}, inv, "compile.kernels"},
		{"C1 empty kernel cores", func(p *ttruntime.CompileRequest) { K(p, 0).Cores = set() }, inv, "compile.kernels[0].cores"},
		{"C2 unordered range", func(p *ttruntime.CompileRequest) { K(p, 0).Cores = set(ttruntime.Rect(1, 0, 0, 7)) }, inv, "compile.kernels[0].cores[0]"},
		{"C3 range outside the grid", func(p *ttruntime.CompileRequest) { K(p, 0).Cores = set(ttruntime.Rect(0, 0, 8, 7)) }, inv, "compile.kernels[0].cores[0]"},
		{"C3 range far outside", func(p *ttruntime.CompileRequest) { K(p, 0).Cores = set(ttruntime.Rect(0, 0, 1<<31, 1<<31)) }, inv, "compile.kernels[0].cores[0]"},
		{"C4 ranges overlap", func(p *ttruntime.CompileRequest) {
			K(p, 0).Cores = set(ttruntime.Rect(0, 0, 1, 3), ttruntime.Rect(1, 3, 1, 7))
		}, inv, "compile.kernels[0].cores[1]"},
		{"V5 noc 2", func(p *ttruntime.CompileRequest) { K(p, 2).NOC = u32p(2) }, inv, "compile.kernels[2].noc"},
		{"V5 define name", func(p *ttruntime.CompileRequest) { K(p, 0).Defines["1X"] = "1" }, inv, "compile.kernels[0].defines.1X"},
		{"V5 define value with a line break", func(p *ttruntime.CompileRequest) { K(p, 0).Defines["X"] = "1\n#include <x>" }, inv, "compile.kernels[0].defines.X"},
		{"V5 unpack_to_dest past the CBs", func(p *ttruntime.CompileRequest) { K(p, 1).ComputeConfig.UnpackToDestFP32 = []uint32{3, 32} }, inv, "compile.kernels[1].compute_config.unpack_to_dest_fp32[1]"},
		{"A1 param out of range", func(p *ttruntime.CompileRequest) { K(p, 0).CompileArgs[0].Param = u32p(9) }, inv, "compile.kernels[0].compile_args[0].param"},
		{"A2 param kind on a buffer", func(p *ttruntime.CompileRequest) { RT(p, 1).Param = u32p(0) }, inv, "compile.kernels[0].runtime_args[0].args[1].param"},
		{"A2 buffer kind on a variable", func(p *ttruntime.CompileRequest) { RT(p, 0).Param = u32p(2) }, inv, "compile.kernels[0].runtime_args[0].args[0].param"},
		{"A3 accessor in common_args", func(p *ttruntime.CompileRequest) { K(p, 0).CommonArgs[0].Kind = "accessor" }, inv, "compile.kernels[0].common_args[0].kind"},
		{"A3 accessor in runtime_args", func(p *ttruntime.CompileRequest) { RT(p, 0).Kind = "accessor" }, inv, "compile.kernels[0].runtime_args[0].args[0].kind"},
		{"A3 accessor as a named compile arg", func(p *ttruntime.CompileRequest) {
			K(p, 0).NamedCompileArgs["acc"] = ttruntime.ParamEntry(ttruntime.ArgAccessor, 0)
		}, inv, "compile.kernels[0].named_compile_args.acc.kind"},
		{"A4 accessor of an undeclared buffer", func(p *ttruntime.CompileRequest) { K(p, 0).CompileArgs[0].Param = u32p(1) }, inv, "compile.kernels[0].compile_args[0].param"},
		{"A4 bank_id of an undeclared buffer", func(p *ttruntime.CompileRequest) { RT(p, 3).Param = u32p(1) }, inv, "compile.kernels[0].runtime_args[0].args[3].param"},
		{"A5 core outside the grid", func(p *ttruntime.CompileRequest) { RT(p, 6).Core = &ttruntime.CoreCoord{8, 0} }, inv, "compile.kernels[0].runtime_args[0].args[6].core"},
		{"A6 semaphore_addr past the semaphores", func(p *ttruntime.CompileRequest) { RT(p, 10).Semaphore = u32p(16) }, inv, "compile.kernels[0].runtime_args[0].args[10].semaphore"},
		{"C1 empty runtime_args cores", func(p *ttruntime.CompileRequest) { K(p, 0).RuntimeArgs[0].Cores = set() }, inv, "compile.kernels[0].runtime_args[0].cores"},
		{"C5 runtime args outside the kernel", func(p *ttruntime.CompileRequest) {
			K(p, 2).RuntimeArgs[0].Cores = set(ttruntime.Rect(0, 0, 1, 4))
		}, inv, "compile.kernels[2].runtime_args[0].cores[0]"},
		{"C6 runtime args entries overlap", func(p *ttruntime.CompileRequest) {
			K(p, 0).RuntimeArgs[1].Cores = set(ttruntime.Rect(0, 7, 1, 7))
		}, inv, "compile.kernels[0].runtime_args[1].cores[0]"},
		{"V6 two kernels on one processor", func(p *ttruntime.CompileRequest) { K(p, 3).Cores = set(ttruntime.Rect(0, 3, 1, 7)) }, inv, "compile.kernels[3].cores"},
		{"C3 CB cores outside", func(p *ttruntime.CompileRequest) { p.CBs[0].Cores = set(ttruntime.Rect(0, 0, 1, 8)) }, inv, "compile.cbs[0].cores[0]"},
		{"V7 total_bytes 0", func(p *ttruntime.CompileRequest) { p.CBs[0].TotalBytes = 0 }, inv, "compile.cbs[0].total_bytes"},
		{"V7 no indices", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices = []ttruntime.CBIndex{} }, inv, "compile.cbs[0].indices"},
		{"V7 index 32", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices[0].Index = 32 }, inv, "compile.cbs[0].indices[0].index"},
		{"V7 page_bytes 0", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices[0].PageBytes = 0 }, inv, "compile.cbs[0].indices[0].page_bytes"},
		{"V7 page_bytes not dividing", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices[0].PageBytes = 3000 }, inv, "compile.cbs[0].indices[0].page_bytes"},
		{"V7 tile shape", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices[0].Tile = &[2]uint32{3, 32} }, inv, "compile.cbs[0].indices[0].tile"},
		{"V7 index twice in a config", func(p *ttruntime.CompileRequest) { p.CBs[0].Indices[1].Index = 0 }, inv, "compile.cbs[0].indices[1].index"},
		{"V7 CB buffer out of range", func(p *ttruntime.CompileRequest) { p.CBs[1].Buffer = u32p(9) }, inv, "compile.cbs[1].buffer"},
		{"V7 CB buffer a variable", func(p *ttruntime.CompileRequest) { p.CBs[1].Buffer = u32p(2) }, inv, "compile.cbs[1].buffer"},
		{"V7 CB buffer undeclared", func(p *ttruntime.CompileRequest) { p.CBs[1].Buffer = u32p(1) }, inv, "compile.cbs[1].buffer"},
		{"V7 CB buffer in DRAM", func(p *ttruntime.CompileRequest) { p.CBs[1].Buffer = u32p(0) }, inv, "compile.cbs[1].buffer"},
		{"V7 CB core without a shard", func(p *ttruntime.CompileRequest) { p.CBs[1].Cores = set(ttruntime.Rect(0, 0, 0, 4)) }, inv, "compile.cbs[1].buffer"},
		{"V7 CB index twice on a core", func(p *ttruntime.CompileRequest) { p.CBs[1].Indices[0].Index = 0 }, inv, "compile.cbs[1].indices"},
		{"V8 CBs over the L1 budget", func(p *ttruntime.CompileRequest) { p.CBs[0].TotalBytes = 1400 * 1024 }, inv, "compile.cbs"},
		{"C3 semaphore cores outside", func(p *ttruntime.CompileRequest) { p.Semaphores[0].Cores = set(ttruntime.Rect(9, 0, 9, 0)) }, inv, "compile.semaphores[0].cores[0]"},
		{"V9 semaphore id past the count", func(p *ttruntime.CompileRequest) { p.Semaphores[0].ID = 16 }, inv, "compile.semaphores[0].id"},
		{"V9 semaphore id used twice on a core", func(p *ttruntime.CompileRequest) { p.Semaphores[1].ID = 0 }, inv, "compile.semaphores[1].id"},
		{"V9 semaphore id not as CreateSemaphore gives", func(p *ttruntime.CompileRequest) { p.Semaphores[1].ID = 2 }, inv, "compile.semaphores[1].id"},
	}
}

type badAlloc struct {
	what string
	req  ttruntime.AllocRequest
	code string
	path string
}

func badAllocs(info ttruntime.InitReply) []badAlloc {
	l1 := func(size, page uint64, layout string, sh *ttruntime.ShardSpec) ttruntime.AllocRequest {
		return ttruntime.AllocRequest{Size: size, BufferSpec: ttruntime.BufferSpec{PageSize: page, Placement: "l1", Layout: layout, Shard: sh}}
	}
	shard := func(cores ttruntime.CoreRangeSet, shape, tensor [2]uint32) *ttruntime.ShardSpec {
		return &ttruntime.ShardSpec{Cores: cores, Shape: shape, Tensor: tensor}
	}
	const bad, inv, oom = ttruntime.CodeBadRequest, ttruntime.CodeInvalidArgument, ttruntime.CodeOutOfMemory
	return []badAlloc{
		{"size 0", ttruntime.AllocRequest{}, inv, "alloc.size"},
		{"page past 32 bits", ttruntime.AllocRequest{Size: 64, BufferSpec: ttruntime.BufferSpec{PageSize: 1 << 32}}, inv, "alloc.page_size"},
		{"pages past 32 bits", ttruntime.AllocRequest{Size: 1 << 33, BufferSpec: ttruntime.BufferSpec{PageSize: 1}}, inv, "alloc.size"},
		{"past DRAM", ttruntime.AllocRequest{Size: info.DRAM.Total() + 1}, oom, "alloc"},
		{"placement unknown", ttruntime.AllocRequest{Size: 64, BufferSpec: ttruntime.BufferSpec{Placement: "hbm"}}, bad, "alloc.placement"},
		{"layout unknown", ttruntime.AllocRequest{Size: 64, BufferSpec: ttruntime.BufferSpec{Layout: "sharded"}}, bad, "alloc.layout"},
		{"sharded without shard", l1(64, 64, "height_sharded", nil), bad, "alloc.shard"},
		{"interleaved with shard", l1(64, 64, "", shard(set(ttruntime.Rect(0, 0, 0, 0)), [2]uint32{1, 1}, [2]uint32{1, 1})), bad, "alloc.shard"},
		{"shard cores missing", l1(64, 64, "block_sharded", shard(nil, [2]uint32{1, 1}, [2]uint32{1, 1})), bad, "alloc.shard.cores"},
		{"shard outside the grid", l1(64, 64, "block_sharded", shard(set(ttruntime.Rect(0, 0, 8, 0)), [2]uint32{1, 1}, [2]uint32{1, 1})), inv, "alloc.shard.cores[0]"},
		{"tensor smaller than the buffer", l1(2048, 64, "height_sharded", shard(set(ttruntime.Rect(0, 0, 0, 3)), [2]uint32{2, 4}, [2]uint32{4, 4})), inv, "alloc.shard.tensor"},
		{"L1 past a core", l1(100<<20, 2048, "", nil), oom, "alloc"},
		{"L1 shard past a core", l1(64<<20, 1<<20, "height_sharded", shard(set(ttruntime.Rect(0, 0, 0, 3)), [2]uint32{16, 1}, [2]uint32{64, 1})), oom, "alloc"},
	}
}

// verdict is the code and message of a *RemoteError; "ok" and "" for
// none.
func verdict(t *testing.T, err error) (string, string) {
	t.Helper()
	if err == nil {
		return "ok", ""
	}
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re, "not a verdict: %v", err)
	return re.Code, re.Message
}

var bufferID = regexp.MustCompile(`buffer [0-9]+`)

func pathOf(msg string) string {
	if i := strings.Index(msg, ": "); i >= 0 {
		return msg[:i]
	}
	return msg
}

// TestConformanceCompile sends every bad program of the table to the C++
// server: each gets the code of its rule and names its field path.
func TestConformanceCompile(t *testing.T) {
	c := startEmu(t)
	ctx := context.Background()
	compile := func(p ttruntime.CompileRequest) error {
		r, err := c.Compile(ctx, p)
		if err == nil {
			require.NoError(t, c.Release(ctx, ttruntime.ProgramRequest{Program: r.Program}))
		}
		return err
	}
	require.NoError(t, compile(goodProgram()), "the reference program is good")
	for _, tc := range badPrograms() {
		t.Run(tc.what, func(t *testing.T) {
			p := goodProgram()
			tc.edit(&p)
			code, msg := verdict(t, compile(p))
			require.Equal(t, tc.code, code, msg)
			require.Equal(t, tc.path, pathOf(msg), msg)
		})
	}
	require.NoError(t, c.Ping(ctx), "the server lives on")
}

// TestConformanceEveryDType: a buffer param may have every element type the
// driver has, by its name, and a variable passed as an arg word every type
// of 32 bits or less (the names the server checks against are
// driver.DType's).
func TestConformanceEveryDType(t *testing.T) {
	c := startEmu(t)
	ctx := context.Background()
	for _, dt := range driver.AllDTypes() {
		p := goodProgram()
		p.Params[0].DType = dt.String()
		if dt.Size() <= 4 { // a variable passed as an arg word is 32 bits at most
			p.Params[2].DType = dt.String()
		}
		r, err := c.Compile(ctx, p)
		require.NoError(t, err, dt.String())
		require.NoError(t, c.Release(ctx, ttruntime.ProgramRequest{Program: r.Program}))
	}
}

func TestConformanceAlloc(t *testing.T) {
	c := startEmu(t)
	info := c.Info()
	ctx := context.Background()
	for _, tc := range badAllocs(info) {
		t.Run(tc.what, func(t *testing.T) {
			r, err := c.Alloc(ctx, tc.req)
			if err == nil {
				require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: r.Buffer}))
			}
			code, msg := verdict(t, err)
			require.Equal(t, tc.code, code, msg)
			require.Equal(t, tc.path, pathOf(msg), msg)
		})
	}
	// Good specs of every layout allocate.
	for _, req := range []ttruntime.AllocRequest{
		{Size: 4},
		{Size: 1000, BufferSpec: ttruntime.BufferSpec{PageSize: 4}},
		{Size: 64 * 64, BufferSpec: ttruntime.BufferSpec{PageSize: 64, Placement: "l1"}},
		{Size: 32 * 64, BufferSpec: ttruntime.BufferSpec{PageSize: 64, Placement: "l1", Layout: "height_sharded",
			Shard: &ttruntime.ShardSpec{Cores: set(ttruntime.Rect(0, 0, 0, 3)), Shape: [2]uint32{2, 4}, Tensor: [2]uint32{8, 4}}}},
		{Size: 7 * 4 * 512, BufferSpec: ttruntime.BufferSpec{PageSize: 512, Layout: "block_sharded",
			Shard: &ttruntime.ShardSpec{Cores: set(ttruntime.Rect(0, 2, 0, 9)), Shape: [2]uint32{2, 3}, Tensor: [2]uint32{7, 4}, Orientation: "col_major"}}},
	} {
		r, err := c.Alloc(ctx, req)
		require.NoError(t, err, "%+v", req)
		require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: r.Buffer}))
	}
}

// TestConformanceRun runs the reference program, then bad runs of it, on
// the C++ server: each gets the code and names the field path of its rule.
func TestConformanceRun(t *testing.T) {
	c := startEmu(t)
	ctx := context.Background()
	p := goodProgram()
	specs := map[string]ttruntime.AllocRequest{
		"a":        {Size: 10 * 2048, BufferSpec: p.Buffers[0].BufferSpec},
		"a short":  {Size: 9 * 2048, BufferSpec: p.Buffers[0].BufferSpec},
		"a 1k":     {Size: 10 * 2048, BufferSpec: ttruntime.BufferSpec{PageSize: 1024}},
		"b":        {Size: 4096},
		"l1":       {Size: 32 * 64, BufferSpec: p.Buffers[1].BufferSpec},
		"l1 small": {Size: 32 * 64, BufferSpec: ttruntime.BufferSpec{PageSize: 64, Placement: "l1"}},
	}
	type bufs map[string]ttruntime.AllocReply
	b := bufs{}
	for name, req := range specs {
		r, err := c.Alloc(ctx, req)
		require.NoError(t, err, name)
		b[name] = r
	}
	cases := []struct {
		what string
		args func(b bufs) []ttruntime.RunArg
		code string
		path string
	}{
		{"good", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a"].Buffer), ttruntime.BufferArg(b["b"].Buffer), ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1"].Buffer)}
		}, "ok", ""},
		{"too few args", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a"].Buffer)}
		}, ttruntime.CodeInvalidArgument, "run.args"},
		{"a value for a buffer", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.ValueArg(1), ttruntime.BufferArg(b["b"].Buffer), ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1"].Buffer)}
		}, ttruntime.CodeInvalidArgument, "run.args[0]"},
		{"neither buffer nor value", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a"].Buffer), {}, ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1"].Buffer)}
		}, ttruntime.CodeBadRequest, "run.args[1]"},
		{"unknown buffer", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a"].Buffer), ttruntime.BufferArg(987654), ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1"].Buffer)}
		}, ttruntime.CodeUnknownBuffer, "run.args[1]"},
		{"buffer not as declared", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a 1k"].Buffer), ttruntime.BufferArg(b["b"].Buffer), ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1"].Buffer)}
		}, ttruntime.CodeInvalidArgument, "run.args[0]"},
		{"L1 buffer not as declared", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a"].Buffer), ttruntime.BufferArg(b["b"].Buffer), ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1 small"].Buffer)}
		}, ttruntime.CodeInvalidArgument, "run.args[3]"},
		{"bank page past the buffer", func(b bufs) []ttruntime.RunArg {
			return []ttruntime.RunArg{ttruntime.BufferArg(b["a short"].Buffer), ttruntime.BufferArg(b["b"].Buffer), ttruntime.ValueArg(3), ttruntime.BufferArg(b["l1"].Buffer)}
		}, ttruntime.CodeInvalidArgument, "compile.kernels[0].runtime_args[0].args[3].page"},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			pr, err := c.Compile(ctx, p)
			require.NoError(t, err)
			_, err = c.Run(ctx, ttruntime.RunRequest{Program: pr.Program, Args: tc.args(b)})
			require.NoError(t, c.Release(ctx, ttruntime.ProgramRequest{Program: pr.Program}))
			code, msg := verdict(t, err)
			require.Equal(t, tc.code, code, msg)
			require.Equal(t, tc.path, pathOf(msg), msg)
		})
	}
}

var requestID = regexp.MustCompile(`request [0-9]+`)

// remoteDependency is the message of a run answered dependency_failed
// because the bad run it names failed: the index is the bad run's place
// in the `after` sent, which is 0 or 1 because the client leaves out a
// ticket that has already succeeded (the good run may have been answered
// before the dependent run was sent).
var remoteDependency = regexp.MustCompile(`^run\.after\[[01]\]: request [0-9]+ failed \(unknown_buffer\); this request was not executed$`)

// dependencyOutcome is the outcome of the run that names a good run and a
// bad one in after, in a form that does not depend on when the replies
// came: either the runtime answered dependency_failed, naming the bad run,
// or the bad run had already failed when the client sent it, and the
// client failed it at once with ErrDependency without sending it.
func dependencyOutcome(t *testing.T, err error) (o struct{ code, msg string }) {
	t.Helper()
	require.ErrorIs(t, err, backends.ErrDependency)
	o.code, o.msg = ttruntime.CodeDependencyFailed, "the bad run named in after failed"
	// A local failure wraps the failed request's own error, which may be a
	// RemoteError too (the bad run's unknown_buffer): only the runtime's
	// answer has the dependency_failed code.
	var re *ttruntime.RemoteError
	if !errors.As(err, &re) || re.Code != ttruntime.CodeDependencyFailed {
		if re != nil {
			require.Equal(t, ttruntime.CodeUnknownBuffer, re.Code, "a local dependency failure wraps the bad run's own error: %v", err)
		}
		require.Contains(t, err.Error(), "(run) failed", "a local dependency failure names the failed request")
		return o
	}
	require.Regexp(t, remoteDependency, re.Message)
	return o
}

// TestConformancePipelinedRuns pipelines a write, runs and a read to the
// C++ server (whose emulator runs the kernels) without waiting between
// them: each request is answered in order; a run that fails in the middle
// (an unknown buffer) carries its error, a run named after it is not
// executed (dependency_failed), and the independent requests after it
// succeed. The run named after the failed one goes out while the runs
// before it are in flight, but its dependency may have failed already: then
// the client fails it at once without sending it. Both ways are checked:
// in mock mode the runtime holds the first write (request 4: init 1,
// compile 2, alloc 3) until everything is sent, or the good run after the
// bad one (request 7) until the bad one has failed. Every way answers with
// the same codes and messages.
func TestConformancePipelinedRuns(t *testing.T) {
	ctx := context.Background()
	const n = 4096
	type outcome = struct{ code, msg string }
	var first []outcome
	for _, j := range []struct {
		name string
		c    *ttruntime.Client
		// held: the mock holds request 4 (all in flight) or 7 (the bad
		// run has failed before the run after it is sent).
		held int
	}{
		{"c++", startEmu(t), 0},
		{"mock, all in flight", start(t, mockConfig(t, "hold-at=4")), 4},
		{"mock, the dependency failed first", start(t, mockConfig(t, "hold-at=7")), 7},
	} {
		c := j.c
		pr, err := c.Compile(ctx, emptyProgram())
		require.NoError(t, err, j.name)
		buf, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: n})
		require.NoError(t, err, j.name)
		seg := newSegment(t, 2*n)
		mem := seg.Bytes()
		for i := range n {
			mem[i] = byte(i * 7)
		}
		good := ttruntime.RunRequest{Program: pr.Program, Args: []ttruntime.RunArg{ttruntime.BufferArg(buf.Buffer), ttruntime.ValueArg(3)}}
		bad := ttruntime.RunRequest{Program: pr.Program, Args: []ttruntime.RunArg{ttruntime.BufferArg(987654), ttruntime.ValueArg(3)}}
		xfer := func(off uint64) ttruntime.TransferRequest {
			return ttruntime.TransferRequest{Buffer: buf.Buffer, Segment: seg.Name(), SegmentOffset: off, Length: n}
		}
		// The order in which the replies were handled. A ticket that
		// fails at once when sent (its dependency has already failed) is
		// no reply: it may come before the replies of the tickets before it.
		var order []int
		var mu sync.Mutex
		note := func(i int) func(error) {
			return func(err error) {
				var re *ttruntime.RemoteError
				if i == 4 && !(errors.As(err, &re) && re.Code == ttruntime.CodeDependencyFailed) {
					return // failed at once, not answered
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			}
		}
		var ts []*ttruntime.Ticket
		add := func(tk *ttruntime.Ticket, err error) *ttruntime.Ticket {
			require.NoError(t, err, j.name)
			ts = append(ts, tk)
			return tk
		}
		w := add(c.SendWrite(ctx, xfer(0), nil, note(0)))
		run1 := add(c.SendRun(ctx, good, nil, []*ttruntime.Ticket{w}, note(1)))
		failed := add(c.SendRun(ctx, bad, nil, nil, note(2)))
		add(c.SendRun(ctx, good, nil, nil, note(3)))
		if j.held == 7 {
			<-failed.Done() // and ticket 3 is held
		}
		add(c.SendRun(ctx, good, nil, []*ttruntime.Ticket{run1, failed}, note(4)))
		add(c.SendRead(ctx, xfer(n), []*ttruntime.Ticket{run1}, note(5)))
		add(c.Send(ctx, ttruntime.CmdPing, nil, nil, note(6)))
		switch j.held {
		case 4:
			require.Equal(t, len(ts), c.InFlight(), "every request was in flight together")
			release(t, c)
		case 7:
			mu.Lock()
			answered := len(order)
			mu.Unlock()
			require.Equal(t, 3, answered, "tickets 0-2 were answered, 3 is held")
			release(t, c)
		}
		var got []outcome
		for i, tk := range ts {
			err := tk.Wait(ctx)
			if i == 4 {
				got = append(got, dependencyOutcome(t, err))
				continue
			}
			code, msg := verdict(t, err)
			got = append(got, outcome{code, requestID.ReplaceAllString(bufferID.ReplaceAllString(msg, "buffer N"), "request N")})
		}
		inOrder := []int{0, 1, 2, 3, 4, 5, 6}
		var re *ttruntime.RemoteError
		if !errors.As(ts[4].Err(), &re) || re.Code != ttruntime.CodeDependencyFailed {
			inOrder = []int{0, 1, 2, 3, 5, 6} // ticket 4 failed at once when sent
		}
		if j.held == 7 {
			require.Len(t, inOrder, 6, "ticket 4 was failed when sent")
		}
		require.Equal(t, inOrder, order, "%s: replies handled in request order", j.name)
		require.Equal(t, mem[:n], mem[n:], "%s: the read after the runs holds the write before them", j.name)
		want := []string{"ok", "ok", ttruntime.CodeUnknownBuffer, "ok", ttruntime.CodeDependencyFailed, "ok", "ok"}
		for i, o := range got {
			require.Equal(t, want[i], o.code, "%s: request %d: %s", j.name, i, o.msg)
		}
		require.ErrorIs(t, ts[4].Err(), backends.ErrDependency)
		if first == nil {
			first = got
		} else {
			require.Equal(t, first, got, "%s answers otherwise than the emulator", j.name)
		}
		// A ticket after one that has already failed is not sent at all.
		tk, err := c.SendRun(ctx, good, nil, []*ttruntime.Ticket{failed}, nil)
		require.NoError(t, err)
		require.ErrorIs(t, tk.Err(), backends.ErrDependency)
		require.NoError(t, c.Ping(ctx), "%s: in step after the pipeline", j.name)
		require.NoError(t, c.Release(ctx, ttruntime.ProgramRequest{Program: pr.Program}))
		require.NoError(t, c.Free(ctx, ttruntime.BufferRequest{Buffer: buf.Buffer}))
	}
}
