// Package strictjson decodes JSON documents strictly (unknown fields and
// trailing data are errors) and names the JSON path of what is wrong: the
// one decoding step of every file a user writes (bundle manifests and
// variant files).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Error is a problem at one field of a document: Field is its JSON path
// ("params[2].dtype"), empty for the whole document.
type Error struct {
	Field string
	Err   error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Decode decodes one JSON value into v, refusing unknown fields and
// trailing data; an error is an *Error naming the field's JSON path.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return &Error{Err: fmt.Errorf("the file must hold one JSON object, got JSON %s", te.Value)}
			}
			return &Error{jsonPath(reflect.TypeOf(v), te.Field), fmt.Errorf("want %s, got JSON %s", te.Type, te.Value)}
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return &Error{Err: fmt.Errorf("line %d column %d: %v", line, col, se)}
		}
		if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			field := m[1]
			if path := unknownKeyPath(data, reflect.TypeOf(v)); path != "" {
				field = path
			}
			return &Error{field, errors.New("unknown field")}
		}
		return &Error{Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Err: errors.New("trailing data after the JSON object")}
	}
	return nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// unknownKeyPath finds the first key of the JSON document that type t does
// not know, as a field path ("params[0].shap"); "" when there is none or
// the document does not parse.
func unknownKeyPath(data []byte, t reflect.Type) string {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	return walkUnknown(doc, t, "")
}

func walkUnknown(doc any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := doc.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := jsonFields(t)
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				ft, ok := fields[k]
				if !ok {
					return join(path, k)
				}
				if p := walkUnknown(v[k], ft, join(path, k)); p != "" {
					return p
				}
			}
		case reflect.Map:
			for k, e := range v {
				if p := walkUnknown(e, t.Elem(), join(path, k)); p != "" {
					return p
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range v {
				if p := walkUnknown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// jsonFields maps the JSON keys of struct type t to their types; the
// fields of an embedded struct stand among t's own, as encoding/json
// decodes them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			continue // its fields are listed themselves
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if name != "-" {
			fields[name] = f.Type
		}
	}
	return fields
}

// jsonPath is a decoder error's field path into a value of type t without
// the names of the embedded structs on it, which encoding/json puts in
// ("cbs.rawCBIndex.index" is cbs.index).
func jsonPath(t reflect.Type, field string) string {
	segs := strings.Split(field, ".")
	var keep []string
	for i, seg := range segs {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return strings.Join(append(keep, segs[i:]...), ".")
		}
		if f, ok := t.FieldByName(seg); ok && f.Anonymous {
			t = f.Type
			continue
		}
		ft, ok := jsonFields(t)[seg]
		if !ok {
			return strings.Join(append(keep, segs[i:]...), ".")
		}
		keep, t = append(keep, seg), ft
	}
	return strings.Join(keep, ".")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
