package testutil

import (
	"slices"
	"strconv"
	"testing"
)

func TestSample(t *testing.T) {
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	got := Sample(items, 5)
	if Corpus {
		if !slices.Equal(got, items) {
			t.Errorf("corpus build: Sample gave %v, want every item", got)
		}
		return
	}
	if want := []int{0, 24, 49, 74, 99}; !slices.Equal(got, want) {
		t.Errorf("Sample(0..99, 5) = %v, want %v", got, want)
	}
	if got := Sample(items[:3], 5); !slices.Equal(got, items[:3]) {
		t.Errorf("Sample of fewer items than asked = %v, want them all", got)
	}
	if got := Sample(items, 1); !slices.Equal(got, []int{0}) {
		t.Errorf("Sample(0..99, 1) = %v, want [0]", got)
	}
	if got := Sample(items, 0); len(got) != 0 {
		t.Errorf("Sample(0..99, 0) = %v, want nothing", got)
	}
}

func TestCover(t *testing.T) {
	// Cases "<fixture>.<way>": every fixture and every way must stay
	// covered, by few cases.
	type c struct{ fixture, way string }
	var items []c
	for f := range 6 {
		for _, w := range []string{"a", "b", "c"} {
			items = append(items, c{"f" + strconv.Itoa(f), w})
		}
	}
	items = append(items, c{"f0", "rare"})
	got := Cover(items, func(x c) []string { return []string{"fixture " + x.fixture, "way " + x.way} })
	if Corpus {
		if !slices.Equal(got, items) {
			t.Errorf("corpus build: Cover gave %v, want every item", got)
		}
		return
	}
	fixtures, ways := map[string]bool{}, map[string]bool{}
	for _, x := range got {
		fixtures[x.fixture], ways[x.way] = true, true
	}
	if len(fixtures) != 6 || len(ways) != 4 {
		t.Errorf("Cover lost a feature: %v", got)
	}
	if len(got) > 7 {
		t.Errorf("Cover kept %d items, want at most 7: %v", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		if slices.Index(items, got[i-1]) > slices.Index(items, got[i]) {
			t.Errorf("Cover changed the order: %v", got)
		}
	}
}
