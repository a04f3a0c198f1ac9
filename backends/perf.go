package backends

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/internal/diskcache"
	"github.com/zyxtt/zyxtt/internal/zlog"
)

// The performance record: what `--dev fastest` measured on this host, per
// program, device and size bucket, so that later `auto` selections choose by
// measurement instead of by nominal FLOP/s. It lives in one JSON file in the
// cache directory, written atomically (a temp file and a rename) under an
// advisory lock, so concurrent processes never lose each other's entries.
//
// The file is read once per process and path: opened as a regular file of
// the user's only (never through a symbolic link, never blocking on a FIFO)
// and at most maxPerfRecord bytes; anything else is ignored with a warning
// and replaced by the next write.

// PerfEntry is one measurement: a program's launch time on a device at one
// size bucket, and the time to move its buffers in and out.
type PerfEntry struct {
	Program string `json:"program"` // ProgramIdentity
	Name    string `json:"name"`    // the program's name, for people
	Device  string `json:"device"`  // DeviceIdentity
	// DeviceName is the device's selector name ("cuda:0").
	DeviceName string `json:"device_name"`
	// Bucket is the size bucket: floor(log2) of the bytes of the
	// program's buffers.
	Bucket     int           `json:"bucket"`
	Launch     time.Duration `json:"launch_ns"`
	Upload     time.Duration `json:"upload_ns"`
	Download   time.Duration `json:"download_ns"`
	Samples    int           `json:"samples"`
	MeasuredAt time.Time     `json:"measured_at"`
}

// Cost is what a run of repeat launches costs on the entry's device: the
// transfers once and the launch repeat times.
func (e PerfEntry) Cost(repeat int) time.Duration {
	return e.Upload + e.Download + time.Duration(max(repeat, 1))*e.Launch
}

// PerfRecord is the record file.
type PerfRecord struct {
	Path string
}

// maxPerfRecord bounds the record file: a record of every program, device
// and size bucket a host measures is far smaller; a larger file is damaged
// or not ours.
const maxPerfRecord = 8 << 20

// perfLockWait bounds the wait for another process's record lock: the record
// only guides selection, so a write gives up rather than hang.
const perfLockWait = 5 * time.Second

// loadedRecords are the records this process has read, by path: the file is
// read once, and a Record updates the copy.
var loadedRecords struct {
	sync.Mutex
	byPath map[string][]PerfEntry
}

// perfVersion is the file's format version; a file of another version is
// ignored (and replaced by the next write).
const perfVersion = 1

type perfFile struct {
	Version int         `json:"version"`
	Entries []PerfEntry `json:"entries"`
}

// EnvPerfRecord names the environment variable that moves the performance
// record ("off" keeps none).
const EnvPerfRecord = "ZYX_PERF_RECORD"

// DefaultPerfRecord is the record at $ZYX_PERF_RECORD, else in the user
// cache directory ($XDG_CACHE_HOME/zyx/perf.json, else
// ~/.cache/zyx/perf.json); nil when there is none ("off", or no cache
// directory).
func DefaultPerfRecord() *PerfRecord {
	switch p := os.Getenv(EnvPerfRecord); p {
	case "":
	case "off":
		return nil
	default:
		return &PerfRecord{Path: p}
	}
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		return nil
	}
	return &PerfRecord{Path: filepath.Join(base, "zyx", "perf.json")}
}

// Entries reads the record (once per process and path). A missing file is
// no entries; a damaged, oversized or untrusted one is no entries too, with
// a warning, and is replaced by the next write.
func (r *PerfRecord) Entries() []PerfEntry {
	if r == nil {
		return nil
	}
	loadedRecords.Lock()
	defer loadedRecords.Unlock()
	if e, ok := loadedRecords.byPath[r.Path]; ok {
		return e
	}
	e := r.read(true)
	if loadedRecords.byPath == nil {
		loadedRecords.byPath = map[string][]PerfEntry{}
	}
	loadedRecords.byPath[r.Path] = e
	return e
}

// read reads the file itself; warn says whether a file that is there but
// unusable is worth a warning (not when it is about to be replaced).
func (r *PerfRecord) read(warn bool) []PerfEntry {
	data, err := diskcache.ReadPrivateFile(r.Path, maxPerfRecord)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && warn {
			zlog.Warn("performance record ignored", "path", r.Path, "err", err)
		}
		return nil
	}
	var f perfFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != perfVersion {
		if warn {
			zlog.Warn("performance record ignored (damaged or of another version)", "path", r.Path, "err", err)
		}
		return nil
	}
	return f.Entries
}

// Lookup is the entry of a program on a device at a bucket, if any.
func (r *PerfRecord) Lookup(program, device string, bucket int) (PerfEntry, bool) {
	for _, e := range r.Entries() {
		if e.Program == program && e.Device == device && e.Bucket == bucket {
			return e, true
		}
	}
	return PerfEntry{}, false
}

// Record adds or replaces entries (one per program, device and bucket),
// atomically and under a lock, so that several processes recording at once
// keep every entry.
func (r *PerfRecord) Record(entries ...PerfEntry) error {
	if r == nil {
		return errors.New("backends: no performance record (no cache directory)")
	}
	dir := filepath.Dir(r.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("performance record: %w", err)
	}
	unlock, err := lockFile(r.Path+".lock", perfLockWait)
	if err != nil {
		return fmt.Errorf("performance record: %w", err)
	}
	defer unlock()
	// Under the lock, the file as other processes left it.
	old := r.read(false)
	byKey := map[string]int{}
	for i, e := range old {
		byKey[perfKey(e)] = i
	}
	for _, e := range entries {
		if i, ok := byKey[perfKey(e)]; ok {
			old[i] = e
			continue
		}
		byKey[perfKey(e)] = len(old)
		old = append(old, e)
	}
	sort.SliceStable(old, func(i, j int) bool { return perfKey(old[i]) < perfKey(old[j]) })
	data, err := json.MarshalIndent(perfFile{Version: perfVersion, Entries: old}, "", "  ")
	if err != nil {
		return fmt.Errorf("performance record: %w", err)
	}
	if err := writeAtomic(r.Path, data); err != nil {
		return err
	}
	loadedRecords.Lock()
	if loadedRecords.byPath == nil {
		loadedRecords.byPath = map[string][]PerfEntry{}
	}
	loadedRecords.byPath[r.Path] = old
	loadedRecords.Unlock()
	return nil
}

func perfKey(e PerfEntry) string { return fmt.Sprintf("%s|%s|%d", e.Program, e.Device, e.Bucket) }

// lockFile takes an exclusive advisory lock on path (made 0600 if new; a
// regular file of ours, never followed through a symbolic link, never
// blocking on a FIFO) within wait, and returns its release.
func lockFile(path string, wait time.Duration) (func(), error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != uint32(os.Geteuid()) {
		f.Close()
		return nil, fmt.Errorf("lock file %s is not a regular file of this user's", path)
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock file %s: held by another process for more than %v", path, wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		f.Close()
	}, nil
}

// writeAtomic writes data to a fresh temp file beside path and renames it
// over path: a reader sees the old file or the whole new one.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}

// ProgramIdentity names a program for the record: a digest of its params,
// grids and every variant's format and code, so that a changed source (or
// a changed grid) is a different program.
func ProgramIdentity(p *Program) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(struct {
		Params   []Param
		Grid     []string
		Variants []Variant
	}{p.Params, gridText(p.Grid), p.Variants})
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func gridText(g []GwsDim) []string {
	out := make([]string, len(g))
	for i, d := range g {
		out[i] = d.String()
	}
	return out
}

// DeviceIdentity names a device for the record: its name, what it is, and
// the versions of its driver, runtime and library where it reports them, so
// that a new driver or another device in the same slot invalidates old
// measurements.
func DeviceIdentity(d *Device) string {
	info := d.Info()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s|%s|%s|%d", d.Name(), d.Backend(), info.Name, info.Cores)
	keys := make([]string, 0, len(info.Extra))
	for k := range info.Extra {
		if strings.Contains(k, "version") || k == "library" || k == "compiler" || k == "flags" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "|%s=%s", k, info.Extra[k])
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:12])
}

// SizeBucket is the bucket of a workload of bytes: floor(log2), so sizes
// within a factor of two share measurements.
func SizeBucket(bytes int64) int {
	if bytes <= 1 {
		return 0
	}
	return 63 - bits.LeadingZeros64(uint64(bytes))
}
