package config

import (
	"slices"
	"sort"
	"strings"
)

// Suggest is the name among known that name is most likely a typo of
// ("budget" → "budget_s", "cdua" → "cuda"), or "" when none is close: at
// most a third of name's length in edits (one at least), where an edit
// inserts, deletes or changes a character or swaps two neighbours, and case
// does not count.
func Suggest(name string, known []string) string {
	best, bestDist := "", max(1, len([]rune(name))/3)+1
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance counts the insertions, deletions, changes and swaps of
// neighbouring characters that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// rows[i][j] is the distance between ra[:i] and rb[:j]; three rows
	// suffice, the swap looking two back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// unknownName is the message for a name that is not one of known: with the
// closest known name when there is one, else every known name.
func unknownName(what, name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return "unknown " + what + " " + quote(name) + "; did you mean " + quote(s) + "?"
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	sorted = slices.Compact(sorted)
	return "unknown " + what + " " + quote(name) + " (known: " + strings.Join(sorted, ", ") + ")"
}
