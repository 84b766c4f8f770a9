package updates

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/model"
)

// entry is a channel entry of a test channel: "name@version replaces=x
// skips=y,z range=>=1.0.0 <1.2.0" (version empty: no blob).
type entry struct {
	name, version, replaces, skipRange string
	skips                              []string
	deprecated                         bool // the olm.deprecated property
}

func channel(t *testing.T, entries ...entry) *model.Channel {
	t.Helper()
	pkg := &model.Package{Name: "p", Channels: map[string]*model.Channel{}}
	ch := &model.Channel{Package: pkg, Name: "stable", Bundles: map[string]*model.Bundle{}}
	pkg.Channels["stable"] = ch
	pkg.DefaultChannel = ch
	for _, e := range entries {
		b := &model.Bundle{Package: pkg, Channel: ch, Name: e.name, Replaces: e.replaces, Skips: e.skips, SkipRange: e.skipRange, LegacyDeprecated: e.deprecated}
		if e.version != "" {
			b.Version = semver.MustParse(e.version)
			b.HasBlob = true
		}
		ch.Bundles[e.name] = b
	}
	return ch
}

func ver(s string) *semver.Version { v := semver.MustParse(s); return &v }

func names(bs []*model.Bundle) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// pathString is "a -replaces-> b -skipRange-> c".
func pathString(from Installed, path []Step) string {
	s := from.String()
	for _, st := range path {
		var es []string
		for _, e := range st.Edges {
			es = append(es, string(e))
		}
		s += " -" + strings.Join(es, "+") + "-> " + st.To.Name
	}
	return s
}

func TestPath(t *testing.T) {
	chain := []entry{
		{name: "a", version: "1.0.0"},
		{name: "b", version: "1.1.0", replaces: "a"},
		{name: "c", version: "1.2.0", replaces: "b"},
	}
	for _, tc := range []struct {
		name    string
		entries []entry
		from    Installed
		order   []string
		want    string
		others  []string // of the first step
	}{
		{name: "replaces chain", entries: chain, from: Installed{Name: "a", Version: ver("1.0.0")},
			order: []string{"c", "b", "a"}, want: "a -replaces-> b -replaces-> c"},
		{name: "head is up to date", entries: chain, from: Installed{Name: "c", Version: ver("1.2.0")},
			order: []string{"c", "b", "a"}, want: "c"},
		{name: "head's skipRange wins over replaces", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0", replaces: "a"},
			{name: "c", version: "1.2.0", replaces: "b", skipRange: ">=1.0.0 <1.2.0"},
		}, from: Installed{Name: "a", Version: ver("1.0.0")}, order: []string{"c", "b", "a"},
			want: "a -skipRange-> c", others: []string{"b"}},
		{name: "skipped bundle is never installed", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0", replaces: "a"},
			{name: "c", version: "1.2.0", replaces: "a", skips: []string{"b"}},
		}, from: Installed{Name: "a", Version: ver("1.0.0")}, order: []string{"c", "a"}, want: "a -replaces-> c"},
		{name: "installed skipped bundle moves on", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0", replaces: "a"},
			{name: "c", version: "1.2.0", replaces: "a", skips: []string{"b"}},
		}, from: Installed{Name: "b", Version: ver("1.1.0")}, order: []string{"c", "a"}, want: "b -skips-> c"},
		{name: "both edges are reported", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "c", version: "1.2.0", replaces: "a", skips: []string{"a"}, skipRange: "<1.2.0"},
		}, from: Installed{Name: "a", Version: ver("1.0.0")}, order: []string{"c"}, want: "a -replaces+skips+skipRange-> c"},
		{name: "virtual node by name", entries: chain, from: Installed{Name: "x"},
			order: []string{"c", "b", "a"}, want: "x"},
		{name: "virtual node replaced", entries: []entry{
			{name: "a", version: "1.0.0", replaces: "x.v0.9.0"},
			{name: "b", version: "1.1.0", replaces: "a"},
		}, from: Installed{Name: "x.v0.9.0"}, order: []string{"b", "a"}, want: "x.v0.9.0 -replaces-> a -replaces-> b"},
		{name: "virtual node by version", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0", replaces: "a", skipRange: ">=0.1.0 <1.1.0"},
		}, from: Installed{Version: ver("0.5.0")}, order: []string{"b", "a"}, want: "version 0.5.0 -skipRange-> b"},
		{name: "head's own version in its skipRange", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0", replaces: "a", skipRange: "<=1.1.0"},
		}, from: Installed{Name: "b", Version: ver("1.1.0")}, order: []string{"b", "a"}, want: "b"},
		{name: "entry without blob", entries: []entry{
			{name: "a"},
			{name: "b", version: "1.1.0", replaces: "a"},
		}, from: Installed{Name: "a"}, order: []string{"b", "a"}, want: "a -replaces-> b"},
		{name: "stranded", entries: []entry{
			{name: "a", version: "1.0.0"},
			{name: "b", version: "1.1.0"},
			{name: "c", version: "1.2.0", replaces: "b", skips: []string{"a"}},
		}, from: Installed{Name: "z", Version: ver("0.1.0")}, order: []string{"c", "b"}, want: "z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGraph(channel(t, tc.entries...))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(g.Order); !reflect.DeepEqual(got, tc.order) {
				t.Errorf("order %v, want %v", got, tc.order)
			}
			path, err := g.Path(tc.from)
			if err != nil {
				t.Fatal(err)
			}
			if got := pathString(tc.from, path); got != tc.want {
				t.Errorf("path %q, want %q", got, tc.want)
			}
			if len(path) > 0 {
				if got := names(path[0].Others); !reflect.DeepEqual(got, tc.others) {
					t.Errorf("others %v, want %v", got, tc.others)
				}
			}
		})
	}
}

func TestChainErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []entry
		want    string
	}{
		{"two heads", []entry{{name: "a"}, {name: "b", replaces: "a"}, {name: "c", replaces: "a"}},
			`channel "stable" of package "p" has 2 heads (b, c)`},
		{"no head", []entry{{name: "a", replaces: "b"}, {name: "b", replaces: "a"}},
			`no channel heads (entries not replaced by another entry) found in channel "stable" of package "p"`},
		{"cycle below the head", []entry{{name: "a", replaces: "b"}, {name: "b", replaces: "a"}, {name: "c", replaces: "a"}},
			`a cycle exists in the chain of replacement beginning with "c"`},
	} {
		_, err := NewGraph(channel(t, tc.entries...))
		var ce *ChainError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a ChainError with %q", tc.name, err, tc.want)
		}
	}
}

// TestPathLoop: a skipRange that points back up the chain makes OLM go
// round; the path says so instead of running forever.
func TestPathLoop(t *testing.T) {
	g, err := NewGraph(channel(t,
		entry{name: "a", version: "1.0.0", skipRange: ">=1.1.0 <1.2.0"},
		entry{name: "b", version: "1.1.0", replaces: "a"},
	))
	if err != nil {
		t.Fatal(err)
	}
	path, err := g.Path(Installed{Name: "a", Version: ver("1.0.0")})
	if !errors.Is(err, ErrLoop) || pathString(Installed{Name: "a"}, path) != "a -replaces-> b -skipRange-> a" {
		t.Errorf("path %q, err %v", pathString(Installed{Name: "a"}, path), err)
	}
}

func TestResolveFrom(t *testing.T) {
	ch := channel(t,
		entry{name: "p.v1.0.0", version: "1.0.0"},
		entry{name: "p.v1.1.0", version: "1.1.0", replaces: "p.v1.0.0"},
	)
	for _, tc := range []struct{ from, name, version string }{
		{"p.v1.0.0", "p.v1.0.0", "1.0.0"},
		{"1.1.0", "p.v1.1.0", "1.1.0"},
		{"v1.1.0", "p.v1.1.0", "1.1.0"},
		{"0.9.0", "", "0.9.0"},
		{"p.v0.9.0", "p.v0.9.0", "0.9.0"},
		{"operator-0.8.1-rc.1", "operator-0.8.1-rc.1", "0.8.1-rc.1"},
		{"legacy", "legacy", ""},
	} {
		in, err := ResolveFrom(ch.Package, ch, tc.from)
		got := ""
		if in.Version != nil {
			got = in.Version.String()
		}
		if err != nil || in.Name != tc.name || got != tc.version {
			t.Errorf("%q: got %q %q %v, want %q %q", tc.from, in.Name, got, err, tc.name, tc.version)
		}
	}
}

// TestOLMSortChannelCases are the cases of operator-lifecycle-manager's
// TestSortChannel (pkg/controller/registry/resolver/resolver_test.go),
// restated: the order OLM gives, or its error.
func TestOLMSortChannelCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []entry
		order   []string
		err     string
	}{
		{"wrinkle-free", []entry{{name: "b"}, {name: "a", replaces: "b"}}, []string{"a", "b"}, ""},
		{"replacement cycle without head", []entry{{name: "a", replaces: "b"}, {name: "b", replaces: "a"}}, nil,
			`no channel heads (entries not replaced by another entry) found in channel "stable" of package "p"`},
		{"replacement cycle below the head", []entry{{name: "a", replaces: "b"}, {name: "b", replaces: "c"}, {name: "c", replaces: "b"}}, nil,
			`a cycle exists in the chain of replacement beginning with "a" in channel "stable" of package "p"`},
		{"skipped and replaced entry omitted", []entry{{name: "a", replaces: "b", skips: []string{"b"}}, {name: "b"}}, []string{"a"}, ""},
		{"skipped entry omitted", []entry{{name: "a", replaces: "b", skips: []string{"c"}}, {name: "b", replaces: "c"}, {name: "c"}}, []string{"a", "b"}, ""},
		{"two replaces chains", []entry{{name: "a"}, {name: "b", replaces: "c"}, {name: "c"}}, nil,
			`channel "stable" of package "p" has 2 heads (a, b): OLM needs a single replacement chain to order its entries and resolves no update in it`},
		// TestSolveOperators_WithSkipsAndStartingCSV's test-package.
		{"skips across the chain", []entry{
			{name: "v1", version: "1.0.0"},
			{name: "v2", version: "2.0.0", replaces: "v1"},
			{name: "v3", version: "3.0.0", replaces: "v2"},
			{name: "v4", version: "4.0.0", replaces: "v3", skips: []string{"v3"}},
			{name: "v5", version: "5.0.0", replaces: "v4", skips: []string{"v2", "v3", "v4"}},
			{name: "v6", version: "6.0.0", replaces: "v5"},
		}, []string{"v6", "v5", "v1"}, ""},
	} {
		g, err := NewGraph(channel(t, tc.entries...))
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		default:
			if got := names(g.Order); !reflect.DeepEqual(got, tc.order) {
				t.Errorf("%s: order %v, want %v", tc.name, got, tc.order)
			}
		}
	}
}
