package backends

import (
	"log/slog"

	"github.com/zyxtt/zyxtt/internal/config"
	"github.com/zyxtt/zyxtt/internal/zlog"
)

// Config is the backend config file: one JSON object with a section per
// backend ("c", "cblas", "cuda", "opencl", "vulkan", "tenstorrent", "dummy").
// Every section may hold device_ids; the other keys are the backend's own
// and documented in README.md. A driver reads its section through
// backends/driver.
type Config = config.Config

// Common holds the keys every section understands (device_ids).
type Common = config.Common

// ConfigError is one fault of the config file, at its line and column and
// naming the key path ("select.budget_s"). The errors of ParseConfig,
// LoadConfig, Runtime.ConfigErr and a driver's section are, or join, these.
type ConfigError = config.Error

// ParseConfig decodes a config file's bytes: one JSON object of sections
// (objects), no key twice in any object, nothing after it, device_ids a
// list of device ordinals. Sections' own keys are checked when they are
// decoded (Runtime.ConfigProblems lists every fault).
func ParseConfig(data []byte) (*Config, error) { return config.Parse(data) }

// LoadConfig reads the config file at path. A missing file (or an empty
// path) is no config: the defaults, with no error. A file that cannot be
// read or parsed gives the defaults and the error, for the caller to show.
func LoadConfig(path string) (*Config, error) { return config.Load(path) }

// ConfigPath is where the config file is looked for:
// $XDG_CONFIG_HOME/zyx/config.json when XDG_CONFIG_HOME is absolute, else
// ~/.config/zyx/config.json. It is empty when neither can be formed.
func ConfigPath() string { return config.Path() }

// ConfigDir is the directory that holds the config file.
func ConfigDir() string { return config.Dir() }

// SetLogger makes l the logger of every zyx-tt package (nil restores
// slog.Default()). ZYX_DEBUG's bitmask (1 device, 2 perf, 4 scheduling,
// 8 compile, 16 generated source) raises those areas to Info level; the
// rest log at Debug level.
func SetLogger(l *slog.Logger) { zlog.SetLogger(l) }
