package suggest

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
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
		got, ok := Closest(tc.name, pkgs)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Closest(%q) = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
	// Ties go to the first in sorted order, whatever the input order.
	for _, cands := range [][]string{{"stable-v2", "stable-v1"}, {"stable-v1", "stable-v2"}} {
		if got, _ := Closest("stable-v3", cands); got != "stable-v1" {
			t.Errorf("tie %v: %q", cands, got)
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
	if got, _ := Closest("оператор-кафкы", []string{"оператор-кафки", "etcd"}); got != "оператор-кафки" {
		t.Errorf("Cyrillic: %q", got)
	}
	// A name as long as MaxName still gets its suggestion; a longer one,
	// from a request say, none.
	long := strings.Repeat("a", MaxName-1)
	if got, _ := Closest(long+"b", []string{long + "c"}); got != long+"c" {
		t.Errorf("a name of MaxName runes: %q", got)
	}
	if got, ok := Closest(long+"bb", []string{long + "bc"}); ok {
		t.Errorf("a name longer than MaxName got %q", got)
	}
}

func TestClosestBundle(t *testing.T) {
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
		got, ok := ClosestBundle(tc.name, bundles)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("ClosestBundle(%q) = %q, %v; want %q", tc.name, got, ok, tc.want)
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
