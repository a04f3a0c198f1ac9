// Package diskcache is the on-disk side of the backends' build caches: where
// a backend's cache directory is, and writing a cache file so that a
// concurrent reader sees the old file or the whole new one, never half.
package diskcache

import (
	"errors"
	"os"
	"path/filepath"
)

// Off is the configured directory that turns a disk cache off.
const Off = "off"

// Dir resolves a backend's configured cache directory: Off (or no user
// cache directory when none is configured) means no cache, "", and ""
// means <user cache dir>/zyx/<backend>; anything else is used as it is.
func Dir(configured, backend string) string {
	switch configured {
	case Off:
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "zyx", backend)
	}
	return configured
}

// WriteFile writes data to path through a temporary file in the same
// directory and a rename, making the directory first. On failure the
// temporary file is removed and path is left as it was.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		return errors.Join(werr, cerr)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}
