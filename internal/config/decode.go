package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// A section's Go type is a struct whose fields name their keys with json
// tags and may bound their values with more tags:
//
//	TimeoutS float64 `json:"timeout_s" min:"0.001" max:"86400" unit:"seconds"`
//
// min and max bound a number (both included; on a list, each element), and
// unit names what it counts in messages. Fields may be strings, booleans,
// integers, floats, lists of these, nested structs, and pointers to any of
// them (a pointer stays nil when its key is absent or null). json:"-" and
// unexported fields are not keys.

// schema is what a struct type's fields accept.
type schema struct {
	fields []fieldSpec
}

type fieldSpec struct {
	key   string
	index int
	lim   limits
}

// limits are a number's bounds from its min and max tags, as written.
type limits struct {
	min, max         float64
	minText, maxText string // "" when unbounded
	unit             string
}

func (s *schema) field(key string) *fieldSpec {
	for i := range s.fields {
		if s.fields[i].key == key {
			return &s.fields[i]
		}
	}
	return nil
}

func (s *schema) keys() []string {
	out := make([]string, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.key
	}
	return out
}

// schemaOf reads struct type t's keys and bounds, and checks that every
// field, to the bottom, is a type a config can hold.
func schemaOf(t reflect.Type) (*schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a section decodes into a struct, not %s", t)
	}
	s := &schema{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || key == "-" {
			continue
		}
		if key == "" {
			key = f.Name
		}
		if s.field(key) != nil {
			return nil, fmt.Errorf("%s: key %q is named twice", t, key)
		}
		lim, err := limitsOf(f.Tag)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		if err := checkType(f.Type, lim); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		s.fields = append(s.fields, fieldSpec{key: key, index: i, lim: lim})
	}
	return s, nil
}

func limitsOf(tag reflect.StructTag) (limits, error) {
	lim := limits{min: math.Inf(-1), max: math.Inf(1), unit: tag.Get("unit")}
	for _, b := range []struct {
		name string
		text *string
		val  *float64
	}{{"min", &lim.minText, &lim.min}, {"max", &lim.maxText, &lim.max}} {
		s, ok := tag.Lookup(b.name)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return lim, fmt.Errorf("%s tag %q is not a number", b.name, s)
		}
		*b.text, *b.val = s, v
	}
	if lim.min > lim.max {
		return lim, fmt.Errorf("min %s is above max %s", lim.minText, lim.maxText)
	}
	return lim, nil
}

func checkType(t reflect.Type, lim limits) error {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		return checkType(t.Elem(), lim)
	case reflect.Struct:
		_, err := schemaOf(t)
		return err
	case reflect.String, reflect.Bool:
		if lim.minText != "" || lim.maxText != "" {
			return fmt.Errorf("min and max bound numbers only, not %s", t)
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return nil
	}
	return fmt.Errorf("a config cannot hold a %s", t)
}

// decoder sets Go values from the config's JSON values and gathers every
// fault, each at its place in the file.
type decoder struct {
	data []byte
	file string
	errs []error
}

// maxFaults bounds the faults reported for one section or file: past it
// a fix of the first ones is due, and a huge hostile list costs no more.
const maxFaults = 50

func (d *decoder) fault(off int, field, format string, args ...any) {
	switch {
	case len(d.errs) > maxFaults:
		return
	case len(d.errs) == maxFaults:
		format, args = "more faults after the first %d are not listed", []any{maxFaults}
	}
	e := errorAt(d.data, off, field, format, args...)
	e.File = d.file
	d.errs = append(d.errs, e)
}

// object decodes v into struct dst: every key must be one of the struct's,
// or one of alsoKnown (keys handled elsewhere, which are skipped).
func (d *decoder) object(dst reflect.Value, v *value, path string, alsoKnown ...string) {
	if v.kind != kindObject {
		d.fault(v.start, path, "want an object, got %s", gotText(d.data, v))
		return
	}
	s, err := schemaOf(dst.Type())
	if err != nil {
		d.fault(v.start, path, "%v", err)
		return
	}
	for _, m := range v.members {
		f := s.field(m.key)
		if f == nil {
			if !contains(alsoKnown, m.key) {
				d.fault(m.keyPos, path, "%s", unknownName("key", m.key, append(s.keys(), alsoKnown...)))
			}
			continue
		}
		d.value(dst.Field(f.index), m.val, joinPath(path, m.key), f.lim)
	}
}

// value decodes v into dst, a value of any type schemaOf accepts.
func (d *decoder) value(dst reflect.Value, v *value, path string, lim limits) {
	t := dst.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if v.kind == kindNull {
			dst.SetZero()
			return
		}
		p := reflect.New(t.Elem())
		n := len(d.errs)
		if d.value(p.Elem(), v, path, lim); len(d.errs) == n {
			dst.Set(p)
		}
	case reflect.Struct:
		d.object(dst, v, path)
	case reflect.Slice:
		if v.kind != kindArray {
			d.wrongType(v, path, t, lim)
			return
		}
		s := reflect.MakeSlice(t, len(v.elems), len(v.elems))
		for i, e := range v.elems {
			d.value(s.Index(i), e, fmt.Sprintf("%s[%d]", path, i), lim)
		}
		dst.Set(s)
	case reflect.String:
		if v.kind != kindString {
			d.wrongType(v, path, t, lim)
			return
		}
		dst.SetString(v.text)
	case reflect.Bool:
		if v.kind != kindBool {
			d.wrongType(v, path, t, lim)
			return
		}
		dst.SetBool(v.boolean)
	default:
		d.number(dst, v, path, lim)
	}
}

// number decodes v into an integer or float dst within lim and the type's
// own bounds.
func (d *decoder) number(dst reflect.Value, v *value, path string, lim limits) {
	t := dst.Type()
	if v.kind != kindNumber {
		d.wrongType(v, path, t, lim)
		return
	}
	f, err := strconv.ParseFloat(v.text, 64)
	overType := err != nil // beyond float64
	inLimits := func(x float64) bool { return x >= lim.min && x <= lim.max }
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		overType = overType || dst.OverflowFloat(f)
		if !overType && inLimits(f) {
			dst.SetFloat(f)
			return
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !overType && f != math.Trunc(f) {
			d.wrongType(v, path, t, lim)
			return
		}
		i, err := strconv.ParseInt(v.text, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) && f >= math.MinInt64 && f < math.MaxInt64 {
			i, err = int64(f), nil // written with a fraction or exponent: 1e3, 2.0
		}
		overType = overType || err != nil || dst.OverflowInt(i)
		if !overType && inLimits(float64(i)) {
			dst.SetInt(i)
			return
		}
	default: // unsigned
		if !overType && f != math.Trunc(f) {
			d.wrongType(v, path, t, lim)
			return
		}
		u, err := strconv.ParseUint(v.text, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) && f >= 0 && f < math.MaxUint64 {
			u, err = uint64(f), nil
		}
		overType = overType || err != nil || dst.OverflowUint(u)
		if !overType && inLimits(float64(u)) {
			dst.SetUint(u)
			return
		}
	}
	d.fault(v.start, path, "%s", rangeFault(t, lim, v.text, overType))
}

func (d *decoder) wrongType(v *value, path string, t reflect.Type, lim limits) {
	d.fault(v.start, path, "want %s, got %s", describe(t, lim, false), gotText(d.data, v))
}

// describe says in words what a value of type t within lim is: "a number of
// seconds between 0.001 and 86400", "a list of strings".
func describe(t reflect.Type, lim limits, plural bool) string {
	pick := func(one, many string) string {
		if plural {
			return many
		}
		return one
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describe(t.Elem(), lim, plural)
	case reflect.Slice:
		return pick("a list of ", "lists of ") + describe(t.Elem(), lim, true)
	case reflect.Struct:
		return pick("an object", "objects")
	case reflect.String:
		return pick("a string", "strings")
	case reflect.Bool:
		return pick("true or false", "true or false values")
	}
	noun := pick("a number", "numbers")
	if t.Kind() != reflect.Float32 && t.Kind() != reflect.Float64 {
		noun = pick("a whole number", "whole numbers")
	}
	if lim.unit != "" {
		noun += " of " + lim.unit
	}
	if r := rangeText(lim.minText, lim.maxText); r != "" {
		noun += " " + r
	}
	return noun
}

// rangeText is lim in words: "between 0 and 86400", "≥ 0", "" when
// unbounded.
func rangeText(lo, hi string) string {
	switch {
	case lo != "" && hi != "":
		return "between " + lo + " and " + hi
	case lo != "":
		return "≥ " + lo
	case hi != "":
		return "≤ " + hi
	}
	return ""
}

// rangeFault is the message for value text outside lim, or (overType)
// outside what integer type t holds: the bounds it broke, in the unit.
func rangeFault(t reflect.Type, lim limits, text string, overType bool) string {
	lo, hi := lim.minText, lim.maxText
	if tlo, thi := typeBounds(t); overType {
		lo, hi = cmp.Or(lo, tlo), cmp.Or(hi, thi)
	}
	r := rangeText(lo, hi)
	if r == "" {
		r = "a finite number"
	} else if lim.unit != "" {
		r += " " + lim.unit
	}
	return "must be " + r + ", got " + text
}

// typeBounds are integer type t's smallest and largest values; "" for
// floats.
func typeBounds(t reflect.Type) (lo, hi string) {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "0", strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10)
	}
	return "", ""
}

// gotText shows a value as the file has it, shortened: "\"1\"", "-5", "an
// object".
func gotText(data []byte, v *value) string {
	switch v.kind {
	case kindObject:
		return "an object"
	case kindArray:
		return "a list"
	}
	text := string(data[v.start:v.end])
	if r := []rune(text); len(r) > 40 {
		text = string(r[:37]) + "…"
	}
	return text
}

func quote(s string) string { return strconv.Quote(s) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
