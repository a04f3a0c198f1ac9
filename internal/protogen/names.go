package protogen

import (
	"strings"
	"unicode"
)

// goWords are the words of JSON names that Go spells other than
// capitalized (Go's initialisms and the package's own spellings).
var goWords = map[string]string{
	"id": "ID", "ok": "OK", "noc": "NOC", "dram": "DRAM", "ns": "NS", "b64": "B64",
	"fp32": "FP32", "cbs": "CBs", "cb": "CB", "dtype": "DType", "dprint": "DPrint",
	"url": "URL", "json": "JSON", "cpu": "CPU", "gpu": "GPU",
}

// goName is the Go spelling of a lower_case name: cache_dir is CacheDir,
// source_b64 SourceB64, cbs CBs.
func goName(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if g, ok := goWords[w]; ok {
			b.WriteString(g)
			continue
		}
		b.WriteString(capitalize(w))
	}
	return b.String()
}

func capitalize(w string) string {
	if w == "" {
		return w
	}
	r := []rune(w)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// cppEnumerator is a protocol name as a C++ enumerator: a name that has a
// capital letter already (Float16_b, HiFi4) as it is, a lower_case one in
// CamelCase (height_sharded is HeightSharded, riscv_0 Riscv0).
func cppEnumerator(name string) string {
	if strings.ToLower(name) != name {
		return name
	}
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		b.WriteString(capitalize(w))
	}
	return b.String()
}

// snake is a CamelCase name in snake_case, initialisms kept together:
// CBIndex is cb_index, DRAM dram, ReplyHeader reply_header.
func snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (unicode.IsUpper(r[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// cppKeywords are the C++ keywords a lower_case field name could be.
var cppKeywords = map[string]bool{
	"alignas": true, "alignof": true, "and": true, "asm": true, "auto": true, "bool": true,
	"break": true, "case": true, "catch": true, "char": true, "class": true, "concept": true,
	"const": true, "consteval": true, "constexpr": true, "constinit": true, "continue": true,
	"decltype": true, "default": true, "delete": true, "do": true, "double": true, "else": true,
	"enum": true, "explicit": true, "export": true, "extern": true, "false": true, "float": true,
	"for": true, "friend": true, "goto": true, "if": true, "inline": true, "int": true,
	"long": true, "mutable": true, "namespace": true, "new": true, "noexcept": true, "not": true,
	"nullptr": true, "operator": true, "or": true, "private": true, "protected": true,
	"public": true, "register": true, "requires": true, "return": true, "short": true,
	"signed": true, "sizeof": true, "static": true, "struct": true, "switch": true,
	"template": true, "this": true, "throw": true, "true": true, "try": true, "typedef": true,
	"typeid": true, "typename": true, "union": true, "unsigned": true, "using": true,
	"virtual": true, "void": true, "volatile": true, "while": true, "xor": true,
}

// cppIdent is a field name as a C++ identifier (a keyword gets a trailing _).
func cppIdent(name string) string {
	if cppKeywords[name] {
		return name + "_"
	}
	return name
}
