// Package suggest finds the name a person probably meant when the one
// they typed is not there: "package \"infinispn\" not found; did you mean
// infinispan?". The commands that name packages, channels and bundles use
// it in their errors.
//
// Several names equally near are all offered, never one of them picked:
// "release-v2.8" is one edit from each of release-v2.3 … release-v2.7,
// and nothing says which was meant. A hint names up to MaxShown of them,
// in sorted order, and counts the rest: "did you mean release-v2.3,
// release-v2.4, release-v2.5 or 2 others?".
package suggest

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxName is the longest name, in runes, Nearest looks for.
const MaxName = 256

// MaxShown is how many equally near names a hint names; the others are
// counted ("or 2 others").
const MaxShown = 3

// Nearest returns the candidates nearest to name when they are near
// enough to be a likely typo: equal but for case, or at most a third of
// name's letters (at least one) inserted, deleted, changed or swapped
// with a neighbour. Every candidate at that distance is returned, in
// sorted order (each once): when several are equally near, nothing tells
// which one was meant, so none is picked over the others. It returns nil
// when none is near, or when name is itself a candidate. A name longer
// than MaxName runes gets no suggestion: no catalog name is that long,
// and the comparison's cost grows with the product of the lengths (a
// server answers names from requests).
func Nearest(name string, candidates []string) []string {
	n := utf8.RuneCountInString(name)
	if n > MaxName {
		return nil
	}
	limit := max(1, n/3)
	lower := strings.ToLower(name)
	ln := utf8.RuneCountInString(lower)
	var best []string
	bestDist := limit + 1
	for _, c := range candidates {
		if c == name {
			return nil
		}
		// A length difference alone exceeds the limit, or the nearest
		// distance so far (the distance is at least the difference): no
		// need to compute.
		lc := strings.ToLower(c)
		if d, most := utf8.RuneCountInString(lc)-ln, min(limit, bestDist); d > most || -d > most {
			continue
		}
		switch d := distance(lower, lc); {
		case d < bestDist:
			best, bestDist = append(best[:0], c), d
		case d == bestDist:
			best = append(best, c)
		}
	}
	if bestDist > limit {
		return nil
	}
	slices.Sort(best)
	return slices.Compact(best)
}

// NearestBundle is Nearest for bundle names, which carry versions: a
// name that differs from name only in its digits (etcd.v0.9.3 for
// etcd.v0.9.2) is another version, likely one the catalog no longer has,
// not a typo, so it is not suggested.
func NearestBundle(name string, candidates []string) []string {
	var out []string
	for _, c := range Nearest(name, candidates) {
		if withoutDigits(c) != withoutDigits(name) {
			out = append(out, c)
		}
	}
	return out
}

func withoutDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// Hint returns "; did you mean X?" for Nearest's answer ("X or Y", "X,
// Y or Z", "X, Y, Z or 2 others" when several are equally near), or ""
// when it has none.
func Hint(name string, candidates []string) string {
	return hint(Nearest(name, candidates))
}

// BundleHint is Hint for bundle names: NearestBundle's answer.
func BundleHint(name string, candidates []string) string {
	return hint(NearestBundle(name, candidates))
}

func hint(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + Words(names) + "?"
}

// Words joins names as a hint says them: "a", "a or b", "a, b or c",
// "a, b, c or 2 others" (at most MaxShown named).
func Words(names []string) string {
	switch n := len(names); {
	case n <= 1:
		return strings.Join(names, "")
	case n <= MaxShown:
		return strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	case n == MaxShown+1:
		return strings.Join(names[:MaxShown], ", ") + " or 1 other"
	default:
		return strings.Join(names[:MaxShown], ", ") + fmt.Sprintf(" or %d others", n-MaxShown)
	}
}

// distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbours.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before the previous (for swaps), the previous,
	// and the current.
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
