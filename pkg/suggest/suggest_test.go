package suggest

import "testing"

func TestClosest(t *testing.T) {
	pkgs := []string{"infinispan", "etcd", "prometheus", "elasticsearch-operator", "strimzi-kafka-operator"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"infinispn", "infinispan", true},  // a deletion
		{"Infinispan", "infinispan", true}, // case
		{"etdc", "etcd", true},             // a swap
		{"etc", "etcd", true},              // short: one edit
		{"ectd2", "etcd", true},            // swap + insertion, 5 letters: two edits
		{"prometheus", "prometheus", true}, // exact
		{"strimzi", "", false},             // a prefix, too far
		{"kafka", "", false},               // unrelated
		{"elasticsearch-operatr", "elasticsearch-operator", true},
		{"xy", "", false},
		{"", "", false},
	} {
		got, ok := Closest(tc.name, pkgs)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got := DidYouMean("infinispn", pkgs); got != "; did you mean infinispan?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("etcd", pkgs); got != "" {
		t.Errorf("DidYouMean of an exact name = %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"abc", "acb", 1}, {"ca", "abc", 3},
	} {
		if got := distance([]rune(tc.a), []rune(tc.b)); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
