// Package zlog is zyx-tt's one logging path: a *slog.Logger the user can
// replace, with ZYX_DEBUG's bitmask (zyx's meanings) choosing which areas
// log at Info level, where the default handler shows them. Areas ZYX_DEBUG
// leaves out still log at Debug level, for a user's logger that enables it.
package zlog

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Mask is a set of debug areas, as ZYX_DEBUG spells them.
type Mask uint32

// The areas (ZYX_DEBUG bits).
const (
	Device   Mask = 1  // device and backend initialisation, allocations
	Perf     Mask = 2  // timings
	Sched    Mask = 4  // scheduling and device selection
	Compile  Mask = 8  // program compilation
	Assembly Mask = 16 // generated source and assembly
)

var areaNames = map[Mask]string{Device: "device", Perf: "perf", Sched: "sched", Compile: "compile", Assembly: "assembly"}

// EnvDebug is the environment variable holding the mask.
const EnvDebug = "ZYX_DEBUG"

var mask = sync.OnceValue(func() Mask {
	v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv(EnvDebug)), 0, 32)
	if err != nil {
		return 0
	}
	return Mask(v)
})

var logger atomic.Pointer[slog.Logger]

// SetLogger makes l the logger of every zyx-tt package; nil restores
// slog.Default().
func SetLogger(l *slog.Logger) { logger.Store(l) }

// Logger is the logger zyx-tt writes to.
func Logger() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Enabled reports whether ZYX_DEBUG selects any area of m.
func Enabled(m Mask) bool { return mask()&m != 0 }

// Debug logs msg in area m: at Info level when ZYX_DEBUG selects the area,
// else at Debug level (so only a logger that enables Debug shows it).
func Debug(m Mask, msg string, args ...any) {
	l := Logger()
	level := slog.LevelDebug
	if Enabled(m) {
		level = slog.LevelInfo
	}
	ctx := context.Background()
	if !l.Enabled(ctx, level) {
		return
	}
	name := areaNames[m]
	if name == "" {
		name = strconv.FormatUint(uint64(m), 10)
	}
	l.Log(ctx, level, "zyx: "+msg, append([]any{"area", name}, args...)...)
}

// Warn logs msg at Warn level: something the user should know (a file that
// was ignored, say) that does not stop the work.
func Warn(msg string, args ...any) {
	Logger().Warn("zyx: "+msg, args...)
}
