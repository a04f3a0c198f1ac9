package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// kind is the JSON type of a value.
type kind int

const (
	kindObject kind = iota
	kindArray
	kindString
	kindNumber
	kindBool
	kindNull
)

// value is one JSON value of the config file with where it stands, so that
// every fault found later (a wrong type, a value out of range, an unknown
// key) can name its line and column.
type value struct {
	kind       kind
	start, end int    // byte offsets of the value's text
	text       string // a string's contents, a number's literal
	boolean    bool
	members    []member // an object's keys, in file order
	elems      []*value // an array's elements
}

// member is one key of an object and its value.
type member struct {
	key    string
	keyPos int // byte offset of the key's opening quote
	val    *value
}

// lookup is the member named key, or nil.
func (v *value) lookup(key string) *member {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

// maxNesting bounds how deep objects and arrays nest; a config needs three
// levels, and the bound keeps a hostile file from costing stack.
const maxNesting = 64

// parseTree reads data as exactly one JSON value. A syntax error, a key
// that appears twice in one object, nesting past maxNesting and anything
// but white space after the value are errors at their line and column.
func parseTree(data []byte) (*value, error) {
	if !utf8.Valid(data) {
		at := 0
		for at < len(data) {
			r, n := utf8.DecodeRune(data[at:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at += n
		}
		return nil, errorAt(data, at, "", "invalid UTF-8 (byte offset %d); the file must be UTF-8 text", at)
	}
	// One pass of the decoder finds the syntax errors and where the value
	// ends; the tree is then read token by token.
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(new(json.RawMessage)); err != nil {
		return nil, syntaxError(data, err)
	}
	if rest := skipSpace(data, int(dec.InputOffset())); rest < len(data) {
		return nil, errorAt(data, rest, "", "unexpected %s after the top-level object (byte offset %d); the file must hold one JSON object", quoteByte(data[rest]), rest)
	}
	p := &treeParser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	return p.value(0, "")
}

// syntaxError turns the error of a decoder's first Decode of data into an
// *Error at its line and column.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		return errorAt(data, int(se.Offset)-1, "", "JSON syntax: %s", se.Error())
	case errors.Is(err, io.EOF):
		return errorAt(data, len(data), "", "the file is empty; it must hold one JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorAt(data, len(data), "", "JSON syntax: unexpected end of the file (an object or list is not closed)")
	}
	return errorAt(data, 0, "", "JSON syntax: %s", err.Error())
}

type treeParser struct {
	data []byte
	dec  *json.Decoder
}

// next reads one token and the byte offset where it starts: the decoder
// reports where a token ends, and before a token it skips only white space
// and one ':' or ','.
func (p *treeParser) next() (json.Token, int, error) {
	start := skipSpace(p.data, int(p.dec.InputOffset()))
	if start < len(p.data) && (p.data[start] == ':' || p.data[start] == ',') {
		start = skipSpace(p.data, start+1)
	}
	tok, err := p.dec.Token()
	if err != nil { // the syntax was checked: only a failing reader gets here
		return nil, start, errorAt(p.data, start, "", "JSON syntax: %s", err.Error())
	}
	return tok, start, nil
}

// value reads the value whose first token comes next; path names it in
// errors ("c", "c.flags[1]").
func (p *treeParser) value(depth int, path string) (*value, error) {
	tok, start, err := p.next()
	if err != nil {
		return nil, err
	}
	v := &value{start: start}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxNesting {
			return nil, errorAt(p.data, start, path, "nested more than %d levels deep", maxNesting)
		}
		if t == '{' {
			err = p.object(v, depth, path)
		} else {
			err = p.array(v, depth, path)
		}
		if err != nil {
			return nil, err
		}
	case string:
		v.kind, v.text = kindString, t
	case json.Number:
		v.kind, v.text = kindNumber, t.String()
	case bool:
		v.kind, v.boolean = kindBool, t
	case nil:
		v.kind = kindNull
	}
	v.end = int(p.dec.InputOffset())
	return v, nil
}

func (p *treeParser) object(v *value, depth int, path string) error {
	v.kind = kindObject
	first := map[string]int{}
	for p.dec.More() {
		tok, at, err := p.next()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // the decoder accepts only a string here
		where := joinPath(path, key)
		if prev, dup := first[key]; dup {
			line, col := position(p.data, prev)
			what := "key"
			if depth == 0 {
				what = "section"
			}
			return errorAt(p.data, at, where, "duplicate %s %q (first at line %d, column %d)", what, key, line, col)
		}
		first[key] = at
		val, err := p.value(depth+1, where)
		if err != nil {
			return err
		}
		v.members = append(v.members, member{key: key, keyPos: at, val: val})
	}
	_, _, err := p.next() // '}'
	return err
}

func (p *treeParser) array(v *value, depth int, path string) error {
	v.kind = kindArray
	for p.dec.More() {
		val, err := p.value(depth+1, fmt.Sprintf("%s[%d]", path, len(v.elems)))
		if err != nil {
			return err
		}
		v.elems = append(v.elems, val)
	}
	_, _, err := p.next() // ']'
	return err
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func quoteByte(b byte) string {
	if b >= 0x20 && b < 0x7f {
		return fmt.Sprintf("%q", string(rune(b)))
	}
	return fmt.Sprintf("byte 0x%02x", b)
}

// joinPath names key inside path: "select" and "budget_s" give
// "select.budget_s".
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
