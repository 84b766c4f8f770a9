// Package suggest finds the name a person probably meant when they typed
// one that does not exist: "package \"infinispn\" not found; did you mean
// infinispan?".
package suggest

import "strings"

// Closest returns the candidate nearest to name, by edit distance
// (insertions, deletions, substitutions and swaps of neighbours, ignoring
// case), when it is near enough to be a typing mistake: at most one edit
// for names of up to four characters, two up to eight, three beyond.
// Exact matches and ties go to the first candidate; ok is false when no
// candidate is near enough.
func Closest(name string, candidates []string) (best string, ok bool) {
	limit := 3
	switch n := len([]rune(name)); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	a := []rune(strings.ToLower(name))
	bestDist := limit + 1
	for _, c := range candidates {
		b := []rune(strings.ToLower(c))
		if abs(len(a)-len(b)) >= bestDist {
			continue
		}
		if d := distance(a, b); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist <= limit
}

// DidYouMean returns "; did you mean X?" for the closest candidate, or "".
func DidYouMean(name string, candidates []string) string {
	if c, ok := Closest(name, candidates); ok && c != name {
		return "; did you mean " + c + "?"
	}
	return ""
}

// distance is the optimal string alignment distance of a and b.
func distance(a, b []rune) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
