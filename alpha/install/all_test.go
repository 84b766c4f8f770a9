package install

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestRegressions: a channel installable in the old catalog that is not
// in the new one is reported; one that was already not installable, or
// that the new catalog does not have, is not.
func TestRegressions(t *testing.T) {
	old := newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1").bundle("a", "a.v1", "1.0.0", needGVK("g", "v", "K")).
		pkg("b", "stable").channel("b", "stable", "b.v1").bundle("b", "b.v1", "1.0.0", gvk("g", "v", "K")).
		pkg("c", "stable").channel("c", "stable", "c.v1").channel("c", "beta", "c.v1").bundle("c", "c.v1", "1.0.0", needPkg("zzz", ">=1.0.0")).
		load(t, "cat", 0)
	// b no longer provides the API; c's beta channel is gone.
	new := newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1", "a.v2<a.v1").bundle("a", "a.v1", "1.0.0", needGVK("g", "v", "K")).bundle("a", "a.v2", "2.0.0", needGVK("g", "v", "K")).
		pkg("b", "stable").channel("b", "stable", "b.v1").bundle("b", "b.v1", "1.0.0").
		pkg("c", "stable").channel("c", "stable", "c.v1").bundle("c", "c.v1", "1.0.0", needPkg("zzz", ">=1.0.0")).
		load(t, "cat", 0)
	got := Regressions(everyBundleReport(t, old), everyBundleReport(t, new))
	if u, err := Uninstallable(context.Background(), old, new, Limits{}); err != nil || len(u) != len(got) {
		t.Errorf("Uninstallable: %v, %v; Regressions: %v", u, err, got)
	}
	var keys []string
	for _, g := range got {
		keys = append(keys, g.Package+"/"+g.Channel+"/"+g.StartingCSV+":"+string(g.Status))
	}
	want := []string{"a/stable/:unsatisfiable", "a/stable/a.v1:unsatisfiable"}
	if !slices.Equal(keys, want) {
		t.Errorf("regressions %v, want %v", keys, want)
	}
	if len(got) > 0 && got[0].Why != "a.v2 requires GVK g/v/K; no bundle in the catalogs provides it (and 1 more)" {
		t.Errorf("why %q", got[0].Why)
	}
}

// TestUninstallableAsksOnlyWhatChanges: Uninstallable asks only about the
// packages a change can reach, and finds what asking every question finds.
func TestUninstallableAsksOnlyWhatChanges(t *testing.T) {
	cel := func(pkg, version string) prop {
		return constraintProp(fmt.Sprintf(`{"failureMessage":"needs %s %s","cel":{"rule":"properties.exists(p, p.type == 'olm.package' && p.value.packageName == '%s' && p.value.version == '%s')"}}`, pkg, version, pkg, version))
	}
	build := func(newer bool) *fbc {
		c := newFBC().
			// a needs an API of b's; h needs package i, which needs a.
			pkg("a", "stable").channel("a", "stable", "a.v1").bundle("a", "a.v1", "1.0.0", needGVK("g", "v", "K")).
			pkg("h", "stable").channel("h", "stable", "h.v1").bundle("h", "h.v1", "1.0.0", needPkg("i", ">=1.0.0")).
			pkg("i", "stable").channel("i", "stable", "i.v1").bundle("i", "i.v1", "1.0.0", needPkg("a", ">=1.0.0")).
			// d needs e, which does not change.
			pkg("d", "stable").channel("d", "stable", "d.v1").bundle("d", "d.v1", "1.0.0", needPkg("e", ">=1.0.0")).
			pkg("e", "stable").channel("e", "stable", "e.v1").bundle("e", "e.v1", "1.0.0").
			// f's CEL rule needs g 1.0.0.
			pkg("f", "stable").channel("f", "stable", "f.v1").bundle("f", "f.v1", "1.0.0", cel("g", "1.0.0")).
			// x shares a channel and bundle name with nothing, at first.
			pkg("x", "stable").channel("x", "stable", "shared.v1").bundle("x", "shared.v1", "1.0.0")
		if !newer {
			return c.
				pkg("b", "stable").channel("b", "stable", "b.v1").bundle("b", "b.v1", "1.0.0", gvk("g", "v", "K")).
				pkg("g", "stable").channel("g", "stable", "g.v1").bundle("g", "g.v1", "1.0.0")
		}
		// b no longer provides the API; g moves to 2.0.0; y adds a bundle
		// of x's channel and bundle name, which OLM cannot tell apart.
		return c.
			pkg("b", "stable").channel("b", "stable", "b.v1").bundle("b", "b.v1", "1.0.0").
			pkg("g", "stable").channel("g", "stable", "g.v2").bundle("g", "g.v2", "2.0.0").
			pkg("y", "stable").channel("y", "stable", "shared.v1").bundle("y", "shared.v1", "1.0.0")
	}
	old, new := build(false).load(t, "cat", 0), build(true).load(t, "cat", 0)

	changed := changedPackages(old, new)
	if got := slices.Sorted(maps.Keys(changed)); !slices.Equal(got, []string{"b", "g", "x", "y"}) {
		t.Errorf("changed %v", got)
	}
	// In the old catalog, a depends on b and f on g (and h and i on a);
	// in the new one, on nothing: what matched is gone.
	for c, want := range map[*Catalog][]string{old: {"a", "b", "f", "g", "h", "i", "x", "y"}, new: {"b", "g", "x", "y"}} {
		r, err := NewResolver(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(mustDependents(t, r, changed))); !slices.Equal(got, want) {
			t.Errorf("dependents %v, want %v", got, want)
		}
	}

	want := Regressions(everyBundleReport(t, old), everyBundleReport(t, new))
	got, err := Uninstallable(context.Background(), old, new, Limits{})
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Uninstallable: %v, %v\nasking everything: %v", got, err, want)
	}
	var keys []string
	for _, g := range got {
		keys = append(keys, g.Package+"/"+g.StartingCSV+":"+string(g.Status))
	}
	wantKeys := []string{"a/:unsatisfiable", "a/a.v1:unsatisfiable", "f/:unsatisfiable", "f/f.v1:unsatisfiable",
		"h/:unsatisfiable", "h/h.v1:unsatisfiable", "i/:unsatisfiable", "i/i.v1:unsatisfiable", "x/:error", "x/shared.v1:error"}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("regressions %v\nwant %v", keys, wantKeys)
	}

	// A catalog compared with itself: nothing changed, nothing asked.
	if got, err := Uninstallable(context.Background(), old, build(false).load(t, "cat", 0), Limits{}); err != nil || got != nil {
		t.Errorf("same catalog: %v, %v", got, err)
	}
}

// everyBundleReport is the --all --every-bundle report of the catalog c.
func everyBundleReport(t *testing.T, c *Catalog) *Report {
	t.Helper()
	r, err := NewResolver(c)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.All(context.Background(), "", true)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func mustDependents(t *testing.T, r *Resolver, changed map[string]bool) map[string]bool {
	t.Helper()
	d, err := r.dependents(context.Background(), changed)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
