// Package mockrt is a Go implementation of the tt-runtime protocol (v2)
// for tests and benchmarks: exact buffer semantics through shm (every
// layout is stored as its plain bytes), programs checked with the driver's
// own validator (ttruntime.ValidateCompile, the C++ server's rules) and
// recorded but not executed, and faults injected on demand. The
// zyx-tt-mockrt command and test binaries (as helper processes) run it.
//
// Run semantics: run checks the program and its arguments as the runtime
// does (ttruntime.ValidateRun), moves no data, and reports elapsed_ns =
// 1000 per core that runs a kernel when timed. A kernel source containing
// a line starting "#error" fails compile with compile_error and that line
// as the diagnostics. With -dprint TEXT and DPRINT on (init's dprint or
// ZYX_EMU_DPRINT), every run prints "dprint: core (r,c) <processor>: TEXT"
// on stderr for every core of every kernel.
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
	"slices"
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
	CrashDelay    time.Duration
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
	Semaphores    uint
	LockFD        int
	ParentPid     int
	DPrint        string
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
	fs.DurationVar(&o.CrashDelay, "crash-delay", 0, "with -crash-at, wait this long on the Nth command before exiting (so that a driver has pipelined what it sends after it)")
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
	fs.UintVar(&o.Semaphores, "semaphores", 16, "semaphores per core")
	fs.IntVar(&o.ParentPid, "parent-pid", 0, "the process that started the mock; exit 1 at once if it is not the parent (as zyx-tt-runtime's --parent-pid)")
	fs.IntVar(&o.LockFD, "lock-fd", -1, "an inherited, flock-ed chip lock file to hold for the process lifetime (as zyx-tt-runtime's --lock-fd)")
	fs.StringVar(&o.DPrint, "dprint", "", "with DPRINT on, print this text as a DPRINT line of every core of every kernel at every run")
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
	data    []byte
	address uint64
	spec    ttruntime.BufferSpec
}

type program struct {
	req    ttruntime.CompileRequest
	checks *ttruntime.ProgramChecks
	cores  uint64 // cores that run a kernel
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
	l1Next   uint64 // L1 buffers are allocated top-down from here
	progs    map[uint64]*program
	nextProg uint64
	segs     map[string]*shm.Segment
	dprint   bool
	scratch  [24]byte
	// outcomes holds the answered requests (slot id % AfterWindow: the last
	// id answered in the slot, and its error code, "" for success), for
	// `after`.
	outcomes [ttruntime.AfterWindow]outcome
}

type outcome struct {
	id   uint64
	code string
}

func (s *server) remember(id uint64, code string) {
	if id != 0 {
		s.outcomes[id%ttruntime.AfterWindow] = outcome{id, code}
	}
}

// HelperEnv set to "mockrt" makes a test binary whose TestMain calls
// ServeIfHelper act as the mock runtime: a test points a runtime path at
// os.Args[0] with this in the environment.
const HelperEnv = "ZYX_TT_TEST_HELPER"

// ServeIfHelper runs the mock (Main with the process's arguments and
// standard streams) and exits with its status when HelperEnv is "mockrt";
// otherwise it returns at once.
func ServeIfHelper() {
	if os.Getenv(HelperEnv) == "mockrt" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
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
	if o.ParentPid > 0 && os.Getppid() != o.ParentPid {
		fmt.Fprintf(stderr, "zyx-tt-mockrt: the parent (pid %d) is gone; exiting\n", o.ParentPid)
		return 1
	}
	if o.LockFD >= 0 {
		if msg := claimLock(o.LockFD); msg != "" {
			fmt.Fprintln(stderr, "zyx-tt-mockrt: "+msg)
			return 3
		}
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
	ID    *uint64         `json:"id"`
	Cmd   string          `json:"cmd"`
	After json.RawMessage `json:"after"`
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
		time.Sleep(o.CrashDelay)
		fmt.Fprintf(s.errw, "mockrt: crashing on command %d as asked\n", s.n)
		os.Exit(3)
	}
	if o.HangAt != 0 && s.n >= o.HangAt {
		fmt.Fprintf(s.errw, "mockrt: hanging on command %d as asked\n", s.n)
		blockForever()
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
		blockForever()
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
	if len(req.After) > 0 && !s.checkAfter(id, req.Cmd, req.After) {
		return 0, false
	}
	switch req.Cmd {
	case ttruntime.CmdInit:
		s.cmdInit(id, line)
	case ttruntime.CmdPing:
		if fast || s.decode(id, line, &head{}) {
			s.reply(id, nil)
		}
	case ttruntime.CmdMap:
		var r segmentMsg
		if s.decode(id, line, &r) {
			if _, err := s.segment(r.Segment); err != nil {
				s.replyErr(id, ttruntime.CodeShmError, err.Error())
			} else {
				s.reply(id, nil)
			}
		}
	case ttruntime.CmdUnmap:
		var r segmentMsg
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
		var r freeMsg
		if s.decode(id, line, &r) {
			b, ok := s.bufs[r.Buffer]
			if !ok {
				s.replyErr(id, ttruntime.CodeUnknownBuffer, fmt.Sprintf("free.buffer: buffer %d does not exist (never allocated, or freed)", r.Buffer))
				break
			}
			if b.spec.Placement != ttruntime.PlacementL1 {
				s.used -= uint64(len(b.data))
			}
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
		var r releaseMsg
		if s.decode(id, line, &r) {
			if _, ok := s.progs[r.Program]; !ok {
				s.replyErr(id, ttruntime.CodeUnknownProgram, fmt.Sprintf("release.program: program %d does not exist (never compiled, or released)", r.Program))
				break
			}
			delete(s.progs, r.Program)
			s.reply(id, nil)
		}
	case ttruntime.CmdExit:
		if !fast && !s.decode(id, line, &head{}) {
			break
		}
		s.reply(id, nil)
		return 0, true
	default:
		s.replyErr(id, ttruntime.CodeUnknownCommand, fmt.Sprintf("unknown command %q", req.Cmd))
	}
	return 0, false
}

// checkAfter applies a request's `after` as the runtime does: its shape
// (bad_request); the window, an id named twice and an id not answered
// before (invalid_argument); then the outcomes of the requests it names
// (dependency_failed). It reports whether the request may run; otherwise it
// has answered it.
func (s *server) checkAfter(id uint64, cmd string, raw json.RawMessage) bool {
	if string(bytes.TrimSpace(raw)) == "null" {
		return true
	}
	var after []uint64
	if err := json.Unmarshal(raw, &after); err != nil {
		s.replyErr(id, ttruntime.CodeBadRequest, cmd+".after: must be an array of request ids: "+err.Error())
		return false
	}
	if len(after) > ttruntime.MaxAfter {
		s.replyErr(id, ttruntime.CodeBadRequest, fmt.Sprintf("%s.after: names %d requests; at most %d", cmd, len(after), ttruntime.MaxAfter))
		return false
	}
	for i, dep := range after {
		if msg := s.unknownDependency(id, after, i); msg != "" {
			s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("%s.after[%d]: request %d %s", cmd, i, dep, msg))
			return false
		}
	}
	for i, dep := range after {
		if o := s.outcomes[dep%ttruntime.AfterWindow]; o.code != "" {
			s.replyErr(id, ttruntime.CodeDependencyFailed, fmt.Sprintf("%s.after[%d]: request %d failed (%s); this request was not executed", cmd, i, dep, o.code))
			return false
		}
	}
	return true
}

// unknownDependency is what is wrong with after[i] of request id, as the
// runtime says it, or "" when it names a request answered before.
func (s *server) unknownDependency(id uint64, after []uint64, i int) string {
	dep := after[i]
	if dep >= id || id-dep > ttruntime.AfterWindow {
		return fmt.Sprintf("is not one of the %d requests before request %d", ttruntime.AfterWindow, id)
	}
	if j := slices.Index(after[:i], dep); j >= 0 {
		return fmt.Sprintf("is named twice (also after[%d])", j)
	}
	held := s.outcomes[dep%ttruntime.AfterWindow].id
	if dep == 0 || held == 0 || held < dep {
		return fmt.Sprintf("is unknown: no request %d came before request %d", dep, id)
	}
	if held != dep {
		return fmt.Sprintf("is unknown: it did not come before request %d, or request %d, sent since, took its place (the runtime remembers %d requests of increasing ids)",
			id, held, ttruntime.AfterWindow)
	}
	return ""
}

// decode reads a request strictly into v, one of the message types below
// (the command's fields with id and cmd): a field v does not have, or a
// value of the wrong type, is bad_request, as in the runtime.
func (s *server) decode(id uint64, line []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.replyErr(id, ttruntime.CodeBadRequest, err.Error())
		return false
	}
	return true
}

// The requests as they arrive: the command's fields with id and cmd.
type (
	head struct {
		ID    *uint64  `json:"id"`
		Cmd   string   `json:"cmd"`
		After []uint64 `json:"after"`
	}
	initMsg struct {
		head
		ttruntime.InitRequest
	}
	segmentMsg struct {
		head
		ttruntime.SegmentRequest
	}
	allocMsg struct {
		head
		ttruntime.AllocRequest
	}
	freeMsg struct {
		head
		ttruntime.BufferRequest
	}
	xferMsg struct {
		head
		ttruntime.TransferRequest
	}
	compileMsg struct {
		head
		ttruntime.CompileRequest
	}
	runMsg struct {
		head
		ttruntime.RunRequest
	}
	releaseMsg struct {
		head
		ttruntime.ProgramRequest
	}
)

// blockForever stops answering, as a hung runtime does. It sleeps rather
// than blocking on nothing, which Go's runtime would take for a deadlock
// and end the process ("all goroutines are asleep").
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// claimLock holds the inherited chip lock as zyx-tt-runtime's --lock-fd
// does: a regular file, flock-ed exclusively (the flock of the same open
// file the driver holds, so it succeeds while the driver holds it, and
// fails when another open of the file does).
func claimLock(fd int) string {
	at := fmt.Sprintf("--lock-fd %d", fd)
	if fd <= 2 {
		return at + ": fds 0-2 are the protocol's stdin, stdout and stderr"
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return at + ": not an open file descriptor (" + err.Error() + ")"
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return at + ": not a regular file"
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return at + ": the chip lock is held by another process (" + err.Error() + ")"
	}
	syscall.CloseOnExec(fd)
	return ""
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
	s.remember(id, "")
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
	s.remember(id, code)
	b, _ := json.Marshal(struct {
		ID    uint64              `json:"id"`
		OK    bool                `json:"ok"`
		Error ttruntime.ErrorBody `json:"error"`
	}{id, false, ttruntime.ErrorBody{Code: code, Message: msg}})
	s.out.Write(b)
	s.out.WriteByte('\n')
	s.flush()
}

// versionMismatch is the runtime's message for an init of protocol asked.
func versionMismatch(speaks, asked int) string {
	msg := fmt.Sprintf("this runtime speaks protocol %d; the driver asked for protocol %d: ", speaks, asked)
	if asked < speaks {
		return msg + "zyx-tt (the Go driver) is older than this runtime; rebuild zyx-tt from the same tree as the runtime (make build)"
	}
	return msg + "the runtime is older than zyx-tt; rebuild the runtime (make runtime)"
}

func (s *server) cmdInit(id uint64, line []byte) {
	if s.init != nil {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("init: already initialized (%s, chip %d); one runtime process drives one chip", s.init.Runtime, s.init.Chip))
		return
	}
	var r initMsg
	// The version is checked before the other fields, so that a peer of
	// another version gets the version message whatever else it sends.
	if err := json.Unmarshal(line, &struct {
		Protocol *int `json:"protocol"`
	}{&r.Protocol}); err != nil {
		s.replyErr(id, ttruntime.CodeBadRequest, "init.protocol: "+err.Error())
		return
	}
	if r.Protocol != s.o.Protocol {
		s.replyErr(id, ttruntime.CodeVersionMismatch, versionMismatch(s.o.Protocol, r.Protocol))
		return
	}
	if !s.decode(id, line, &r) {
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
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("init.board: unknown board preset %q", board))
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
	// The emulator's coordinates (docs/emulator.md): worker (r, c) is NOC
	// node (c+1, r+1), DRAM bank b node (0, b), L1 bank k the worker k.
	var noc ttruntime.NOC
	for c := range grid.Cols {
		noc.WorkerX = append(noc.WorkerX, c+1)
	}
	for r := range grid.Rows {
		noc.WorkerY = append(noc.WorkerY, r+1)
	}
	for b := range uint32(p.banks) {
		noc.DRAMBanks = append(noc.DRAMBanks, [2]uint32{0, b})
	}
	l1 := ttruntime.L1{Size: s.o.L1Size, UnreservedBase: s.o.L1Base, Alignment: 16, Banks: grid.Rows * grid.Cols}
	for r := range grid.Rows {
		for c := range grid.Cols {
			l1.BankCores = append(l1.BankCores, ttruntime.CoreCoord{r, c})
		}
	}
	s.init = &ttruntime.InitReply{
		Protocol: s.o.Protocol, Runtime: runtime, Version: "mockrt", Arch: p.arch, Board: board, Chip: r.Chip,
		Grid:       grid,
		DRAM:       ttruntime.DRAM{Banks: uint32(p.banks), BankSize: p.bankSize, Alignment: 32},
		L1:         l1,
		NOC:        noc,
		Semaphores: uint32(s.o.Semaphores),
	}
	s.l1Next = s.o.L1Size
	s.dprint = r.DPrint || os.Getenv("ZYX_EMU_DPRINT") != ""
	s.reply(id, s.init)
}

func (s *server) replyInvalid(id uint64, err error) {
	var ve *ttruntime.ValidationError
	if errors.As(err, &ve) {
		s.replyErr(id, ve.Code, ve.Message)
		return
	}
	s.replyErr(id, ttruntime.CodeInternal, err.Error())
}

func (s *server) cmdAlloc(id uint64, line []byte) {
	var r allocMsg
	if !s.decode(id, line, &r) {
		return
	}
	if err := ttruntime.ValidateAlloc(r.AllocRequest, s.init); err != nil {
		s.replyInvalid(id, err)
		return
	}
	spec := r.BufferSpec.Normal()
	b := &buffer{spec: spec}
	if spec.Placement == ttruntime.PlacementL1 {
		share := ttruntime.L1SharePerCore(r.Size, spec, s.init)
		if s.l1Next < s.init.L1.UnreservedBase+share {
			s.replyErr(id, ttruntime.CodeOutOfMemory, fmt.Sprintf("alloc: %d bytes of L1 per core asked, %d free", share, s.l1Next-s.init.L1.UnreservedBase))
			return
		}
		s.l1Next = (s.l1Next - share) &^ 15
		b.address = s.l1Next
	} else {
		total := s.init.DRAM.Total()
		if r.Size > total-s.used || r.Size > 1<<40 {
			s.replyErr(id, ttruntime.CodeOutOfMemory, fmt.Sprintf("alloc: %d bytes asked, %d free", r.Size, total-s.used))
			return
		}
		b.address = s.nextAddr
		s.nextAddr += (r.Size + spec.PageSize - 1) / spec.PageSize * spec.PageSize
		s.used += r.Size
	}
	b.data = make([]byte, r.Size)
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
	var r xferMsg
	if !s.decode(id, line, &r) {
		return
	}
	b, ok := s.bufs[r.Buffer]
	if !ok {
		s.replyErr(id, ttruntime.CodeUnknownBuffer, fmt.Sprintf("%s.buffer: buffer %d does not exist (never allocated, or freed)", cmd, r.Buffer))
		return
	}
	if !inRange(r.Offset, r.Length, uint64(len(b.data))) {
		s.replyErr(id, ttruntime.CodeInvalidArgument, fmt.Sprintf("%s: range [%d, +%d) is past the end of buffer %d (%d bytes)", cmd, r.Offset, r.Length, r.Buffer, len(b.data)))
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

func (s *server) cmdCompile(id uint64, line []byte) {
	var r compileMsg
	if !s.decode(id, line, &r) {
		return
	}
	checks, err := ttruntime.ValidateCompile(&r.CompileRequest, s.init)
	if err != nil {
		s.replyInvalid(id, err)
		return
	}
	on := map[ttruntime.CoreCoord]bool{}
	for k := range r.Kernels {
		kd := &r.Kernels[k]
		src, err := kd.Text()
		if err != nil {
			s.replyErr(id, ttruntime.CodeBadRequest, fmt.Sprintf("compile.kernels[%d].source_b64: %v", k, err))
			return
		}
		for _, l := range strings.Split(src, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#error") {
				name := kd.Name
				if name == "" {
					name = kd.Processor
				}
				s.replyErr(id, ttruntime.CodeCompileError, name+": "+strings.TrimSpace(l))
				return
			}
		}
		for _, c := range kd.Cores.Cores(false) {
			on[c] = true
		}
	}
	pid := s.nextProg
	s.nextProg++
	s.progs[pid] = &program{req: r.CompileRequest, checks: checks, cores: uint64(len(on))}
	s.reply(id, ttruntime.ProgramReply{Program: pid})
}

func (s *server) cmdRun(id uint64, line []byte) {
	var r runMsg
	if !s.decode(id, line, &r) {
		return
	}
	p, ok := s.progs[r.Program]
	if !ok {
		s.replyErr(id, ttruntime.CodeUnknownProgram, fmt.Sprintf("run.program: program %d does not exist (never compiled, or released)", r.Program))
		return
	}
	err := ttruntime.ValidateRun(p.checks, r.Args, s.init, func(bid uint64) (ttruntime.RunBuffer, bool) {
		b, ok := s.bufs[bid]
		if !ok {
			return ttruntime.RunBuffer{}, false
		}
		return ttruntime.RunBuffer{Address: b.address, Size: uint64(len(b.data)), Spec: b.spec}, true
	})
	if err != nil {
		s.replyInvalid(id, err)
		return
	}
	if s.dprint && s.o.DPrint != "" {
		for k := range p.req.Kernels {
			kd := &p.req.Kernels[k]
			for _, c := range kd.Cores.Cores(false) {
				fmt.Fprintf(s.errw, "dprint: core (%d,%d) %s: %s\n", c[0], c[1], kd.Processor, s.o.DPrint)
			}
		}
	}
	var res ttruntime.RunReply
	if r.Timed {
		res.ElapsedNS = p.cores * 1000
	}
	s.reply(id, res)
}
