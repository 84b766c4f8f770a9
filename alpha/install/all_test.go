package install

import (
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
	report := func(c *Catalog) *Report {
		r, err := NewResolver(c)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.All("", true)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	got := Regressions(report(old), report(new))
	if u, err := Uninstallable(old, new); err != nil || len(u) != len(got) {
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
