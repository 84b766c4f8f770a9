package testutil

// The differential tests compare us with upstream over corpora: every
// real catalog, every recorded upstream case, every file of the test
// data, mutants of every fixture. The race suite (go test -race ./...,
// hack/test.sh) runs a fixed sample of each, chosen to keep every kind of
// input, so that a regression is still caught there; the corpus build
// (go test -tags corpus, make test-corpus, which CI runs after the race
// suite, without -race) runs all of it. docs/tests.md says what runs
// where.

// Sample returns items whole in the corpus build; otherwise n of them
// spread evenly over items, the first and the last included: always the
// same ones, in their order.
func Sample[T any](items []T, n int) []T {
	if Corpus || len(items) <= n {
		return items
	}
	if n <= 1 {
		return items[:max(n, 0)]
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, items[i*(len(items)-1)/(n-1)])
	}
	return out
}

// Cover returns items whole in the corpus build; otherwise a sample in
// which every feature of any item (features(item): what it exercises, say
// its fixture and its way of calling the command) is still exercised by
// at least one item. Items are chosen greedily, the one bringing the most
// features not yet covered first (the earliest on a tie), so that the
// features are spread over few items; they are returned in their order.
func Cover[T any](items []T, features func(T) []string) []T {
	if Corpus {
		return items
	}
	fs := make([][]string, len(items))
	uncovered := map[string]bool{}
	for i, it := range items {
		seen := map[string]bool{}
		for _, f := range features(it) {
			if !seen[f] {
				seen[f] = true
				fs[i] = append(fs[i], f)
				uncovered[f] = true
			}
		}
	}
	chosen := make([]bool, len(items))
	for len(uncovered) > 0 {
		best, bestN := -1, 0
		for i := range items {
			n := 0
			for _, f := range fs[i] {
				if uncovered[f] {
					n++
				}
			}
			if n > bestN {
				best, bestN = i, n
			}
		}
		chosen[best] = true
		for _, f := range fs[best] {
			delete(uncovered, f)
		}
	}
	var out []T
	for i, it := range items {
		if chosen[i] {
			out = append(out, it)
		}
	}
	return out
}
