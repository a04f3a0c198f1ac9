// Package mockrt is a Go implementation of the tt-runtime protocol for tests
// and benchmarks: exact buffer semantics through shm, programs recorded and
// checked but not executed, and faults injected on demand. The
// zyx-tt-mockrt command and test binaries (as helper processes) run it.
//
// Run semantics: run checks the program, grid and arguments exactly as a
// real runtime must, moves no data, and reports elapsed_ns = rows*cols*1000
// when timed. A section source containing "#error" fails compile with
// compile_error and that line as the diagnostics.
package mockrt

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// EnvFlags holds extra flags, split on spaces, read after the command line.
// Tests that start the mock through a driver (which passes no arguments)
// configure it with this variable.
const EnvFlags = "ZYX_TT_MOCKRT_FLAGS"

// Options configure the mock; see Main's flags.
type Options struct {
	Board         string
	Arch          string
	Rows, Cols    uint
	HarvestRows   string
	Banks         uint
	BankSize      uint64
	L1Size        uint64
	L1Base        uint64
	Protocol      int
	CrashAt       int
	HangAt        int
	IgnoreTerm    bool
	WrongIDAt     int
	GarbageAt     int
	OversizeAt    int
	ErrorAt       int
	ErrorCode     string
	Noise         bool
	Slow          time.Duration
	StderrOnStart string
	CloseStdoutAt int
	Flood         int
	OrphanAt      int
}

func parse(args []string, stderr io.Writer) (*Options, error) {
	o := &Options{}
	fs := flag.NewFlagSet("zyx-tt-mockrt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Board, "board", "", "board preset reported by init (default: the one init asks for, else n150)")
	fs.StringVar(&o.Arch, "arch", "", "arch reported by init (default: from the board)")
	fs.UintVar(&o.Rows, "rows", 0, "worker grid rows before harvesting (default: from the board)")
	fs.UintVar(&o.Cols, "cols", 0, "worker grid cols (default: from the board)")
	fs.StringVar(&o.HarvestRows, "harvest-rows", "", "comma-separated physical rows that are harvested")
	fs.UintVar(&o.Banks, "banks", 0, "DRAM banks (default: from the board)")
	fs.Uint64Var(&o.BankSize, "bank-size", 0, "bytes per DRAM bank (default: from the board)")
	fs.Uint64Var(&o.L1Size, "l1", 1464*1024, "L1 bytes per core")
	fs.Uint64Var(&o.L1Base, "l1-base", 100*1024, "first L1 byte kernels may use")
	fs.IntVar(&o.Protocol, "protocol", ttruntime.ProtocolVersion, "protocol version to speak")
	fs.IntVar(&o.CrashAt, "crash-at", 0, "exit with status 3, without a reply, on the Nth command")
	fs.IntVar(&o.HangAt, "hang-at", 0, "stop answering from the Nth command on")
	fs.BoolVar(&o.IgnoreTerm, "ignore-term", false, "ignore SIGTERM")
	fs.IntVar(&o.WrongIDAt, "wrong-id-at", 0, "answer the Nth command with a wrong id")
	fs.IntVar(&o.GarbageAt, "garbage-at", 0, "answer the Nth command with a garbage line")
	fs.IntVar(&o.OversizeAt, "oversize-at", 0, "answer the Nth command with a line over 64 MiB")
	fs.IntVar(&o.ErrorAt, "error-at", 0, "answer the Nth command with an error reply")
	fs.StringVar(&o.ErrorCode, "error-code", ttruntime.CodeInternal, "code of the injected error reply")
	fs.BoolVar(&o.Noise, "noise", false, "write a log line to stdout before every reply")
	fs.DurationVar(&o.Slow, "slow", 0, "delay before every reply")
	fs.StringVar(&o.StderrOnStart, "stderr", "", "write this line to stderr at start")
	fs.IntVar(&o.CloseStdoutAt, "close-stdout-at", 0, "close stdout (but keep running) on the Nth command")
	fs.IntVar(&o.Flood, "flood", 0, "write this many bytes of log lines to stdout before reading each command")
	fs.IntVar(&o.OrphanAt, "orphan-at", 0, "on the Nth command start a sleeping grandchild that keeps stdout and stderr open, then exit with status 3")
	all := append([]string(nil), args...)
	all = append(all, strings.Fields(os.Getenv(EnvFlags))...)
	if err := fs.Parse(all); err != nil {
		return nil, err
	}
	return o, nil
}

type preset struct {
	arch              string
	rows, cols, banks uint
	bankSize          uint64
}

// Presets follow the shapes of the real chips; the sizes are what matters
// to the driver (grid for launches, banks × bank size for the pool).
var presets = map[string]preset{
	"n150":  {"wormhole_b0", 8, 8, 12, 1 << 30},
	"n300":  {"wormhole_b0", 8, 8, 12, 1 << 30},
	"p100a": {"blackhole", 10, 13, 7, 4 << 30},
	"p150a": {"blackhole", 10, 13, 8, 4 << 30},
	"p150b": {"blackhole", 10, 13, 8, 4 << 30},
	"p150c": {"blackhole", 10, 13, 8, 4 << 30},
	"p300a": {"blackhole", 10, 13, 8, 4 << 30},
	"p300b": {"blackhole", 10, 13, 8, 4 << 30},
	"p300c": {"blackhole", 10, 13, 8, 4 << 30},
}

type buffer struct {
	data     []byte
	address  uint64
	pageSize uint64
}

type program struct {
	req ttruntime.CompileRequest
}

type server struct {
	o        *Options
	out      *bufio.Writer
	outFile  io.Writer
	errw     io.Writer
	n        int
	init     *ttruntime.InitReply
	bufs     map[uint64]*buffer
	nextBuf  uint64
	nextAddr uint64
	used     uint64
	progs    map[uint64]*program
	nextProg uint64
	segs     map[string]*shm.Segment
	scratch  [24]byte
}

// Main runs the mock on stdin and stdout until exit or end of input and
// returns the process exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		return 2
	}
	if o.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if o.StderrOnStart != "" {
		fmt.Fprintln(stderr, o.StderrOnStart)
	}
	s := &server{
		o: o, out: bufio.NewWriterSize(stdout, 64<<10), outFile: stdout, errw: stderr,
		bufs: map[uint64]*buffer{}, nextBuf: 1, nextAddr: 0x10000,
		progs: map[uint64]*program{}, nextProg: 1, segs: map[string]*shm.Segment{},
	}
	defer s.unmapAll()
	br := bufio.NewReaderSize(stdin, 64<<10)
	for {
		s.flood()
		line, err := readLine(br)
		if errors.Is(err, errTooLong) {
			s.n++
			s.replyErr(0, ttruntime.CodeLineTooLong, "request line over 64 MiB")
			continue
		}
		if err != nil {
			return 0 // end of input: release everything and exit
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		s.n++
		if code, done := s.handle(line); done {
			return code
		}
	}
}

var errTooLong = errors.New("line too long")

// readLine returns the next line; it is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	if err == nil {
		return frag, nil // the whole line was buffered: no copy
	}
	buf := append([]byte(nil), frag...)
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, frag...)
			if len(buf) > ttruntime.MaxLineBytes+1 {
				tooLong, buf = true, nil
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errTooLong
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return nil, err
		}
	}
}

type request struct {
	ID  *uint64 `json:"id"`
	Cmd string  `json:"cmd"`
}

// fastRequest reads the commonest request, exactly {"id":N,"cmd":"ping"}
// (or exit), without the decoder; anything else goes to the decoder.
func fastRequest(line []byte) (request, bool) {
	const head, mid = `{"id":`, `,"cmd":"`
	line = bytes.TrimSpace(line)
	if !bytes.HasPrefix(line, []byte(head)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return request{}, false
	}
	rest := line[len(head) : len(line)-2]
	i := bytes.Index(rest, []byte(mid))
	if i <= 0 || i > 20 || (rest[0] == '0') {
		return request{}, false
	}
	var id uint64
	for _, d := range rest[:i] {
		if d < '0' || d > '9' || id > (math.MaxUint64-uint64(d-'0'))/10 {
			return request{}, false
		}
		id = id*10 + uint64(d-'0')
	}
	var cmd string
	switch string(rest[i+len(mid):]) {
	case ttruntime.CmdPing:
		cmd = ttruntime.CmdPing
	case ttruntime.CmdExit:
		cmd = ttruntime.CmdExit
	default:
		return request{}, false
	}
	return request{ID: &id, Cmd: cmd}, true
}

// handle answers one request line; done reports that the process should
// exit with code.
func (s *server) handle(line []byte) (code int, done bool) {
	o := s.o
	if o.CrashAt == s.n {
		fmt.Fprintf(s.errw, "mockrt: crashing on command %d as asked\n", s.n)
		os.Exit(3)
	}
	if o.HangAt != 0 && s.n >= o.HangAt {
		fmt.Fprintf(s.errw, "mockrt: hanging on command %d as asked\n", s.n)
		select {}
	}
	if o.OrphanAt == s.n {
		s.orphan()
		fmt.Fprintf(s.errw, "mockrt: exiting on command %d, leaving a grandchild on stdout, as asked\n", s.n)
		os.Exit(3)
	}
	if o.CloseStdoutAt == s.n {
		if c, ok := s.outFile.(io.Closer); ok {
			_ = c.Close()
		}
		select {}
	}
	req, fast := fastRequest(line)
	if fast {
		// decoded without the decoder
	} else if err := json.Unmarshal(line, &req); err != nil || req.ID == nil || *req.ID == 0 {
		msg := "request without a usable id"
		if err != nil {
			msg = "malformed JSON: " + err.Error()
		}
		s.replyErr(0, ttruntime.CodeBadRequest, msg)
		return 0, false
	}
	id := *req.ID
	if o.Slow > 0 {
		time.Sleep(o.Slow)
	}
	if o.Noise {
		fmt.Fprintf(s.out, "UMD | info | noise before reply to command %d\n", s.n)
	}
	switch s.n {
	case o.WrongIDAt:
		s.reply(id+1000, nil)
		return 0, false
	case o.GarbageAt:
		fmt.Fprintf(s.out, "{\"id\": %d, \"ok\": tru\n", id)
		s.flush()
		return 0, false
	case o.OversizeAt:
		s.out.WriteString(`{"id":`)
		s.out.WriteString(strconv.FormatUint(id, 10))
		s.out.WriteString(`,"ok":true,"pad":"`)
		pad := bytes.Repeat([]byte{'x'}, 64<<10)
		for n := 0; n < ttruntime.MaxLineBytes+16; n += len(pad) {
			s.out.Write(pad) // in pieces: the line need not sit in memory whole
		}
		s.out.WriteString("\"}\n")
		s.flush()
		return 0, false
	case o.ErrorAt:
		s.replyErr(id, o.ErrorCode, fmt.Sprintf("injected error on command %d", s.n))
		return 0, false
	}
	if s.init == nil && req.Cmd != ttruntime.CmdInit && req.Cmd != ttruntime.CmdPing && req.Cmd != ttruntime.CmdExit {
		s.replyErr(id, ttruntime.CodeNotInitialized, req.Cmd+" before init")
		return 0, false
	}
	switch req.Cmd {
	case ttruntime.CmdInit:
		s.cmdInit(id, line)
	case ttruntime.CmdPing:
		s.reply(id, nil)
	case ttruntime.CmdMap:
		var r ttruntime.SegmentRequest
		if s.decode(id, line, &r) {
			if _, err := s.segment(r.Segment); err != nil {
				s.replyErr(id, ttruntime.CodeShmError, err.Error())
			} else {
				s.reply(id, nil)
			}
		}
	case ttruntime.CmdUnmap:
		var r ttruntime.SegmentRequest
		if s.decode(id, line, &r) {
			if seg, ok := s.segs[r.Segment]; ok {
				_ = seg.Close()
				delete(s.segs, r.Segment)
			}
			s.reply(id, nil)
		}
	case ttruntime.CmdAlloc:
		s.cmdAlloc(id, line)
	case ttruntime.CmdFree:
		var r ttruntime.BufferRequest
		if s.decode(id, line, &r) {
			b, ok := s.bufs[r.Buffer]
			if !ok {
				s.replyErr(id, ttruntime.CodeUnknownBuffer, fmt.Sprintf("buffer %d does not exist", r.Buffer))
				break
			}
			s.used -= uint64(len(b.data))
			delete(s.bufs, r.Buffer)
			s.reply(id, nil)
		}
	case ttruntime.CmdWrite, ttruntime.CmdRead:
		s.cmdTransfer(id, req.Cmd, line)
	case ttruntime.CmdCompile:
		s.cmdCompile(id, line)
	case ttruntime.CmdRun:
		s.cmdRun(id, line)
	case ttruntime.CmdRelease:
		var r ttruntime.ProgramRequest
		if s.decode(id, line, &r) {
			if _, ok := s.progs[r.Program]; !ok {
				s.replyErr(id, ttruntime.CodeUnknownProgram, fmt.Sprintf("program %d does not exist", r.Program))
				break
			}
			delete(s.progs, r.Program)
			s.reply(id, nil)
		}
	case ttruntime.CmdExit:
		s.reply(id, nil)
		return 0, true
	default:
		s.replyErr(id, ttruntime.CodeUnknownCommand, fmt.Sprintf("unknown command %q", req.Cmd))
	}
	return 0, false
}

func (s *server) decode(id uint64, line []byte, v any) bool {
	if err := json.Unmarshal(line, v); err != nil {
		s.replyErr(id, ttruntime.CodeBadRequest, err.Error())
		return false
	}
	return true
}

func (s *server) flush() { _ = s.out.Flush() }

// flood writes o.Flood bytes of log lines to stdout, as a driver that logs
// to stdout between commands would; it blocks while nobody reads them.
func (s *server) flood() {
	if s.o.Flood <= 0 {
		return
	}
	line := "UMD | info | flooding stdout between commands " + strings.Repeat(".", 60) + "\n"
	for n := 0; n < s.o.Flood; n += len(line) {
		s.out.WriteString(line)
	}
	s.flush()
}

// orphan starts a grandchild that sleeps holding stdout and stderr, so
// they stay open after this process exits.
func (s *server) orphan() {
	cmd := exec.Command("sleep", "3")
	if f, ok := s.outFile.(*os.File); ok {
		cmd.Stdout = f
	}
	if f, ok := s.errw.(*os.File); ok {
		cmd.Stderr = f
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(s.errw, "mockrt: cannot start the grandchild: %v\n", err)
	}
}

// reply writes {"id":id,"ok":true,...fields of result}.
func (s *server) reply(id uint64, result any) {
	s.out.WriteString(`{"id":`)
	s.out.Write(strconv.AppendUint(s.scratch[:0], id, 10))
	s.out.WriteString(`,"ok":true`)
	if result != nil {
		b, err := json.Marshal(result)
		if err == nil && len(b) > 2 {
			s.out.WriteByte(',')
			s.out.Write(b[1 : len(b)-1])
		}
	}
	s.out.WriteString("}\n")
	s.flush()
}

func (s *server) replyErr(id uint64, code, msg string) {
	b, _ := json.Marshal(struct {
		ID    uint64              `json:"id"`
		OK    bool                `json:"ok"`
		Error ttruntime.ErrorBody `json:"error"`
	}{id, false, ttruntime.ErrorBody{Code: code, Message: msg}})
	s.out.Write(b)
	s.out.WriteByte('\n')
	s.flush()
}

func (s *server) cmdInit(id uint64, line []byte) {
	var r ttruntime.InitRequest
	if !s.decode(id, line, &r) {
		return
	}
	if r.Protocol != s.o.Protocol {
		s.replyErr(id, ttruntime.CodeVersionMismatch, fmt.Sprintf("this runtime speaks protocol %d, the driver asked for %d", s.o.Protocol, r.Protocol))
		return
	}
	board := s.o.Board
	if board == "" {
		board = r.Board
	}
	if board == "" {
		board = "n150"
	}
	p, ok := presets[board]
	if !ok {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("unknown board preset %q", board))
		return
	}
	if s.o.Arch != "" {
		p.arch = s.o.Arch
	}
	if s.o.Rows != 0 {
		p.rows = s.o.Rows
	}
	if s.o.Cols != 0 {
		p.cols = s.o.Cols
	}
	if s.o.Banks != 0 {
		p.banks = s.o.Banks
	}
	if s.o.BankSize != 0 {
		p.bankSize = s.o.BankSize
	}
	grid := ttruntime.Grid{Rows: uint32(p.rows), Cols: uint32(p.cols)}
	for _, f := range strings.Split(s.o.HarvestRows, ",") {
		if f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 32)
		if err != nil || v >= 64 || grid.Rows == 0 {
			continue
		}
		grid.HarvestedRows = append(grid.HarvestedRows, uint32(v))
		grid.HarvestMask |= 1 << v
		grid.Rows--
	}
	runtime := "emu"
	if r.Layer == "metal" {
		runtime = "metal" // the mock pretends, so card paths can be tested
	}
	s.init = &ttruntime.InitReply{
		Protocol: s.o.Protocol, Runtime: runtime, Version: "mockrt", Arch: p.arch, Board: board, Chip: r.Chip,
		Grid: grid,
		DRAM: ttruntime.DRAM{Banks: uint32(p.banks), BankSize: p.bankSize, Alignment: 32},
		L1:   ttruntime.L1{Size: s.o.L1Size, UnreservedBase: s.o.L1Base},
	}
	s.reply(id, s.init)
}

func (s *server) cmdAlloc(id uint64, line []byte) {
	var r ttruntime.AllocRequest
	if !s.decode(id, line, &r) {
		return
	}
	if r.PageSize == 0 {
		r.PageSize = ttruntime.DefaultPageSize
	}
	if r.Size == 0 {
		s.replyErr(id, ttruntime.CodeInvalidArgument, "size must be positive")
		return
	}
	total := s.init.DRAM.Total()
	if r.Size > total-s.used || r.Size > 1<<40 {
		s.replyErr(id, ttruntime.CodeOutOfMemory, fmt.Sprintf("%d bytes asked, %d free", r.Size, total-s.used))
		return
	}
	b := &buffer{data: make([]byte, r.Size), address: s.nextAddr, pageSize: r.PageSize}
	s.nextAddr += (r.Size + r.PageSize - 1) / r.PageSize * r.PageSize
	s.used += r.Size
	bid := s.nextBuf
	s.nextBuf++
	s.bufs[bid] = b
	s.reply(id, ttruntime.AllocReply{Buffer: bid, Address: b.address})
}

func (s *server) segment(name string) (*shm.Segment, error) {
	if seg, ok := s.segs[name]; ok {
		return seg, nil
	}
	seg, err := shm.Open(name)
	if err != nil {
		return nil, err
	}
	s.segs[name] = seg
	return seg, nil
}

func (s *server) unmapAll() {
	for n, seg := range s.segs {
		_ = seg.Close()
		delete(s.segs, n)
	}
}

func inRange(off, n, size uint64) bool { return off <= size && n <= size-off }

func (s *server) cmdTransfer(id uint64, cmd string, line []byte) {
	var r ttruntime.TransferRequest
	if !s.decode(id, line, &r) {
		return
	}
	b, ok := s.bufs[r.Buffer]
	if !ok {
		s.replyErr(id, ttruntime.CodeUnknownBuffer, fmt.Sprintf("buffer %d does not exist", r.Buffer))
		return
	}
	if !inRange(r.Offset, r.Length, uint64(len(b.data))) {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("range [%d,+%d) outside buffer %d of %d bytes", r.Offset, r.Length, r.Buffer, len(b.data)))
		return
	}
	seg, err := s.segment(r.Segment)
	if err != nil {
		s.replyErr(id, ttruntime.CodeShmError, err.Error())
		return
	}
	mem := seg.Bytes()
	if !inRange(r.SegmentOffset, r.Length, uint64(len(mem))) {
		s.replyErr(id, ttruntime.CodeShmError, fmt.Sprintf("range [%d,+%d) outside segment %s of %d bytes", r.SegmentOffset, r.Length, r.Segment, len(mem)))
		return
	}
	dev := b.data[r.Offset : r.Offset+r.Length]
	host := mem[r.SegmentOffset : r.SegmentOffset+r.Length]
	if cmd == ttruntime.CmdWrite {
		copy(dev, host)
	} else {
		copy(host, dev)
	}
	s.reply(id, nil)
}

var formats = map[string]bool{"Float32": true, "Float16_b": true, "Float16": true, "Int32": true, "UInt32": true, "UInt16": true, "UInt8": true}

func (s *server) cmdCompile(id uint64, line []byte) {
	var r ttruntime.CompileRequest
	if !s.decode(id, line, &r) {
		return
	}
	if len(r.CBs) > 32 {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("%d circular buffers, at most 32", len(r.CBs)))
		return
	}
	seen := map[uint8]bool{}
	var l1 uint64
	for _, cb := range r.CBs {
		if cb.Index > 31 || seen[cb.Index] || !formats[cb.Format] || cb.PageBytes == 0 || cb.Pages == 0 {
			s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("bad circular buffer %+v", cb))
			return
		}
		seen[cb.Index] = true
		l1 += uint64(cb.PageBytes) * uint64(cb.Pages)
	}
	if l1 > s.init.L1.Usable() {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("circular buffers need %d bytes of L1, %d usable", l1, s.init.L1.Usable()))
		return
	}
	for _, sc := range []struct {
		name string
		sec  *ttruntime.Section
	}{{"reader", &r.Reader}, {"compute", &r.Compute}, {"writer", &r.Writer}} {
		name, sec := sc.name, sc.sec
		src, err := sec.Text()
		if err != nil {
			s.replyErr(id, ttruntime.CodeBadRequest, name+": source_b64: "+err.Error())
			return
		}
		for _, l := range strings.Split(src, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#error") {
				s.replyErr(id, ttruntime.CodeCompileError, name+": "+strings.TrimSpace(l))
				return
			}
		}
		for _, layout := range [][]ttruntime.LayoutEntry{sec.CompileArgs, sec.RuntimeArgs, sec.CommonArgs} {
			for _, e := range layout {
				if msg := checkEntry(e, r.Params); msg != "" {
					s.replyErr(id, ttruntime.CodeInvalidArgument, name+": "+msg)
					return
				}
			}
		}
	}
	pid := s.nextProg
	s.nextProg++
	s.progs[pid] = &program{req: r}
	s.reply(id, ttruntime.ProgramReply{Program: pid})
}

func checkEntry(e ttruntime.LayoutEntry, params []ttruntime.ParamDesc) string {
	needs := ""
	switch e.Kind {
	case "const":
		if e.Value == nil {
			return "const layout entry without a value"
		}
		return ""
	case "core_row", "core_col", "core_index", "num_cores":
		return ""
	case "param":
		needs = "variable"
	case "buffer_addr", "buffer_size", "buffer_pages", "page_size", "accessor":
		needs = "buffer"
	default:
		return fmt.Sprintf("unknown layout kind %q", e.Kind)
	}
	if e.Param == nil || *e.Param < 0 || *e.Param >= len(params) {
		return fmt.Sprintf("layout %s names no param", e.Kind)
	}
	isVar := params[*e.Param].Kind == "variable"
	if (needs == "variable") != isVar {
		return fmt.Sprintf("layout %s names param %d, which is not a %s", e.Kind, *e.Param, needs)
	}
	return ""
}

func (s *server) cmdRun(id uint64, line []byte) {
	var r ttruntime.RunRequest
	if !s.decode(id, line, &r) {
		return
	}
	p, ok := s.progs[r.Program]
	if !ok {
		s.replyErr(id, ttruntime.CodeUnknownProgram, fmt.Sprintf("program %d does not exist", r.Program))
		return
	}
	g := s.init.Grid
	if r.Grid[0] == 0 || r.Grid[1] == 0 || r.Grid[0] > g.Rows || r.Grid[1] > g.Cols {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("grid %v outside the chip's %dx%d", r.Grid, g.Rows, g.Cols))
		return
	}
	if len(r.Args) != len(p.req.Params) {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("%d args for %d params", len(r.Args), len(p.req.Params)))
		return
	}
	for i, a := range r.Args {
		isVar := p.req.Params[i].Kind == "variable"
		switch {
		case isVar && a.Value == nil, !isVar && a.Buffer == nil:
			s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("arg %d does not match param kind %s", i, p.req.Params[i].Kind))
			return
		case !isVar:
			if _, ok := s.bufs[*a.Buffer]; !ok {
				s.replyErr(id, ttruntime.CodeUnknownBuffer, fmt.Sprintf("arg %d: buffer %d does not exist", i, *a.Buffer))
				return
			}
		}
	}
	var res ttruntime.RunReply
	if r.Timed {
		res.ElapsedNS = uint64(r.Grid[0]) * uint64(r.Grid[1]) * 1000
	}
	s.reply(id, res)
}
