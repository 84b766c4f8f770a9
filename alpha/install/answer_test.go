package install

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// chainCatalog is package p0 depending on p1, ..., p(n-1) on pn, one
// bundle each; extra adds properties to p0's bundle.
func chainCatalog(n int, extra ...prop) *fbc {
	c := newFBC()
	for i := 0; i <= n; i++ {
		pkg := fmt.Sprintf("p%d", i)
		var props []prop
		if i < n {
			props = append(props, needPkg(fmt.Sprintf("p%d", i+1), ">=1.0.0"))
		}
		if i == 0 {
			props = append(props, extra...)
		}
		c.pkg(pkg, "stable").channel(pkg, "stable", entry(pkg+".v1.0.0")).bundle(pkg, pkg+".v1.0.0", "1.0.0", props...)
	}
	return c
}

func resolveOne(t *testing.T, c *fbc, pkg string) *Answer {
	t.Helper()
	r, err := NewResolver(c.load(t, "cat", 0))
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.Resolve(context.Background(), Subscription{Package: pkg})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != Installable {
		t.Fatalf("%s: %s %s %q", pkg, a.Status, a.Error, a.Reasons)
	}
	return a
}

func text(t *testing.T, a *Answer) string {
	t.Helper()
	var b strings.Builder
	if err := a.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// treeDepth is how many dependencies deep n goes.
func treeDepth(n *Node) int {
	d := 0
	for _, e := range n.Dependencies {
		d = max(d, 1+treeDepth(e.Provider))
	}
	return d
}

// TestAnswerDeepChain: a chain of 300 dependencies is answered in text
// and JSON whose size grows with the bundles (no line wider than a tree
// MaxDepth deep draws) and whose JSON nests a bounded number of levels:
// the tree stops at MaxDepth, and each bundle where it stops heads a
// continuation. Drawn as one tree, the text took 8 columns of
// indentation more for each level (a 10,000-deep chain: 801 MB), and
// the JSON nested 3 levels for each (a 5,000-deep chain failed to encode:
// "exceeded max depth").
func TestAnswerDeepChain(t *testing.T) {
	const n = 300
	a := resolveOne(t, chainCatalog(n), "p0")
	if len(a.Installs) != n+1 {
		t.Fatalf("%d installs, want %d", len(a.Installs), n+1)
	}
	for i, in := range a.Installs {
		if in.Bundle != fmt.Sprintf("p%d.v1.0.0", i) {
			t.Fatalf("install %d is %s: the bundles in the order the tree shows them", i, in.Bundle)
		}
	}
	// The tree and each continuation stop at MaxDepth; each bundle where
	// one stops heads the next continuation, and every bundle is shown
	// in full once.
	cut := (n - 1) / MaxDepth // the bundles at a multiple of MaxDepth, p300 having no dependency
	if len(a.Continuations) != cut {
		t.Fatalf("%d continuations, want %d", len(a.Continuations), cut)
	}
	var full []string
	tops := append([]*Node{a.Tree}, a.Continuations...)
	for i, top := range tops {
		if d := treeDepth(top); d > MaxDepth {
			t.Errorf("tree %d is %d deep", i, d)
		}
		n := top
		full = append(full, n.Bundle)
		for len(n.Dependencies) > 0 {
			n = n.Dependencies[0].Provider
			if !n.Continued {
				full = append(full, n.Bundle)
			}
		}
		if i+1 < len(tops) && (!n.Continued || n.Bundle != tops[i+1].Bundle || tops[i+1].Continued) {
			t.Errorf("tree %d ends at %+v, continuation %d is %s", i, n.Install, i+1, tops[i+1].Bundle)
		}
	}
	if want := installNames(a); !slices.Equal(full, want) {
		t.Errorf("bundles shown in full %v, want each once: %v", full, want)
	}

	// Text: 2 lines for each dependency, a blank line and a head for each
	// continuation; none wider than a tree MaxDepth deep.
	txt := text(t, a)
	lines := strings.Split(strings.TrimSuffix(txt, "\n"), "\n")
	if want := 3 + 2*n + 2*cut; len(lines) != want {
		t.Errorf("%d lines, want %d", len(lines), want)
	}
	// (8 columns of indentation for each level to MaxDepth, 8 deep.)
	width := 8*8 + len("p300.v1.0.0 (p300 1.0.0, channel stable, catalog cat) (continued from above)")
	for _, l := range lines {
		if w := len([]rune(l)); w > width {
			t.Fatalf("a line of %d characters, more than %d:\n%s", w, width, l)
		}
	}
	if c, h := strings.Count(txt, ") (continued below)\n"), strings.Count(txt, ") (continued from above)\n"); c != cut || h != cut {
		t.Errorf("%d bundles continued below, %d continuations", c, h)
	}
	// Each continuation's head is the bundle the section above stops at.
	sections := strings.Split(txt, "\n\n")[1:]
	for i := 1; i < len(sections); i++ {
		prev := strings.Split(strings.TrimSuffix(sections[i-1], "\n"), "\n")
		stop := strings.TrimLeft(prev[len(prev)-1], " │├└─")
		head := strings.SplitN(sections[i], "\n", 2)[0]
		if strings.TrimSuffix(stop, " (continued below)") != strings.TrimSuffix(head, " (continued from above)") || stop == head {
			t.Errorf("section %d stops at %q, the next begins with %q", i, stop, head)
		}
	}

	// JSON: bounded nesting, and it reads back as the same answer.
	j, err := json.MarshalIndent(a, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	// Three levels for each dependency to MaxDepth, 8 deep, and the
	// answer's own (Python reads 1000).
	if d := testutil.JSONDepth(t, j); d > 3*8+6 {
		t.Errorf("the JSON nests %d deep", d)
	}
	var back Answer
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(&back); !sameJSON(again, j) {
		t.Errorf("the JSON does not read back as the answer")
	}
}

// sameJSON says whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func installNames(a *Answer) []string {
	var out []string
	for _, in := range a.Installs {
		out = append(out, in.Bundle)
	}
	return out
}

// TestAnswerShownOnce: a bundle that two dependencies lead to is shown
// in full once and referred to after; when the first way to it is cut
// at MaxDepth, the bundle is shown in full where the reader meets it
// first, above the continuation that refers to it.
func TestAnswerShownOnce(t *testing.T) {
	// A diamond: top needs left and right, both need base.
	c := newFBC()
	one := func(pkg string, props ...prop) {
		c.pkg(pkg, "stable").channel(pkg, "stable", entry(pkg+".v1")).bundle(pkg, pkg+".v1", "1.0.0", props...)
	}
	one("top", needPkg("left", ">=1.0.0"), needPkg("right", ">=1.0.0"))
	one("left", needPkg("base", ">=1.0.0"))
	one("right", needPkg("base", ">=1.0.0"))
	one("base")
	a := resolveOne(t, c, "top")
	want := `A subscription to package top, from catalog cat installs 4 bundles:

top.v1 (top 1.0.0, channel stable, catalog cat)
├── olm.package.required: package left in range >=1.0.0
│   └── left.v1 (left 1.0.0, channel stable, catalog cat)
│       └── olm.package.required: package base in range >=1.0.0
│           └── base.v1 (base 1.0.0, channel stable, catalog cat)
└── olm.package.required: package right in range >=1.0.0
    └── right.v1 (right 1.0.0, channel stable, catalog cat)
        └── olm.package.required: package base in range >=1.0.0
            └── base.v1 (base 1.0.0, channel stable, catalog cat) (see above)
`
	if got := text(t, a); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// p0 needs p1 (a chain to p(MaxDepth+1)) and then x; the chain's
	// last bundle needs x too. Drawn as one tree, x would be shown in
	// full below the cut, and referred to ("see above") in the tree
	// above it.
	c = chainCatalog(MaxDepth+1, needPkg("x", ">=1.0.0"))
	last := fmt.Sprintf("p%d", MaxDepth+1)
	for i, b := range c.blobs {
		if m, ok := b.(map[string]any); ok && m["schema"] == "olm.bundle" && m["package"] == last {
			c.blobs[i] = nil
		}
	}
	c.blobs = slices.DeleteFunc(c.blobs, func(b any) bool { return b == nil })
	c.bundle(last, last+".v1.0.0", "1.0.0", needPkg("x", ">=1.0.0"))
	c.pkg("x", "stable").channel("x", "stable", entry("x.v1")).bundle("x", "x.v1", "1.0.0")
	a = resolveOne(t, c, "p0")
	if len(a.Continuations) != 1 || len(a.Tree.Dependencies) != 2 {
		t.Fatalf("%d continuations, %d dependencies of p0", len(a.Continuations), len(a.Tree.Dependencies))
	}
	if x := a.Tree.Dependencies[1].Provider; x.Bundle != "x.v1" || x.Repeated {
		t.Errorf("p0's second dependency: %+v, want x shown in full", x)
	}
	cont := a.Continuations[0]
	if x := cont.Dependencies[0].Provider.Dependencies[0].Provider; x.Bundle != "x.v1" || !x.Repeated {
		t.Errorf("in the continuation, %s's dependency: %+v, want x, repeated", last, x)
	}
	wantOrder := []string{}
	for i := 0; i <= MaxDepth; i++ {
		wantOrder = append(wantOrder, fmt.Sprintf("p%d.v1.0.0", i))
	}
	wantOrder = append(wantOrder, "x.v1", last+".v1.0.0")
	if got := installNames(a); !slices.Equal(got, wantOrder) {
		t.Errorf("installs %v, want %v", got, wantOrder)
	}
	txt := text(t, a)
	if i, j := strings.Index(txt, "x.v1 (x 1.0.0, channel stable, catalog cat)\n"), strings.Index(txt, "x.v1 (x 1.0.0, channel stable, catalog cat) (see above)\n"); i < 0 || j < i {
		t.Errorf("x in full at %d, referred to at %d:\n%s", i, j, txt)
	}
}

// TestAnswerDeepPropertyValue: a dependency's property value nested
// deeper than maxValueDepth (an olm.constraint nesting not hundreds
// deep) is given as a string of its JSON, so the answer's JSON nesting
// stays bounded; a shallower one is the catalog's value.
func TestAnswerDeepPropertyValue(t *testing.T) {
	for _, levels := range []int{3, 300} {
		inner := `{"gvk":{"group":"example.com","version":"v1","kind":"Thing"}}`
		for range levels {
			inner = `{"not":{"constraints":[{"not":{"constraints":[` + inner + `]}}]}}`
		}
		c := newFBC()
		c.pkg("top", "stable").channel("top", "stable", entry("top.v1")).bundle("top", "top.v1", "1.0.0", constraintProp(inner))
		c.pkg("thing", "stable").channel("thing", "stable", entry("thing.v1")).bundle("thing", "thing.v1", "1.0.0", gvk("example.com", "v1", "Thing"))
		a := resolveOne(t, c, "top")
		j, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		value := a.Tree.Dependencies[0].Property.Value
		var s string
		deep := json.Unmarshal(value, &s) == nil
		if d := testutil.JSONDepth(t, j); d > 3*8+6+64 || deep != (levels == 300) {
			t.Errorf("%d levels: the answer nests %d deep; the value is a string: %v", levels, d, deep)
		}
		if deep && !sameJSON([]byte(s), []byte(inner)) {
			t.Errorf("%d levels: the value's text %.80s…, want the catalog's", levels, s)
		}
		if !deep && !sameJSON(value, []byte(inner)) {
			t.Errorf("%d levels: the value %s, want the catalog's %s", levels, value, inner)
		}
	}
}

func TestJSONDepth(t *testing.T) {
	for in, want := range map[string]int{
		`1`: 0, `"{["`: 0, `{}`: 1, `[[],[[]]]`: 3, `{"a":"\"{[","b":[{}]}`: 3, `["\\",[1]]`: 2,
	} {
		if got := jsonDepth([]byte(in)); got != want {
			t.Errorf("jsonDepth(%s) = %d, want %d", in, got, want)
		}
	}
}
