package install

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConstraintParse restates operator-framework/api's constraints
// TestParse (v0.35.0, pkg/constraints/constraint_test.go) on our reading
// of olm.constraint, checked through the predicate it becomes (its key),
// and adds the errors OLM's predicate conversion gives.
func TestConstraintParse(t *testing.T) {
	compound := func(kind string) string {
		return `{"failureMessage": "blah", "` + kind + `": {"constraints": [{"failureMessage": "blah blah", "package": {"packageName": "fuz", "versionRange": ">=1.0.0"}}]}}`
	}
	for _, tc := range []struct {
		name, value, key, err string
	}{
		{name: "Valid/BasicGVK", value: `{"failureMessage": "blah", "gvk": {"group": "example.com", "version": "v1", "kind": "Foo"}}`, key: "gvk(example.com/v1/Foo)"},
		{name: "Valid/BasicPackage", value: `{"failureMessage": "blah", "package": {"packageName": "foo", "versionRange": ">=1.0.0"}}`, key: "all(pkg(foo),version(>=1.0.0))"},
		{name: "Valid/BasicAll", value: compound("all"), key: "all(all(pkg(fuz),version(>=1.0.0)))"},
		{name: "Valid/BasicAny", value: compound("any"), key: "any(all(pkg(fuz),version(>=1.0.0)))"},
		{name: "Valid/BasicNot", value: compound("not"), key: "not(all(pkg(fuz),version(>=1.0.0)))"},
		{name: "Valid/Complex", value: `{"failureMessage": "blah", "all": {"constraints": [
			{"package": {"packageName": "fuz", "versionRange": ">=1.0.0"}},
			{"gvk": {"group": "fals.example.com", "version": "v1", "kind": "Fal"}},
			{"failureMessage": "foo and buf must be stable versions", "all": {"constraints": [
				{"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
				{"package": {"packageName": "buf", "versionRange": ">=1.0.0"}},
				{"gvk": {"group": "foos.example.com", "version": "v1", "kind": "Foo"}}]}},
			{"failureMessage": "blah blah", "any": {"constraints": [
				{"gvk": {"group": "foos.example.com", "version": "v1beta1", "kind": "Foo"}},
				{"gvk": {"group": "foos.example.com", "version": "v1beta2", "kind": "Foo"}},
				{"gvk": {"group": "foos.example.com", "version": "v1", "kind": "Foo"}}]}},
			{"not": {"constraints": [{"gvk": {"group": "bazs.example.com", "version": "v1alpha1", "kind": "Baz"}}]}}]}}`,
			key: "all(all(pkg(fuz),version(>=1.0.0)),gvk(fals.example.com/v1/Fal),all(all(pkg(foo),version(>=1.0.0)),all(pkg(buf),version(>=1.0.0)),gvk(foos.example.com/v1/Foo)),any(gvk(foos.example.com/v1beta1/Foo),gvk(foos.example.com/v1beta2/Foo),gvk(foos.example.com/v1/Foo)),not(gvk(bazs.example.com/v1alpha1/Baz)))"},
		{name: "Invalid/TooLarge", value: `{"failureMessage": "` + strings.Repeat("x", maxConstraintSize) + `"}`,
			err: "olm.constraint value is greater than max constraint size 131072 bytes"},
		{name: "Invalid/UnknownField", value: `{"failureMessage": "something", "arbitrary": {"key": "value"}}`, err: `json: unknown field "arbitrary"`},
		// OLM's conversion: the first kind wins; an empty constraint, a bad
		// range and a CEL rule that does not compile are errors.
		{name: "gvk before package", value: `{"package": {"packageName": "foo", "versionRange": ">=1.0.0"}, "gvk": {"group": "g", "version": "v", "kind": "K"}}`, key: "gvk(g/v/K)"},
		{name: "empty", value: `{"failureMessage": "nothing"}`, err: "convert olm.constraint to resolver predicate: constraint is empty"},
		{name: "empty nested", value: `{"all": {"constraints": [{}]}}`, err: "constraint is empty"},
		{name: "bad range", value: `{"package": {"packageName": "foo", "versionRange": "latest"}}`, err: "convert olm.constraint to resolver predicate"},
		{name: "cel not bool", value: `{"cel": {"rule": "properties.size()"}}`, err: "cel expressions must have type Bool"},
		{name: "cel", value: `{"cel": {"rule": "properties.exists(p, p.type == 'x')"}}`, key: `cel("properties.exists(p, p.type == 'x')")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c compiler
			p, err := c.property(Property{Type: "olm.constraint", Value: json.RawMessage(tc.value)})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.key() != tc.key {
				t.Errorf("predicate %s, want %s", p.key(), tc.key)
			}
		})
	}
}

// TestPredicateWords: OLM's wording of its predicates, which its
// messages carry, and ours.
func TestPredicateWords(t *testing.T) {
	var c compiler
	p, err := c.property(Property{Type: "olm.constraint", Value: json.RawMessage(`{"all": {"constraints": [
		{"package": {"packageName": "etcd", "versionRange": ">=0.9.0"}},
		{"not": {"constraints": [{"gvk": {"group": "g", "version": "v1", "kind": "K"}}]}}]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), "with package: etcd and with version in range: >=0.9.0 and providing an API with group: g, version: v1, kind: K"; got != want {
		t.Errorf("OLM's words %q, want %q", got, want)
	}
	if got, want := p.words(), "(package etcd in range >=0.9.0 and none of (GVK g/v1/K))"; got != want {
		t.Errorf("words %q, want %q", got, want)
	}
}
