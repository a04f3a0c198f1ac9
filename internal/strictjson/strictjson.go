// Package strictjson decodes JSON documents strictly (unknown fields and
// trailing data are errors) and names the JSON path of what is wrong: the
// one decoding step of every file a user writes (bundle manifests and
// variant files).
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
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
				return &Error{Err: fmt.Errorf("the file must hold one JSON object, got %s", jsonValue(te.Value))}
			}
			return &Error{jsonPath(reflect.TypeOf(v), te.Field), fmt.Errorf("want %s, got %s", JSONKind(te.Type), jsonValue(te.Value))}
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return &Error{Err: fmt.Errorf("line %d column %d: JSON syntax: %v", line, col, se)}
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

// JSONKind names what a JSON document holds for a value of Go type t, in
// JSON's words ("a whole number", "a list of strings"): messages to users
// never name Go types.
func JSONKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(reflect.TypeFor[json.Unmarshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		switch t.Kind() {
		case reflect.Struct, reflect.Interface:
			return "a value"
		}
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number ≥ 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + plural(JSONKind(t.Elem()))
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value"
}

// plural turns "a string" into "strings" (for "a list of strings").
func plural(kind string) string {
	switch kind {
	case "true or false":
		return "true or false values"
	case "an object":
		return "objects"
	case "a value":
		return "values"
	}
	k := strings.TrimPrefix(kind, "a ")
	if strings.HasPrefix(k, "list of ") {
		return "lists of " + strings.TrimPrefix(k, "list of ")
	}
	if i := strings.Index(k, " ≥"); i >= 0 {
		return k[:i] + "s" + k[i:]
	}
	return k + "s"
}

// jsonValue names the JSON value the decoder found ("string", "number
// -1") as a user would.
func jsonValue(v string) string {
	kind, rest, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		if rest != "" {
			return "the number " + rest
		}
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return v
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
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if _, err := strconv.Atoi(seg); err == nil && len(keep) > 0 && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			keep[len(keep)-1] += "[" + seg + "]" // an element: "vars[0]"
			t = t.Elem()
			continue
		}
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
