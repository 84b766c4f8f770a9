package schema

import (
	"encoding/json"
	"testing"
)

// checkAgainstReference fails t when Check and the whole-blob reference
// disagree on blob, or when Check's result is not sorted.
func checkAgainstReference(t testing.TB, c *Checker, name, schemaName string, blob []byte) []Violation {
	t.Helper()
	got := c.Check(schemaName, blob)
	ref := referenceParts(c, schemaName, blob)
	if d := diffViolations(got, ref.vs); d != "" {
		t.Errorf("%s: Check and the reference disagree on\n%s\n%s", name, blob, d)
	}
	checkWhole(t, c, name, schemaName, blob, ref)
	return got
}

// checkWhole fails t when the violations of a blob whose nested
// constraints all pass are not those of the whole blob evaluated at once:
// checking nested constraints on their own must change nothing for them.
// A blob with a failing nested constraint still gets the whole blob's
// verdict. Constraints nested deeper than wholeDepth are not evaluated
// whole: CUE takes too long.
func checkWhole(t testing.TB, c *Checker, name, schemaName string, blob []byte, ref reference) {
	t.Helper()
	if !ref.constraints || ref.depth > wholeDepth {
		return
	}
	whole := wholeReference(c, schemaName, blob)
	if ref.nestedFail {
		if ref.vs == nil || whole == nil {
			t.Errorf("%s: the reference and the whole blob disagree on the verdict of\n%s\n%s", name, blob, diffViolations(ref.vs, whole))
		}
		return
	}
	if d := diffViolations(ref.vs, whole); d != "" {
		t.Errorf("%s: checking nested constraints on their own changed the violations of\n%s\n%s", name, blob, d)
	}
}

// TestCheckMatchesReferenceOnFixtures: on every blob of the copied real
// catalogs, and on variants of each with every list reversed and
// duplicated, Check agrees with the whole-blob reference.
func TestCheckMatchesReferenceOnFixtures(t *testing.T) {
	c := sharedChecker(t)
	for _, b := range fixtures(t) {
		checkAgainstReference(t, c, b.name, b.schema, b.data)
		var v any
		if err := json.Unmarshal(b.data, &v); err != nil {
			t.Fatal(err)
		}
		for _, variant := range []func(any) any{reverseLists, duplicateLists} {
			data, err := encodeCanonical(variant(v))
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstReference(t, c, b.name+" (variant)", b.schema, data)
		}
	}
}

// reverseLists returns a copy of v with every list reversed.
func reverseLists(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = reverseLists(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[len(v)-1-i] = reverseLists(x)
		}
		return l
	}
	return v
}

// duplicateLists returns a copy of v with every list's elements repeated.
func duplicateLists(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = duplicateLists(x)
		}
		return m
	case []any:
		l := make([]any, 0, 2*len(v))
		for _, x := range v {
			l = append(l, duplicateLists(x))
		}
		for _, x := range v {
			l = append(l, duplicateLists(x))
		}
		return l
	}
	return v
}
