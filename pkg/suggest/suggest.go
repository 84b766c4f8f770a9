// Package suggest finds the name a person probably meant when the one
// they typed is not there: "package \"infinispn\" not found; did you mean
// infinispan?". The commands that name packages, channels and bundles use
// it in their errors.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// MaxName is the longest name, in runes, Closest looks for.
const MaxName = 256

// Closest returns the candidate nearest to name, and true, when one is
// near enough to be a likely typo: equal but for case, or at most a third
// of name's letters (at least one) inserted, deleted, changed or swapped
// with a neighbour. Among equally near candidates the first in sorted order
// wins, so the answer does not depend on the candidates' order. It returns
// "", false when none is near, or when name is itself a candidate. A name
// longer than MaxName runes gets no suggestion: no catalog name is that
// long, and the comparison's cost grows with the product of the lengths
// (a server answers names from requests).
func Closest(name string, candidates []string) (string, bool) {
	n := utf8.RuneCountInString(name)
	if n > MaxName {
		return "", false
	}
	limit := max(1, n/3)
	lower := strings.ToLower(name)
	ln := utf8.RuneCountInString(lower)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == name {
			return "", false
		}
		// A length difference alone exceeds the limit (the distance is
		// at least the difference): no need to compute.
		lc := strings.ToLower(c)
		if d := utf8.RuneCountInString(lc) - ln; d > limit || -d > limit {
			continue
		}
		d := distance(lower, lc)
		if d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if bestDist > limit {
		return "", false
	}
	return best, true
}

// ClosestBundle is Closest for bundle names, which carry versions: a
// name that differs from name only in its digits (etcd.v0.9.3 for
// etcd.v0.9.2) is another version, likely one the catalog no longer has,
// not a typo, so it is not suggested.
func ClosestBundle(name string, candidates []string) (string, bool) {
	c, ok := Closest(name, candidates)
	if !ok || withoutDigits(c) == withoutDigits(name) {
		return "", false
	}
	return c, true
}

func withoutDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// Hint returns "; did you mean X?" for Closest's answer, or "".
func Hint(name string, candidates []string) string {
	return hint(Closest(name, candidates))
}

// BundleHint is Hint for bundle names: "; did you mean X?" for
// ClosestBundle's answer, or "".
func BundleHint(name string, candidates []string) string {
	return hint(ClosestBundle(name, candidates))
}

func hint(c string, ok bool) string {
	if !ok {
		return ""
	}
	return "; did you mean " + c + "?"
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
