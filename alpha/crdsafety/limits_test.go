package crdsafety

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/validations"
)

// deepSchema is an object schema nesting objects n deep through the
// property "nested" (through anyOf when viaAnyOf), with at the bottom
// a string leaf and the strings named in extra.
func deepSchema(n int, viaAnyOf bool, leaf map[string]any, extra ...string) map[string]any {
	props := map[string]any{"leaf": leaf}
	for _, e := range extra {
		props[e] = map[string]any{"type": "string"}
	}
	s := map[string]any{"type": "object", "properties": props}
	for range n {
		if viaAnyOf {
			s = map[string]any{"type": "object", "anyOf": []any{s}}
		} else {
			s = map[string]any{"type": "object", "properties": map[string]any{"nested": s}}
		}
	}
	return s
}

// crdOf is a CRD of the given versions' schemas, the first stored, all
// served.
func crdOf(t testing.TB, schemas ...map[string]any) CRD {
	t.Helper()
	var vs []any
	for i, s := range schemas {
		vs = append(vs, map[string]any{"name": fmt.Sprintf("v%d", i+1), "served": true, "storage": i == 0,
			"schema": map[string]any{"openAPIV3Schema": s}})
	}
	js, err := json.Marshal(map[string]any{
		"apiVersion": APIVersionV1, "kind": crdKind, "metadata": map[string]any{"name": "things.deep.example.com"},
		"spec": map[string]any{"group": "deep.example.com", "scope": "Namespaced", "versions": vs,
			"names": map[string]any{"kind": "Thing", "plural": "things", "singular": "thing", "listKind": "ThingList"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return manifest(t, js)
}

// allocated is the number of bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCompareLinearInDepth: comparing a schema nested 2n deep allocates
// about twice what n deep does, not four times (crdify copies each
// property's subtree: 55 s and 2 GB for 1000 deep; issue 24). Counted in
// bytes allocated, not time; not parallel, so that no other test
// allocates meanwhile. A field added at the bottom, and the leaf given a
// maxLength (found 1000 deep, with its whole path).
func TestCompareLinearInDepth(t *testing.T) {
	c := newChecker(t)
	str := map[string]any{"type": "string"}
	tight := map[string]any{"type": "string", "maxLength": 63}
	measure := func(n int) uint64 {
		o := crdOf(t, deepSchema(n, false, str))
		nw := crdOf(t, deepSchema(n, false, tight, "added"))
		var got []Change
		b := allocated(func() { got = compareOne(t, c, o, nw) })
		path := "^" + strings.Repeat(".nested", n) + ".leaf"
		if len(got) != 1 || got[0].Field != path || got[0].Check != "maxLength" || got[0].V1 != Refuses {
			t.Fatalf("%d deep: %s", n, report(got))
		}
		return b
	}
	measure(100) // warm up
	small, large := measure(1000), measure(2000)
	if ratio := float64(large) / float64(small); ratio > 2.6 {
		t.Errorf("1000 deep: %d bytes allocated; 2000 deep: %d (%.1f times): not linear", small, large, ratio)
	}
}

// TestServedVersionsLimit: comparing every pair of served versions is
// quadratic in their number; past Limits.ServedProperties, it is not done,
// and the answer says so, with OLM v1's verdict not known.
func TestServedVersionsLimit(t *testing.T) {
	t.Parallel()
	// 12 versions, each requiring a field the one before did not.
	schemas := func(added bool) []map[string]any {
		var out []map[string]any
		for v := range 12 {
			s := deepSchema(3, false, map[string]any{"type": "string"})
			s["required"] = []any{fmt.Sprintf("f%d", v)}
			if added {
				s["properties"].(map[string]any)["added"] = map[string]any{"type": "string"}
			}
			out = append(out, s)
		}
		return out
	}
	o, n := crdOf(t, schemas(false)...), crdOf(t, schemas(true)...)
	if full := compareOne(t, newChecker(t), o, n); len(full) != 0 {
		t.Fatalf("the old CRD's pairs had the same issues:\n%s", report(full))
	}
	// Now with a new issue in each pair: each version requires a second
	// field of its own.
	nw := schemas(true)
	for i, s := range nw {
		s["required"] = []any{fmt.Sprintf("f%d", i), fmt.Sprintf("g%d", i)}
	}
	n = crdOf(t, nw...)
	full := compareOne(t, newChecker(t), o, n)
	served := 0
	for _, ch := range full {
		if strings.Contains(ch.Version, " -> ") {
			served++
		}
	}
	if served != 66 || len(full) != 66+12 { // 12·11/2 pairs; and each version requires a new field
		t.Fatalf("%d changes, %d of pairs of versions, want 66 of 78:\n%s", len(full), served, report(full))
	}
	small, err := NewCheckerWithLimits(Limits{ServedProperties: 100, SchemaBytes: DefaultLimits.SchemaBytes})
	if err != nil {
		t.Fatal(err)
	}
	got := compareOne(t, small, o, n)
	want := "CRD things.deep.example.com: limit: 12 served versions: comparing each pair of them (66 pairs) is past the limit of 100 schema properties looked up: they are not checked against each other (not checked: whether OLM v1 refuses it is not known)"
	if len(got) != 13 || got[0].String() != want || strings.Contains(report(got), " -> ") {
		t.Fatalf("got\n%swant the same versions' changes and\n  %s", report(got), want)
	}
	got = got[:1]
	r := Result{Changes: got}
	if v0, v1 := r.Refusals(); v0 != "" || v1 != NotChecked || r.Refused() || !got[0].NotChecked() {
		t.Errorf("refusals %q %q", v0, v1)
	}
	if s := r.Summary(); s != "1 CRD not fully checked, past a limit (not checked: whether OLM v1 refuses it is not known)" {
		t.Errorf("summary %q", s)
	}
}

// TestSchemaBytesLimit: a schema whose anyOf nest deep is compared whole
// at each level (crdify compares a property with its anyOf): past
// Limits.SchemaBytes the comparison stops, and the answer says where,
// with both OLMs' verdicts not known; with the other changes found before
// it stopped.
func TestSchemaBytesLimit(t *testing.T) {
	t.Parallel()
	o := crdOf(t, deepSchema(200, true, map[string]any{"type": "string"}))
	nwSchema := deepSchema(200, true, map[string]any{"type": "string", "maxLength": 1})
	nwSchema["required"] = []any{"x"}
	n := crdOf(t, nwSchema)
	full := compareOne(t, newChecker(t), o, n)
	if len(full) != 202 { // ^ requires x; ^ .. anyOf[0]^199 change (unhandled); the leaf's maxLength
		t.Fatalf("%d changes:\n%s", len(full), report(full))
	}
	small, err := NewCheckerWithLimits(Limits{ServedProperties: DefaultLimits.ServedProperties, SchemaBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got := compareOne(t, small, o, n)
	var limit []Change
	for _, ch := range got {
		switch {
		case ch.Check == "limit":
			limit = append(limit, ch)
		case !slices.Contains(full, ch):
			t.Errorf("found before the limit, but not without it: %s", ch)
		}
	}
	want := "CRD things.deep.example.com v1: limit: comparing the schemas is past the limit of 1 MiB of schema compared for one CRD: from here on, the CRD is not checked (not checked: whether OLM v0 and v1 refuse it is not known)"
	if len(limit) != 1 || limit[0].String() != want {
		t.Fatalf("limits %v, want\n  %s", limit, want)
	}
	if len(got) < 2 || len(got) > 200 {
		t.Errorf("%d changes before the limit", len(got)-1)
	}
	r := Result{Changes: got}
	// OLM v1 refuses the changes found; OLM v0 refuses them if
	// resources break, and what it does with the rest is not known.
	if v0, v1 := r.Refusals(); v0 != NotChecked || v1 != Refuses {
		t.Errorf("refusals %q %q", v0, v1)
	}
	if s := r.Summary(); !strings.HasSuffix(s, "; 1 CRD not fully checked, past a limit (not checked: whether OLM v0 and v1 refuse it is not known)") {
		t.Errorf("summary %q", s)
	}
}

// countdown is a context whose Err is Canceled from its n-th call on.
type countdown struct {
	context.Context
	n atomic.Int64
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestCompareCancel: a comparison checks its context as it goes, and
// stops when it is done; a stopped comparison is not remembered as an
// answer.
func TestCompareCancel(t *testing.T) {
	t.Parallel()
	// 20000 properties, each changed.
	wide := func(maxLength int) map[string]any {
		props := map[string]any{}
		for i := range 20000 {
			props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "string", "maxLength": maxLength}
		}
		return map[string]any{"type": "object", "properties": props}
	}
	o, n := crdOf(t, wide(2)), crdOf(t, wide(1))
	c := newChecker(t)
	ctx := &countdown{Context: context.Background()}
	ctx.n.Store(0) // done at the first check, after a mebibyte of work
	if _, err := c.Compare(ctx, []CRD{o}, []CRD{n}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Compare with a context done in the middle: %v", err)
	}
	if n := ctx.n.Load(); n != -1 {
		t.Errorf("the context was checked %d more times after it was done", -1-n)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Compare(done, []CRD{o}, []CRD{n}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Compare with a context done: %v", err)
	}
	got := compareCRDs(t, c, []CRD{o}, []CRD{n})
	if len(got) != 20000 || got[0].Check != "maxLength" {
		t.Fatalf("after two stopped comparisons: %d changes, the first %v", len(got), got[0])
	}
}

// TestWhoNotChecked: what a change not checked says of each OLM.
func TestWhoNotChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v0, v1 Verdict
		want   string
	}{
		{NotChecked, NotChecked, "not checked: whether OLM v0 and v1 refuse it is not known"},
		{"", NotChecked, "not checked: whether OLM v1 refuses it is not known"},
		{Refuses, NotChecked, "OLM v0 refuses it; whether OLM v1 refuses it is not known (not checked)"},
		{IfResourcesBreak, NotChecked, "OLM v0 refuses it if an existing resource breaks it; whether OLM v1 refuses it is not known (not checked)"},
		{NotChecked, Refuses, "OLM v1 refuses it; whether OLM v0 refuses it is not known (not checked)"},
	} {
		if got := (Change{V0: tc.v0, V1: tc.v1}).Who(); got != tc.want {
			t.Errorf("%q %q: %q, want %q", tc.v0, tc.v1, got, tc.want)
		}
	}
}

// TestUnhandledDeepLists: go-cmp's diff costs fourfold more with each list
// of schemas nested in another (3.6 s for 10); past maxListNest, the
// unhandled change is written without go-cmp's diff of the deep fields:
// "AnyOf <nested too deep to diff> -> <nested too deep to diff>
// (changed)", the other fields
// as go-cmp's diff shows them. Up to maxListNest, it is crdify's own.
func TestUnhandledDeepLists(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	chain := func(format string, maxLength int64, n int) *apiextensionsv1.JSONSchemaProps {
		s := &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: &maxLength}
		for range n {
			s = &apiextensionsv1.JSONSchemaProps{Type: "object", AnyOf: []apiextensionsv1.JSONSchemaProps{*s}}
		}
		s.Format = format
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size() > 0"}}
		return s
	}
	summary := func(rs []validations.ComparisonResult) string {
		for _, r := range rs {
			if r.Name == "unhandled" && len(r.Errors) == 1 {
				return ocMessage(r.Name, r.Errors[0])
			}
		}
		return ""
	}
	a, b := chain("", 1, 3), chain("email", 2, 3)
	want := summary(validations.CompareProperties(a, b, config.EnforcementPolicyError, c.properties...))
	if want != `unhandled changes found (Format "" -> "email"; MaxLength &1 -> &2)` {
		t.Fatalf("crdify says %q", want)
	}
	if got := summary(c.compareProperties(a, b, 3)); got != want {
		t.Errorf("compareProperties says %q, crdify %q", got, want)
	}
	a, b = chain("", 1, 5), chain("email", 2, 5)
	if n, _ := schemaShape(a); n != 5 {
		t.Fatalf("schemaShape: %d lists deep, want 5", n)
	}
	if got := summary(c.compareProperties(a, b, 5)); got != `unhandled changes found (Format "" -> "email"; AnyOf <nested too deep to diff> -> <nested too deep to diff> (changed))` {
		t.Errorf("5 lists deep: %q", got)
	}
	// Deeper, without asking go-cmp: linear.
	deep := func(maxLength int64) *apiextensionsv1.JSONSchemaProps {
		s := &apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: &maxLength}
		for range 300 {
			s = &apiextensionsv1.JSONSchemaProps{Type: "object", AllOf: []apiextensionsv1.JSONSchemaProps{*s}}
		}
		return s
	}
	if got := summary(c.compareProperties(deep(1), deep(2), 300)); got != "unhandled changes found (AllOf <nested too deep to diff> -> <nested too deep to diff> (changed))" {
		t.Errorf("300 lists deep: %q", got)
	}
}

// TestUnhandledDeepListsServed: an unhandled change between two served
// versions whose lists of schemas nest past maxListNest is left out when
// the old CRD had it, with the same values, as crdify leaves it out (the
// same go-cmp diff); and kept when the old CRD's values were others,
// though the message, without go-cmp's diff of them, reads the same.
func TestUnhandledDeepListsServed(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	deep := func(maxLength int64) apiextensionsv1.JSONSchemaProps {
		s := apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: &maxLength}
		for range 5 {
			s = apiextensionsv1.JSONSchemaProps{Type: "object", AnyOf: []apiextensionsv1.JSONSchemaProps{s}}
		}
		return s
	}
	crd := func(v1, v2 int64, extra bool) CRD {
		x := oldCron()
		for i, n := range []int64{v1, v2} {
			s := specOf(x, i)
			s.Properties["deep"] = deep(n)
			if extra {
				s.Properties["extra"] = str()
			}
			setSpec(x, i, s)
		}
		return toCRD(t, x)
	}
	// The unhandled change of ^.spec.deep between v1 and v2, if any
	// (crdify also compares the schemas inside its anyOf).
	deepChange := func(cs []Change) (Change, int) {
		var out Change
		n := 0
		for _, c := range cs {
			if c.Version == "v1 -> v2" {
				n++
				if c.Field == "^.spec.deep" {
					out = c
				}
			}
		}
		return out, n
	}
	const msg = "unhandled changes found (AnyOf <nested too deep to diff> -> <nested too deep to diff> (changed))"
	for _, tc := range []struct {
		name     string
		old, new CRD
		want     bool // the change of ^.spec.deep between v1 and v2 is reported
	}{
		{"the old CRD's issue, the same values", crd(1, 2, false), crd(1, 2, true), false},
		{"the old CRD's values were others", crd(1, 2, false), crd(1, 3, false), true},
	} {
		got := compareOne(t, c, tc.old, tc.new)
		want := referenceChanges(t, tc.old, tc.new)
		if !sameChanges(got, want) {
			t.Errorf("%s:\nChecker:\n%s\ncrdify:\n%s", tc.name, report(got), report(want))
		}
		d, n := deepChange(got)
		if !tc.want && n != 0 || tc.want && (d.Check != "unhandled" || d.V1 != Refuses || d.Message != msg) {
			t.Errorf("%s: between v1 and v2:\n%s", tc.name, report(got))
		}
	}
}
