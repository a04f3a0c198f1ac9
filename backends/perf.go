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
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/internal/zlog"
)

// The performance record: what `--dev fastest` measured on this host, per
// program, device and size bucket, so that later `auto` selections choose by
// measurement instead of by nominal FLOP/s. It lives in one JSON file in the
// cache directory, written atomically (a temp file and a rename) under an
// advisory lock, so concurrent processes never lose each other's entries.

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

// Entries reads the record. A missing file is no entries; a damaged one is
// no entries too, with a debug line, and is replaced by the next write.
func (r *PerfRecord) Entries() []PerfEntry {
	if r == nil {
		return nil
	}
	data, err := os.ReadFile(r.Path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			zlog.Debug(zlog.Sched, "performance record not read", "path", r.Path, "err", err)
		}
		return nil
	}
	var f perfFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != perfVersion {
		zlog.Debug(zlog.Sched, "performance record ignored (damaged or of another version)", "path", r.Path, "err", err)
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
	unlock, err := lockFile(r.Path + ".lock")
	if err != nil {
		return fmt.Errorf("performance record: %w", err)
	}
	defer unlock()
	old := r.Entries()
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
	return writeAtomic(r.Path, data)
}

func perfKey(e PerfEntry) string { return fmt.Sprintf("%s|%s|%d", e.Program, e.Device, e.Bucket) }

// lockFile takes an exclusive advisory lock on path (made 0600 if new, never
// followed through a symbolic link) and returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
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
func DeviceIdentity(d Device) string {
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
