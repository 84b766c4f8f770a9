package updates

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/model"
)

// TestOLMResolverCases states, as cases of our own, what OLM v0's resolver
// (operator-lifecycle-manager v0.46.0, pkg/controller/registry/resolver)
// does for one subscription to one channel: which bundle a new
// subscription gets, and where it moves an installed bundle. The first
// cases restate OLM's own tests (step_resolver_test.go, resolver_test.go;
// their names in the comments); the last ones are the edge shapes found by
// running OLM's resolver beside ours. want is the bundle OLM resolves to,
// "=" when it keeps the installed bundle, "!" when a new subscription does
// not resolve.
func TestOLMResolverCases(t *testing.T) {
	v1to3 := []entry{
		{name: "p.v1.0.0", version: "1.0.0"},
		{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0"},
		{name: "p.v1.2.0", version: "1.2.0", replaces: "p.v1.1.0"},
	}
	deprecatedHead := slices.Clone(v1to3)
	deprecatedHead[2].deprecated = true
	for _, tc := range []struct {
		name    string
		entries []entry
		// installed is the installed bundle's name ("" for a new
		// subscription) and version (the CSV's; OLM's test CSVs have
		// 0.0.0).
		installed, version string
		want               string
	}{
		// InstalledSub/NoUpdates
		{name: "installed, nothing newer", entries: []entry{{name: "a.v1", version: "0.0.0"}},
			installed: "a.v1", version: "0.0.0", want: "="},
		// InstalledSub/UpdateAvailable
		{name: "replaced", entries: []entry{{name: "a.v1", version: "0.0.0"}, {name: "a.v2", version: "0.0.0", replaces: "a.v1"}},
			installed: "a.v1", version: "0.0.0", want: "a.v2"},
		// InstalledSub/UpdateInHead/SkipRange: the installed bundle is not
		// in the catalog.
		{name: "head's skipRange covers a bundle the catalog does not hold", entries: []entry{
			{name: "a.v3", version: "1.0.0", replaces: "a.v2", skipRange: "< 1.0.0"},
		}, installed: "a.v1", version: "0.0.0", want: "a.v3"},
		// InstalledSub/UpdatesAvailable/SkipRangeNotInHead
		{name: "the first entry whose skipRange covers it", entries: []entry{
			{name: "a.v2", version: "1.0.0", skipRange: "< 1.0.0"},
			{name: "a.v3", version: "1.0.0", replaces: "a.v2", skipRange: "< 1.0.0"},
			{name: "a.v4", version: "1.0.0", replaces: "a.v3", skipRange: "< 1.0.0 !0.0.0"},
		}, installed: "a.v1", version: "0.0.0", want: "a.v3"},
		// InstalledSub/UpdatesAvailable/SpecifiedSkips
		{name: "the first entry that skips it", entries: []entry{
			{name: "a.v2", version: "1.0.0", skips: []string{"a.v1"}},
			{name: "a.v3", version: "1.0.0", replaces: "a.v2", skips: []string{"a.v1"}},
		}, installed: "a.v1", version: "0.0.0", want: "a.v3"},
		// TestSolveOperators_FindLatestVersion
		{name: "new subscription gets the head", entries: []entry{
			{name: "another-package.v0.9.0", version: "0.9.0"},
			{name: "another-package.v1.0.0", version: "1.0.0", replaces: "another-package.v0.9.0"},
			{name: "another-package.v1.0.1", version: "1.0.1", replaces: "another-package.v1.0.0"},
		}, want: "another-package.v1.0.1"},
		{name: "installed bundle replaced by one the catalog holds", entries: []entry{
			{name: "test-package.v1.0.1", version: "1.0.1", replaces: "test-package.v1"},
		}, installed: "test-package.v1", version: "0.0.0", want: "test-package.v1.0.1"},
		// TestSolveOperators_WithSkips
		{name: "new subscription: the entry that skips the other", entries: []entry{
			{name: "another-package.v1", version: "1.0.0"},
			{name: "another-package.v2", version: "2.0.0", skips: []string{"another-package.v1"}},
		}, want: "another-package.v2"},
		// TestSolveOperators_WithSkipsAndStartingCSV's test-package
		{name: "new subscription to a chain with skips", entries: []entry{
			{name: "v1", version: "1.0.0"},
			{name: "v2", version: "2.0.0", replaces: "v1"},
			{name: "v3", version: "3.0.0", replaces: "v2"},
			{name: "v4", version: "4.0.0", replaces: "v3", skips: []string{"v3"}},
			{name: "v5", version: "5.0.0", replaces: "v4", skips: []string{"v2", "v3", "v4"}},
			{name: "v6", version: "6.0.0", replaces: "v5"},
		}, want: "v6"},
		// TestSolveOperatorsWithDeprecatedInnerChannelEntry
		{name: "new subscription passes a deprecated inner entry", entries: []entry{
			{name: "a-1", version: "1.0.0"},
			{name: "a-2", version: "2.0.0", replaces: "a-1", deprecated: true},
			{name: "a-3", version: "3.0.0", replaces: "a-2"},
		}, want: "a-3"},
		{name: "nothing moves a bundle to a deprecated entry", entries: []entry{
			{name: "a-1", version: "1.0.0"},
			{name: "a-2", version: "2.0.0", replaces: "a-1", deprecated: true},
			{name: "a-3", version: "3.0.0", replaces: "a-2"},
		}, installed: "a-1", version: "1.0.0", want: "="},
		// TestSolveOperators_WithoutDeprecated
		{name: "the only entry is deprecated", entries: []entry{
			{name: "test-package.v1", version: "0.0.1", deprecated: true},
		}, want: "!"},

		// The edge shapes. A head whose skipRange covers its own version
		// stays, though an older entry's backward skipRange covers it too:
		// OLM's candidates include the installed bundle's own entry.
		{name: "head covering itself stays", entries: []entry{
			{name: "p.v1.0.0", version: "1.0.0"},
			{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0", skipRange: ">=1.1.0"},
			{name: "p.v1.2.0", version: "1.2.0", replaces: "p.v1.1.0", skipRange: "<=1.2.0"},
		}, installed: "p.v1.2.0", version: "1.2.0", want: "="},
		{name: "the others reach a head covering itself", entries: []entry{
			{name: "p.v1.0.0", version: "1.0.0"},
			{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0", skipRange: ">=1.1.0"},
			{name: "p.v1.2.0", version: "1.2.0", replaces: "p.v1.1.0", skipRange: "<=1.2.0"},
		}, installed: "p.v1.1.0", version: "1.1.0", want: "p.v1.2.0"},
		{name: "own entry comes before an older backward skipRange", entries: []entry{
			{name: "l", version: "1.0.0", skipRange: ">=1.1.0 <1.2.0"},
			{name: "m", version: "1.1.0", replaces: "l", skipRange: ">=1.0.0 <=1.1.0"},
			{name: "x", version: "1.1.5", replaces: "m"},
			{name: "h", version: "1.2.0", replaces: "x", skips: []string{"x"}},
		}, installed: "m", version: "1.1.0", want: "="},
		// A backward skipRange moves the head down.
		{name: "backward skipRange moves the head", entries: []entry{
			{name: "a", version: "1.0.0", skipRange: ">=1.1.0"},
			{name: "b", version: "1.1.0", replaces: "a"},
		}, installed: "b", version: "1.1.0", want: "a"},
		// olm.deprecated on the head: new subscriptions get the entry below
		// it, and nothing moves there.
		{name: "deprecated head: new subscription", entries: deprecatedHead, want: "p.v1.1.0"},
		{name: "deprecated head: the entry below stays", entries: deprecatedHead, installed: "p.v1.1.0", version: "1.1.0", want: "="},
		{name: "deprecated head: installed stays", entries: deprecatedHead, installed: "p.v1.2.0", version: "1.2.0", want: "="},
		{name: "deprecated head: the oldest moves up", entries: deprecatedHead, installed: "p.v1.0.0", version: "1.0.0", want: "p.v1.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGraph(channel(t, tc.entries...))
			if err != nil {
				t.Fatal(err)
			}
			got := "!"
			if tc.installed == "" {
				if h := g.InstallHead(); h != nil {
					got = h.Name
				}
			} else {
				st := g.Next(Installed{Name: tc.installed, Version: ver(tc.version)})
				got = "="
				if st != nil {
					got = st.To.Name
				}
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestEdgeShapeAnswers: the answers of query updates on the edge shapes.
func TestEdgeShapeAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []entry
		// want is each bundle's "NEXT STEPS REACHES" line, in RunAll's
		// order.
		want []string
	}{
		{"head covering itself", []entry{
			{name: "p.v1.0.0", version: "1.0.0"},
			{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0", skipRange: ">=1.1.0"},
			{name: "p.v1.2.0", version: "1.2.0", replaces: "p.v1.1.0", skipRange: "<=1.2.0"},
		}, []string{"p.v1.2.0: - 0 true", "p.v1.1.0: p.v1.2.0 1 true", "p.v1.0.0: p.v1.2.0 1 true"}},
		{"backward skipRange loop", []entry{
			{name: "a", version: "1.0.0", skipRange: ">=1.1.0"},
			{name: "b", version: "1.1.0", replaces: "a"},
		}, []string{"b: a 2 false the updates loop: a comes back to b", "a: b 2 false the updates loop: b comes back to a"}},
		{"deprecated head", []entry{
			{name: "p.v1.0.0", version: "1.0.0"},
			{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0"},
			{name: "p.v1.2.0", version: "1.2.0", replaces: "p.v1.1.0", deprecated: true},
		}, []string{
			`p.v1.2.0: - 0 false it is above the head p.v1.1.0: the entries of channel "stable" nearer its first entry p.v1.2.0 have the olm.deprecated property, OLM never installs them, and nothing OLM installs replaces, skips or covers p.v1.2.0`,
			"p.v1.1.0: - 0 true",
			"p.v1.0.0: p.v1.1.0 1 true",
		}},
		{"deprecated inner entry", []entry{
			{name: "a-1", version: "1.0.0"},
			{name: "a-2", version: "2.0.0", replaces: "a-1", deprecated: true},
			{name: "a-3", version: "3.0.0", replaces: "a-2"},
		}, []string{
			"a-3: - 0 true", "a-2: a-3 1 true",
			"a-1: - 0 false only a-2 replaces, skips or covers a-1 (version 1.0.0), and it has the olm.deprecated property: OLM never installs such a bundle: it cannot be updated",
		}},
		{"kept by its own entry", []entry{
			{name: "l", version: "1.0.0", skipRange: ">=1.1.0 <1.2.0"},
			{name: "m", version: "1.1.0", replaces: "l", skipRange: ">=1.0.0 <=1.1.0"},
			{name: "x", version: "1.1.5", replaces: "m"},
			{name: "h", version: "1.2.0", replaces: "x", skips: []string{"x"}},
		}, []string{
			"h: - 0 true",
			`m: - 0 false OLM keeps m where it is, as its own entry is its first candidate: its skipRange ">=1.0.0 <=1.1.0" includes its own version, and no entry nearer the head replaces, skips or covers it: it cannot be updated`,
			`l: m 1 false the path stops at m and never reaches the head h: OLM keeps m where it is, as its own entry is its first candidate: its skipRange ">=1.0.0 <=1.1.0" includes its own version, and no entry nearer the head replaces, skips or covers it`,
			"x: h 1 true",
		}},
		// community-operators' kubernaut-operator: 1.3.4 skips 1.3.2 and
		// 1.3.3, and 1.4.1 skips 1.3.4, so OLM never installs 1.3.4 and
		// the older two have nowhere to go, although something skips them.
		{"only a skipped entry skips it", []entry{
			{name: "k.v1.3.2", version: "1.3.2"},
			{name: "k.v1.3.3", version: "1.3.3"},
			{name: "k.v1.3.4", version: "1.3.4", skips: []string{"k.v1.3.2", "k.v1.3.3"}},
			{name: "k.v1.4.1", version: "1.4.1", replaces: "k.v1.3.4", skips: []string{"k.v1.3.4"}},
		}, []string{
			"k.v1.4.1: - 0 true",
			"k.v1.3.4: k.v1.4.1 1 true",
			"k.v1.3.3: - 0 false only k.v1.3.4 replaces, skips or covers k.v1.3.3 (version 1.3.3), and another entry skips it: OLM never installs a skipped bundle: it cannot be updated",
			"k.v1.3.2: - 0 false only k.v1.3.4 replaces, skips or covers k.v1.3.2 (version 1.3.2), and another entry skips it: OLM never installs a skipped bundle: it cannot be updated",
		}},
		{"only skipped and olm.deprecated entries point at it", []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0", skipRange: "<1.1.0"},
			{name: "c", version: "1.2.0", replaces: "a", deprecated: true},
			{name: "d", version: "1.3.0", replaces: "c", skips: []string{"b"}},
		}, []string{
			"d: - 0 true",
			"c: d 1 true",
			"a: - 0 false only c, b replace, skip or cover a (version 1.0.0); c has the olm.deprecated property and b is skipped by another entry: OLM installs neither: it cannot be updated",
			"b: d 1 true",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := channel(t, tc.entries...)
			as, err := Query{Model: modelOf(ch), Package: "p"}.RunAll()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range as {
				next := "-"
				if a.Next != nil {
					next = a.Next.To.Name
				}
				s := fmt.Sprintf("%s: %s %d %v", a.Installed.Name, next, a.Steps, a.ReachesHead)
				if a.Problem != "" {
					s += " " + a.Problem
				}
				got = append(got, s)
				// The single answer agrees with --all's.
				one, err := Query{Model: modelOf(ch), Package: "p", From: a.Installed.Name}.Run()
				if err != nil {
					t.Fatal(err)
				}
				if one.Steps != a.Steps || len(one.Path) != a.Steps || one.ReachesHead != a.ReachesHead || one.Problem != a.Problem {
					t.Errorf("%s: --from gives %d steps, %v, %q", a.Installed.Name, one.Steps, one.ReachesHead, one.Problem)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", join(got), join(tc.want))
			}
		})
	}
}

// TestWalkerAgreesWithPath: on random channels, with random skips,
// skipRanges (backward ones too, so that paths loop) and olm.deprecated
// entries, the Walker's outcome of every bundle, and of virtual nodes,
// is what Path finds step by step.
func TestWalkerAgreesWithPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for range 400 {
		n := 2 + rng.IntN(9)
		entries := make([]entry, n)
		for i := range entries {
			e := entry{name: fmt.Sprintf("b%d", i), version: fmt.Sprintf("1.%d.0", i)}
			if i > 0 {
				e.replaces = fmt.Sprintf("b%d", i-1)
			}
			if i > 1 && rng.IntN(3) == 0 {
				e.skips = []string{fmt.Sprintf("b%d", rng.IntN(i-1))}
			}
			if rng.IntN(3) == 0 {
				lo, hi := rng.IntN(n+1), rng.IntN(n+1)
				e.skipRange = fmt.Sprintf(">=1.%d.0 <1.%d.0", min(lo, hi), max(lo, hi)+1)
			}
			e.deprecated = rng.IntN(8) == 0
			entries[i] = e
		}
		g, err := NewGraph(channel(t, entries...))
		if err != nil {
			continue // a skips edge that left two heads
		}
		w := NewWalker(g)
		froms := []Installed{{Name: "gone.v0.1.0", Version: ver("0.1.0")}, {Version: ver(fmt.Sprintf("1.%d.5", rng.IntN(n)))},
			{Name: fmt.Sprintf("b%d", rng.IntN(n)), Version: ver(fmt.Sprintf("1.%d.7", rng.IntN(n)))}} // installed at another version
		for _, b := range g.Channel.Bundles {
			froms = append(froms, InstalledBundle(b))
		}
		for _, from := range froms {
			path, err := g.Path(from)
			if err != nil && !errors.Is(err, ErrLoop) {
				t.Fatal(err)
			}
			o := w.Outcome(from)
			var end *string
			if o.End != nil {
				end = &o.End.Name
			}
			var wantEnd *string
			if len(path) > 0 {
				wantEnd = &path[len(path)-1].To.Name
			}
			switch {
			case o.Steps != len(path), !reflect.DeepEqual(end, wantEnd), fmt.Sprint(o.Loop) != fmt.Sprint(err):
				t.Fatalf("%v from %v: walker %d steps to %v (%v), path %s (%v)", entries, from, o.Steps, end, o.Loop, pathString(from, path), err)
			case len(path) > 0 && (o.Next == nil || o.Next.To != path[0].To || !reflect.DeepEqual(o.Next.Edges, path[0].Edges)):
				t.Fatalf("%v from %v: walker's first step %v, path's %v", entries, from, o.Next, path[0])
			case len(path) == 0 && o.Next != nil:
				t.Fatalf("%v from %v: walker's first step %v, path has none", entries, from, o.Next)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d outcomes checked", checked)
	}
}

// TestCandidatesInOrder: the indexed candidates are, in order, the entries
// of Order that replace, skip or cover the installed bundle.
func TestCandidatesInOrder(t *testing.T) {
	g, err := NewGraph(channel(t,
		entry{name: "a", version: "1.0.0"},
		entry{name: "b", version: "1.1.0", replaces: "a", skipRange: "<1.1.0"},
		entry{name: "c", version: "1.2.0", replaces: "b", skips: []string{"a"}},
		entry{name: "d", version: "1.3.0", replaces: "c", skipRange: ">=0.9.0 <1.3.0", skips: []string{"a", "a"}},
		entry{name: "e", version: "1.4.0", replaces: "d", skipRange: "not a range"},
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from Installed
		want []string
	}{
		{Installed{Name: "a", Version: ver("1.0.0")}, []string{"d", "c", "b"}},
		{Installed{Name: "a"}, []string{"d", "c", "b"}},
		{Installed{Version: ver("1.0.5")}, []string{"d", "b"}},
		{Installed{Name: "d", Version: ver("1.3.0")}, []string{"e"}},
		{Installed{Name: "e", Version: ver("1.4.0")}, nil},
	} {
		var got []string
		g.candidates(tc.from, func(p int) bool { got = append(got, g.Order[p].Name); return true })
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.from, got, tc.want)
		}
	}
}

func join(s []string) string {
	out := ""
	for _, l := range s {
		out += l + "\n"
	}
	return out
}

func modelOf(ch *model.Channel) model.Model { return model.Model{ch.Package.Name: ch.Package} }

// TestTableMarksAbove: --all's table says "above" for a bundle above the
// head, one OLM never installs.
func TestTableMarksAbove(t *testing.T) {
	ch := channel(t,
		entry{name: "p.v1.0.0", version: "1.0.0"},
		entry{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0"},
		entry{name: "p.v1.2.0", version: "1.2.0", replaces: "p.v1.1.0", deprecated: true},
	)
	as, err := Query{Model: modelOf(ch), Package: "p"}.RunAll()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, as); err != nil {
		t.Fatal(err)
	}
	want := `package p, channel stable; head p.v1.1.0 (1.1.0) (the channel's first entry, p.v1.2.0, has the olm.deprecated property: OLM never installs it)
BUNDLE    VERSION  NEXT      BY        STEPS  REACHES HEAD
p.v1.2.0  1.2.0    -         -         0      above
p.v1.1.0  1.1.0    -         -         0      head
p.v1.0.0  1.0.0    p.v1.1.0  replaces  1      yes
`
	if b.String() != want {
		t.Errorf("got\n%s", b.String())
	}
}
