package install

import (
	"context"
	"slices"
	"testing"
)

// The cases of OLM's solver tests (operator-lifecycle-manager v0.46.0,
// pkg/controller/registry/resolver/solver/solve_test.go, TestSolve),
// restated: variables named by id, each constraint naming others by id.

type tvar struct {
	id   string
	cons []tcon
}

type tcon struct {
	kind kind
	ids  []string
	n    int
}

func v(id string, cons ...tcon) tvar { return tvar{id, cons} }
func mand() tcon                     { return tcon{kind: mandatory} }
func proh() tcon                     { return tcon{kind: prohibited} }
func dep(ids ...string) tcon         { return tcon{kind: dependency, ids: ids} }
func confl(id string) tcon           { return tcon{kind: conflict, ids: []string{id}} }
func most(n int, ids ...string) tcon { return tcon{kind: atMost, ids: ids, n: n} }

func build(t *testing.T, vars []tvar) *problem {
	t.Helper()
	index := map[string]int{}
	for i, tv := range vars {
		if _, dup := index[tv.id]; dup {
			t.Fatalf("duplicate identifier %q", tv.id)
		}
		index[tv.id] = i
	}
	p := &problem{}
	for _, tv := range vars {
		vr := &variable{id: tv.id}
		for _, tc := range tv.cons {
			c := constraint{kind: tc.kind, n: tc.n}
			for _, id := range tc.ids {
				i, ok := index[id]
				if !ok {
					t.Fatalf("variable %q referenced but not provided", id)
				}
				c.ids = append(c.ids, i)
			}
			vr.cons = append(vr.cons, c)
		}
		p.add(vr)
	}
	return p
}

func TestSolve(t *testing.T) {
	for _, tc := range []struct {
		name      string
		vars      []tvar
		installed []string
		// core is OLM's NotSatisfiable list, in its order (by text).
		core []string
	}{
		{name: "no variables"},
		{name: "unnecessary variable is not installed", vars: []tvar{v("a")}},
		{name: "single mandatory variable is installed", vars: []tvar{v("a", mand())}, installed: []string{"a"}},
		{name: "both mandatory and prohibited produce error", vars: []tvar{v("a", mand(), proh())},
			core: []string{"a is mandatory", "a is prohibited"}},
		{name: "dependency is installed", vars: []tvar{v("a"), v("b", mand(), dep("a"))}, installed: []string{"a", "b"}},
		{name: "transitive dependency is installed", vars: []tvar{v("a"), v("b", dep("a")), v("c", mand(), dep("b"))},
			installed: []string{"a", "b", "c"}},
		{name: "both dependencies are installed", vars: []tvar{v("a"), v("b"), v("c", mand(), dep("a"), dep("b"))},
			installed: []string{"a", "b", "c"}},
		{name: "solution with first dependency is selected", vars: []tvar{v("a"), v("b", confl("a")), v("c", mand(), dep("a", "b"))},
			installed: []string{"a", "c"}},
		{name: "solution with only first dependency is selected", vars: []tvar{v("a"), v("b"), v("c", mand(), dep("a", "b"))},
			installed: []string{"a", "c"}},
		{name: "solution with first dependency is selected (reverse)", vars: []tvar{v("a"), v("b", confl("a")), v("c", mand(), dep("b", "a"))},
			installed: []string{"b", "c"}},
		{name: "two mandatory but conflicting packages", vars: []tvar{v("a", mand()), v("b", mand(), confl("a"))},
			core: []string{"a is mandatory", "b conflicts with a", "b is mandatory"}},
		{name: "irrelevant dependencies don't influence search order",
			vars:      []tvar{v("a", dep("x", "y")), v("b", mand(), dep("y", "x")), v("x"), v("y")},
			installed: []string{"b", "y"}},
		{name: "cardinality constraint prevents resolution",
			vars: []tvar{v("a", mand(), dep("x", "y"), most(1, "x", "y")), v("x", mand()), v("y", mand())},
			core: []string{"a permits at most 1 of x, y", "x is mandatory", "y is mandatory"}},
		{name: "cardinality constraint forces alternative",
			vars:      []tvar{v("a", mand(), dep("x", "y"), most(1, "x", "y")), v("b", mand(), dep("y")), v("x"), v("y")},
			installed: []string{"a", "b", "y"}},
		{name: "two dependencies satisfied by one variable",
			vars:      []tvar{v("a", mand(), dep("y")), v("b", mand(), dep("x", "y")), v("x"), v("y")},
			installed: []string{"a", "b", "y"}},
		{name: "foo two dependencies satisfied by one variable",
			vars:      []tvar{v("a", mand(), dep("y", "z", "m")), v("b", mand(), dep("x", "y")), v("x"), v("y"), v("z"), v("m")},
			installed: []string{"a", "b", "y"}},
		{name: "result size larger than minimum due to preference",
			vars:      []tvar{v("a", mand(), dep("x", "y")), v("b", mand(), dep("y")), v("x"), v("y")},
			installed: []string{"a", "b", "x", "y"}},
		{name: "only the least preferable choice is acceptable",
			vars: []tvar{
				v("a", mand(), dep("a1", "a2")), v("a1", confl("c1"), confl("c2")), v("a2", confl("c1")),
				v("b", mand(), dep("b1", "b2")), v("b1", confl("c1"), confl("c2")), v("b2", confl("c1")),
				v("c", mand(), dep("c1", "c2")), v("c1"), v("c2"),
			},
			installed: []string{"a", "a2", "b", "b2", "c", "c2"}},
		{name: "preferences respected with multiple dependencies per variable",
			vars:      []tvar{v("a", mand(), dep("x1", "x2"), dep("y1", "y2")), v("x1"), v("x2"), v("y1"), v("y2")},
			installed: []string{"a", "x1", "y1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t, tc.vars)
			sol, err := solve(&eval{ctx: context.Background()}, p)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, i := range sol.selected {
				got = append(got, p.vars[i].id)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.installed) {
				t.Errorf("installed %v, want %v", got, tc.installed)
			}
			var core []string
			for _, a := range sol.core {
				core = append(core, a.c.text(p, a.v))
			}
			if !slices.Equal(core, tc.core) {
				t.Errorf("not satisfiable: %q, want %q", core, tc.core)
			}
			// The minimal core is a subset of the constraints that is
			// itself unsatisfiable, and only for unsatisfiable problems.
			minimal := mustCore(t, p)
			if (len(minimal) > 0) != (tc.core != nil) {
				t.Errorf("minimal core %v for a problem whose OLM core is %v", minimal, core)
			}
		})
	}
}

// TestMinimalCore: of two independent reasons, each alone enough, the
// minimal core keeps one; constraints that play no part are left out.
func TestMinimalCore(t *testing.T) {
	p := build(t, []tvar{
		v("s", mand(), dep("a", "b")),
		v("a", dep()),                    // a dependency nothing satisfies
		v("b", proh()),                   // b is prohibited
		v("x", mand(), dep("y")), v("y"), // satisfiable, unrelated
	})
	core := mustCore(t, p)
	var got []string
	for _, a := range core {
		got = append(got, a.c.text(p, a.v))
	}
	want := []string{"a has a dependency without any candidates to satisfy it", "b is prohibited", "s is mandatory", "s requires at least one of a, b"}
	if !slices.Equal(got, want) {
		t.Errorf("minimal core %q, want %q", got, want)
	}
}

func mustCore(t *testing.T, p *problem) []applied {
	t.Helper()
	core, err := minimalCore(&eval{ctx: context.Background()}, p)
	if err != nil {
		t.Fatal(err)
	}
	return core
}
