package suggest

import (
	"slices"
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	pkgs := []string{"infinispan", "etcd", "prometheus", "strimzi-kafka-operator", "grafana-operator", "Kiali"}
	for _, tc := range []struct {
		name, want string
	}{
		{"infinispn", "infinispan"},  // a letter left out
		{"ectd", "etcd"},             // two letters swapped
		{"promethues", "prometheus"}, // swapped
		{"strimzi-kafka-operater", "strimzi-kafka-operator"},
		{"kiali", "Kiali"}, // case
		{"grafana", ""},    // too far: a prefix is not a typo
		{"etcd", ""},       // there: nothing to suggest
		{"x", ""},          // one letter from nothing
		{"zzzzzzzz", ""},
	} {
		if got := strings.Join(Nearest(tc.name, pkgs), " "); got != tc.want {
			t.Errorf("Nearest(%q) = %q; want %q", tc.name, got, tc.want)
		}
	}
	if h := Hint("infinispn", pkgs); h != "; did you mean infinispan?" {
		t.Errorf("Hint: %q", h)
	}
	if h := Hint("nothing-like-it", pkgs); h != "" {
		t.Errorf("Hint: %q", h)
	}

	// Lengths count runes: a name in other scripts is as near as a Latin
	// one with the same edits.
	if got := Nearest("оператор-кафкы", []string{"оператор-кафки", "etcd"}); !slices.Equal(got, []string{"оператор-кафки"}) {
		t.Errorf("Cyrillic: %q", got)
	}
	// A name as long as MaxName still gets its suggestion; a longer one,
	// from a request say, none.
	long := strings.Repeat("a", MaxName-1)
	if got := Nearest(long+"b", []string{long + "c"}); !slices.Equal(got, []string{long + "c"}) {
		t.Errorf("a name of MaxName runes: %q", got)
	}
	if got := Nearest(long+"bb", []string{long + "bc"}); got != nil {
		t.Errorf("a name longer than MaxName got %q", got)
	}
}

// TestNearestTies: names equally near are all offered, in sorted order
// whatever the candidates' order, never one picked among them (issue 27:
// release-v2.8 got "did you mean release-v2.3?" when release-v2.3 …
// release-v2.7 are all one edit away); a hint names MaxShown and counts
// the others.
func TestNearestTies(t *testing.T) {
	channels := []string{"release-v2.7", "release-v2.5", "stable", "release-v2.3", "release-v2.6", "release-v2.4"}
	want := []string{"release-v2.3", "release-v2.4", "release-v2.5", "release-v2.6", "release-v2.7"}
	if got := Nearest("release-v2.8", channels); !slices.Equal(got, want) {
		t.Errorf("Nearest: %q", got)
	}
	slices.Reverse(channels)
	if got := Nearest("release-v2.8", channels); !slices.Equal(got, want) {
		t.Errorf("Nearest, candidates reversed: %q", got)
	}
	for _, tc := range []struct {
		cands []string
		want  string
	}{
		{channels, "; did you mean release-v2.3, release-v2.4, release-v2.5 or 2 others?"},
		{[]string{"release-v2.3", "release-v2.4", "release-v2.5", "release-v2.6"}, "; did you mean release-v2.3, release-v2.4, release-v2.5 or 1 other?"},
		{[]string{"release-v2.5", "release-v2.3", "release-v2.4"}, "; did you mean release-v2.3, release-v2.4 or release-v2.5?"},
		{[]string{"release-v2.4", "release-v2.3"}, "; did you mean release-v2.3 or release-v2.4?"},
		// A nearer one wins over the ties, in any order.
		{[]string{"release-v2.3", "Release-v2.8", "release-v2.4"}, "; did you mean Release-v2.8?"},
		{[]string{"Release-v2.8", "release-v2.3", "release-v2.4"}, "; did you mean Release-v2.8?"},
		// The same name twice (a bundle in two channels) is one.
		{[]string{"release-v2.3", "release-v2.3"}, "; did you mean release-v2.3?"},
	} {
		if got := Hint("release-v2.8", tc.cands); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.cands, got, tc.want)
		}
	}
	// Bundles: the ties that are other versions are dropped, the typos
	// kept.
	if got := BundleHint("etcdoprator.v0.9.2", []string{"etcdoperator.v0.9.2", "etcdoprator.v0.9.3", "etcdopreator.v0.9.2"}); got != "; did you mean etcdoperator.v0.9.2 or etcdopreator.v0.9.2?" {
		t.Errorf("BundleHint: %q", got)
	}
}

func TestNearestBundle(t *testing.T) {
	bundles := []string{"etcdoperator.v0.9.0", "etcdoperator.v0.9.2", "kubecost-operator.v2.8.0"}
	for _, tc := range []struct {
		name, want string
	}{
		{"etcdoprator.v0.9.2", "etcdoperator.v0.9.2"}, // a typo in the name
		{"etcdoperator.v0.9.1", ""},                   // another version
		{"kubecost-operator.v2.1.0", ""},
		{"kubecost-operator.v2.8", "kubecost-operator.v2.8.0"}, // a version written short
		{"etcdoperator.v0.9.2", ""},                            // there
	} {
		if got := strings.Join(NearestBundle(tc.name, bundles), " "); got != tc.want {
			t.Errorf("NearestBundle(%q) = %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"abc", "acb", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
		{"héllo", "hello", 1},
	} {
		if d := distance(tc.a, tc.b); d != tc.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}
