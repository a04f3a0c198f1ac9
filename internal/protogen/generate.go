package protogen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// The schema and the files made from it, relative to the repository root.
const (
	SchemaPath    = "protocol/protocol.json"
	GoPath        = "ttruntime/protocol_gen.go"
	CppEnumsPath  = "cpp/src/protocol_enums_gen.hpp"
	CppFieldsPath = "cpp/src/protocol_fields_gen.hpp"
	DocsPath      = "docs/protocol.md"
)

// Generate reads the schema and docs/protocol.md under root and returns
// every file made from them, by path relative to root.
func Generate(root string) (map[string][]byte, error) {
	data, err := os.ReadFile(filepath.Join(root, SchemaPath))
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(filepath.Join(root, DocsPath))
	if err != nil {
		return nil, err
	}
	goSrc, err := GoFile(s)
	if err != nil {
		return nil, err
	}
	docs, err := Docs(s, doc)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		GoPath:        goSrc,
		CppEnumsPath:  CppEnums(s),
		CppFieldsPath: CppFields(s),
		DocsPath:      docs,
	}, nil
}

// Write writes the files Generate made that differ from those under root
// and returns their paths. Each is replaced whole (a new file renamed over
// the old), so a reader never sees half of one.
func Write(root string, files map[string][]byte) ([]string, error) {
	var changed []string
	for _, rel := range sortedKeys(files) {
		path := filepath.Join(root, rel)
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, files[rel]) {
			continue
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return changed, err
		}
		if err := replaceFile(path, files[rel]); err != nil {
			return changed, fmt.Errorf("write %s: %w", rel, err)
		}
		changed = append(changed, rel)
	}
	return changed, nil
}

func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".protogen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // a source file, as git checks it out
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Stale lists the files under root that are not what Generate makes.
func Stale(root string, files map[string][]byte) []string {
	var stale []string
	for _, rel := range sortedKeys(files) {
		old, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || !bytes.Equal(old, files[rel]) {
			stale = append(stale, rel)
		}
	}
	return stale
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// RepoRoot is the nearest directory at or above dir that holds a go.mod.
func RepoRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = up
	}
}
