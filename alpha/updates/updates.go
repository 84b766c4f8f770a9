// Package updates answers where OLM v0 moves an installed bundle: the next
// bundle of a channel, and the whole path from there to the channel head,
// with the edge that allows each step; and what a change to a catalog does
// to those paths (Diff, Check).
//
// The rules are OLM v0's resolver's, as operator-lifecycle-manager v0.46.0
// has them (pkg/controller/registry/resolver: sortChannel, the predicates
// of getSubscriptionVariables, NewBundleVariableFromOperator): the entries
// of the channel are put in the order of the replaces chain from its head,
// leaving out every entry that another skips; an entry is a candidate when
// its skipRange includes the installed version, its replaces names the
// installed bundle, or its skips do, the installed bundle's own entry
// included; entries with the olm.deprecated property are never installed;
// the first remaining candidate in chain order, the one nearest the head,
// is the update, and when it is the installed bundle's own entry OLM keeps
// the bundle where it is. So the head wins when its skipRange covers the
// installed version, skipped bundles are never installed on the way, and
// a bundle the catalog does not hold (a "virtual" node) still gets an
// answer when something replaces or skips it, or a skipRange covers its
// version.
package updates

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/model"
)

// EdgeKind is the kind of channel edge that allows a step.
type EdgeKind string

// The edge kinds, in the order they are reported.
const (
	Replaces  EdgeKind = "replaces"
	Skips     EdgeKind = "skips"
	SkipRange EdgeKind = "skipRange"
)

// Installed is the bundle a cluster runs: its name (a CSV name), and its
// version when known. Version matters only for skipRange edges.
type Installed struct {
	Name    string
	Version *semver.Version
}

func (i Installed) String() string {
	if i.Name == "" && i.Version != nil {
		return "version " + i.Version.String()
	}
	return i.Name
}

// Step is one update: from the installed bundle to To, through Edges (each
// edge of To's channel entry that points at the installed bundle).
type Step struct {
	From  Installed
	To    *model.Bundle
	Edges []EdgeKind
	// Others are the other candidates, in OLM's order of preference, that
	// OLM does not choose because To comes first.
	Others []*model.Bundle
}

// Graph is a channel as OLM v0's resolver orders it, indexed so that each
// bundle's update is found without scanning the channel.
type Graph struct {
	Channel *model.Channel
	// Order is the replaces chain from the head, skipped entries left out
	// (sortChannel's order): the entries OLM takes as candidates, most
	// preferred first. Order[0] is the head. Entries with the olm.deprecated
	// property keep their place, but OLM never installs them.
	Order []*model.Bundle

	// install is InstallHead's position, -1 when there is none.
	install int

	once sync.Once
	idx  *index // built on first use (NewGraph alone does not need it)

	outOnce sync.Once
	out     *outsideIndex // built when a stranded bundle is explained
}

// outsideIndex finds the channel's entries that are not in Order (another
// entry skips them) and point at a bundle: they would update it, but OLM
// never installs them.
type outsideIndex struct {
	pointing map[string][]*model.Bundle // by the name replaces or skips give
	ranged   []*model.Bundle            // entries with a skipRange that parses
	ranges   []semver.Range
}

// index finds the candidates for an installed bundle without scanning the
// channel.
type index struct {
	pos map[string]int // Order position by bundle name
	// pointing maps a bundle name to the positions, ascending, of the
	// entries whose replaces or skips name it; skippedBy to those whose
	// skips do.
	pointing, skippedBy map[string][]int
	// ranges are the Order entries' skipRanges (nil for none, or one that
	// does not parse: OLM ignores those too); ranged lists the positions
	// of the non-nil ones, ascending.
	ranges []semver.Range
	ranged []int
}

// ix returns g's index, building it on first use.
func (g *Graph) ix() *index {
	g.once.Do(func() {
		x := &index{pos: make(map[string]int, len(g.Order)), pointing: map[string][]int{}, skippedBy: map[string][]int{},
			ranges: make([]semver.Range, len(g.Order))}
		for i, b := range g.Order {
			x.pos[b.Name] = i
			if b.Replaces != "" {
				x.pointing[b.Replaces] = append(x.pointing[b.Replaces], i)
			}
			for _, s := range b.Skips {
				// Positions are added in ascending order, so a name this
				// entry already points at is the last one of its list.
				if ps := x.skippedBy[s]; len(ps) == 0 || ps[len(ps)-1] != i {
					x.skippedBy[s] = append(ps, i)
				}
				if ps := x.pointing[s]; len(ps) == 0 || ps[len(ps)-1] != i {
					x.pointing[s] = append(ps, i)
				}
			}
			if b.SkipRange != "" {
				if r, err := semver.ParseRange(b.SkipRange); err == nil {
					x.ranges[i] = r
					x.ranged = append(x.ranged, i)
				}
			}
		}
		g.idx = x
	})
	return g.idx
}

// ChainError is a channel that has no single replaces chain, so OLM v0
// cannot order it and refuses to resolve any update in it.
type ChainError struct {
	Package, Channel string
	// Heads are the entries that nothing replaces or skips; empty when the
	// chain has a cycle.
	Heads []string
	Cycle string
}

func (e *ChainError) Error() string {
	switch {
	case e.Cycle != "":
		return fmt.Sprintf("a cycle exists in the chain of replacement beginning with %q in channel %q of package %q", e.Cycle, e.Channel, e.Package)
	case len(e.Heads) == 0:
		return fmt.Sprintf("no channel heads (entries not replaced by another entry) found in channel %q of package %q", e.Channel, e.Package)
	}
	return fmt.Sprintf("channel %q of package %q has %d heads (%s): OLM needs a single replacement chain to order its entries and resolves no update in it",
		e.Channel, e.Package, len(e.Heads), strings.Join(e.Heads, ", "))
}

// NoInstallableError is a channel whose every entry in OLM's order has
// the olm.deprecated property: OLM installs none of them, so a new
// subscription to the channel fails.
type NoInstallableError struct {
	Package, Channel string
}

func (e *NoInstallableError) Error() string {
	return fmt.Sprintf("every entry of channel %q of package %q that OLM may install has the olm.deprecated property: OLM installs none of them, and a subscription to the channel does not resolve", e.Channel, e.Package)
}

// NewGraph orders a channel as OLM v0's resolver does (its sortChannel).
func NewGraph(ch *model.Channel) (*Graph, error) {
	const replacedBy, skipped, seen = 1, 2, 4 // flags of each entry
	incoming := make(map[string]uint8, len(ch.Bundles))
	for _, b := range ch.Bundles {
		if _, ok := ch.Bundles[b.Replaces]; ok {
			incoming[b.Replaces] |= replacedBy
		}
		for _, s := range b.Skips {
			if _, ok := ch.Bundles[s]; ok {
				incoming[s] |= replacedBy | skipped
			}
		}
	}
	var heads []string
	for name := range ch.Bundles {
		if incoming[name] == 0 {
			heads = append(heads, name)
		}
	}
	slices.Sort(heads)
	if len(heads) != 1 {
		return nil, &ChainError{Package: ch.Package.Name, Channel: ch.Name, Heads: heads}
	}
	g := &Graph{Channel: ch, install: -1}
	for b := ch.Bundles[heads[0]]; b != nil; b = ch.Bundles[b.Replaces] {
		if incoming[b.Name]&seen != 0 {
			return nil, &ChainError{Package: ch.Package.Name, Channel: ch.Name, Cycle: heads[0]}
		}
		incoming[b.Name] |= seen
		if incoming[b.Name]&skipped == 0 {
			if g.install < 0 && !b.LegacyDeprecated {
				g.install = len(g.Order)
			}
			g.Order = append(g.Order, b)
		}
	}
	return g, nil
}

// Head is the channel head: the first entry of OLM's order.
func (g *Graph) Head() *model.Bundle { return g.Order[0] }

// InstallHead is the bundle OLM installs for a new subscription to the
// channel, and where every update path should end: the first entry of
// Order without the olm.deprecated property. It is the Head unless the
// head has that property; nil when every entry has it.
func (g *Graph) InstallHead() *model.Bundle {
	if g.install < 0 {
		return nil
	}
	return g.Order[g.install]
}

// edges returns the edges of b's entry that point at from.
func edges(b *model.Bundle, from Installed) []EdgeKind {
	var r semver.Range
	if b.SkipRange != "" {
		r, _ = semver.ParseRange(b.SkipRange)
	}
	return edgesOf(b, r, from)
}

// edgesAt is edges for the entry at Order position i, from the index: a
// long skips list is not searched.
func (g *Graph) edgesAt(i int, from Installed) []EdgeKind {
	var out []EdgeKind
	if from.Name != "" && g.Order[i].Replaces == from.Name {
		out = append(out, Replaces)
	}
	if _, ok := slices.BinarySearch(g.ix().skippedBy[from.Name], i); ok && from.Name != "" {
		out = append(out, Skips)
	}
	if r := g.ix().ranges[i]; from.Version != nil && r != nil && r(*from.Version) {
		out = append(out, SkipRange)
	}
	return out
}

func edgesOf(b *model.Bundle, r semver.Range, from Installed) []EdgeKind {
	var out []EdgeKind
	if from.Name != "" && b.Replaces == from.Name {
		out = append(out, Replaces)
	}
	if from.Name != "" && slices.Contains(b.Skips, from.Name) {
		out = append(out, Skips)
	}
	if from.Version != nil && r != nil && r(*from.Version) {
		out = append(out, SkipRange)
	}
	return out
}

// candidates yields the Order positions of OLM's candidates for from, the
// entries whose skipRange includes its version or whose replaces or skips
// name it, nearest the head first, until yield returns false. As in OLM,
// from's own entry is a candidate when it qualifies (its skipRange
// includes its own version), and so are entries with the olm.deprecated
// property: the caller passes over those.
//
// Entries that name from are found in the index; the skipRanges are tried
// in order only up to the next of those, so finding the first candidate
// costs as many range checks as there are ranged entries before it.
func (g *Graph) candidates(from Installed, yield func(int) bool) {
	x := g.ix()
	var named []int
	if from.Name != "" {
		named = x.pointing[from.Name]
	}
	j := 0
	for i := 0; ; i++ {
		limit := len(g.Order)
		if i < len(named) {
			limit = named[i]
		}
		for ; from.Version != nil && j < len(x.ranged) && x.ranged[j] < limit; j++ {
			if p := x.ranged[j]; x.ranges[p](*from.Version) && !yield(p) {
				return
			}
		}
		if i == len(named) {
			return
		}
		if j < len(x.ranged) && x.ranged[j] == limit {
			j++
		}
		if !yield(limit) {
			return
		}
	}
}

// first returns the position of OLM's choice for from: its first
// candidate that OLM may install (without the olm.deprecated property),
// or -1. It is from's own position when OLM keeps from where it is.
func (g *Graph) first(from Installed) int {
	found := -1
	g.candidates(from, func(p int) bool {
		if g.Order[p].LegacyDeprecated {
			return true
		}
		found = p
		return false
	})
	return found
}

// own returns from's position in Order, or -1 when from's entry is not
// there (skipped, not in the channel, or a virtual node).
func (g *Graph) own(from Installed) int {
	if from.Name == "" {
		return -1
	}
	if p, ok := g.ix().pos[from.Name]; ok {
		return p
	}
	return -1
}

// Next returns OLM's update for from, or nil when OLM keeps it where it
// is: nothing in the channel replaces, skips or covers it (it is the
// head, or it is stranded), every entry that does has the olm.deprecated
// property, or the first that does is from's own entry (see Keeps).
func (g *Graph) Next(from Installed) *Step {
	p := g.first(from)
	if p < 0 || p == g.own(from) {
		return nil
	}
	st := &Step{From: from, To: g.Order[p], Edges: g.edgesAt(p, from)}
	own := g.own(from)
	g.candidates(from, func(q int) bool {
		if q > p && q != own && !g.Order[q].LegacyDeprecated {
			st.Others = append(st.Others, g.Order[q])
		}
		return true
	})
	return st
}

// Keeps reports whether OLM keeps from where it is because from's own
// entry is its first candidate: its skipRange includes its own version,
// and no entry nearer the head replaces, skips or covers it.
func (g *Graph) Keeps(from Installed) bool {
	p := g.first(from)
	return p >= 0 && p == g.own(from)
}

// Withheld returns the entries that replace, skip or cover from but have
// the olm.deprecated property, so OLM never moves from to them.
func (g *Graph) Withheld(from Installed) []*model.Bundle {
	var out []*model.Bundle
	g.candidates(from, func(p int) bool {
		if g.Order[p].LegacyDeprecated {
			out = append(out, g.Order[p])
		}
		return true
	})
	return out
}

// Skipped returns the entries, sorted by name, that replace, skip or
// cover from but are not in Order, since another entry skips them: OLM
// never installs them, so they never move from either.
func (g *Graph) Skipped(from Installed) []*model.Bundle {
	g.outOnce.Do(func() {
		x := &outsideIndex{pointing: map[string][]*model.Bundle{}}
		pos := g.ix().pos
		for _, b := range g.Channel.Bundles {
			if p, ok := pos[b.Name]; ok && g.Order[p] == b {
				continue
			}
			if b.Replaces != "" {
				x.pointing[b.Replaces] = append(x.pointing[b.Replaces], b)
			}
			for _, s := range b.Skips {
				if s != b.Replaces {
					x.pointing[s] = append(x.pointing[s], b)
				}
			}
			if b.SkipRange != "" {
				if r, err := semver.ParseRange(b.SkipRange); err == nil {
					x.ranged = append(x.ranged, b)
					x.ranges = append(x.ranges, r)
				}
			}
		}
		g.out = x
	})
	var out []*model.Bundle
	if from.Name != "" {
		for _, b := range g.out.pointing[from.Name] {
			if b.Name != from.Name && !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	for i, b := range g.out.ranged {
		if from.Version != nil && b.Name != from.Name && g.out.ranges[i](*from.Version) && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *model.Bundle) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Above reports whether b is an entry above the install head: an entry
// with the olm.deprecated property nearer the channel head. A cluster
// that runs it is not behind the head.
func (g *Graph) Above(b *model.Bundle) bool {
	p, ok := g.ix().pos[b.Name]
	return ok && g.Order[p] == b && p < g.install
}

// ErrLoop is a path that comes back to a bundle it has passed (possible
// only through skipRange edges that point back up the chain).
var ErrLoop = errors.New("the updates loop")

// Path returns every step from from to the end of its updates: the head,
// or a bundle OLM keeps where it is (a step list that does not end at the
// install head means the installed bundle cannot reach it).
func (g *Graph) Path(from Installed) ([]Step, error) {
	var path []Step
	seen := map[string]bool{from.Name: true}
	for {
		st := g.Next(from)
		if st == nil {
			return path, nil
		}
		path = append(path, *st)
		if seen[st.To.Name] {
			return path, fmt.Errorf("%w: %s comes back to %s", ErrLoop, from, st.To.Name)
		}
		seen[st.To.Name] = true
		from = InstalledBundle(st.To)
	}
}

// Outcome is where a bundle's updates end, as Path finds it, without the
// steps themselves.
type Outcome struct {
	// Next is the first step (nil: OLM keeps the bundle where it is),
	// without its Others.
	Next *Step
	// Steps is the number of steps Path returns.
	Steps int
	// End is the last step's bundle; nil when there is no step.
	End *model.Bundle
	// Loop is Path's ErrLoop; nil when the updates do not loop.
	Loop error
}

// Walker finds the Outcome of many bundles of one graph in time linear in
// the channel: each bundle's next step is found once, and a path reuses
// the outcome of the bundle it moves to. (Path, called for each bundle of
// a 10,000-entry replaces chain, would take 50 million steps.) A Walker
// is not safe for concurrent use.
type Walker struct {
	g    *Graph
	memo map[string]*Outcome
}

// NewWalker returns a Walker of g.
func NewWalker(g *Graph) *Walker { return &Walker{g: g, memo: map[string]*Outcome{}} }

// firstStep is Next without its Others.
func (g *Graph) firstStep(from Installed) *Step {
	p := g.first(from)
	if p < 0 || p == g.own(from) {
		return nil
	}
	return &Step{From: from, To: g.Order[p], Edges: g.edgesAt(p, from)}
}

// Outcome returns from's outcome.
func (w *Walker) Outcome(from Installed) Outcome {
	if b, ok := w.g.Channel.Bundles[from.Name]; ok {
		if sameVersion(InstalledBundle(b).Version, from.Version) {
			return *w.bundle(b)
		}
		// Installed at another version than the catalog's (a rare
		// republished bundle): its path may come back to its own name,
		// which the memo does not know; follow it.
		path, err := w.g.Path(from)
		o := Outcome{Steps: len(path)}
		if len(path) > 0 {
			next := path[0]
			next.Others = nil
			o.Next, o.End = &next, path[len(path)-1].To
		}
		if err != nil {
			o.Loop = err
		}
		return o
	}
	// A bundle of another channel, or a virtual node: nothing comes back
	// to it, so its outcome is its first step and its target's.
	st := w.g.firstStep(from)
	if st == nil {
		return Outcome{}
	}
	o := *w.bundle(st.To)
	o.Next, o.Steps = st, o.Steps+1
	if o.End == nil {
		o.End = st.To
	}
	return o
}

func sameVersion(a, b *semver.Version) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equals(*b)
}

// bundle returns the outcome of a bundle of the channel, walking from it
// until a bundle with a known outcome, a bundle OLM keeps, or a bundle
// the walk has passed (a loop), then filling in the outcome of every
// bundle passed.
func (w *Walker) bundle(b *model.Bundle) *Outcome {
	if o, ok := w.memo[b.Name]; ok {
		return o
	}
	type node struct {
		b    *model.Bundle
		next *Step
	}
	var stack []node
	onStack := map[string]int{}
	var base *Outcome // the outcome the bundles on the stack lead to
	for cur := b; ; {
		if o, ok := w.memo[cur.Name]; ok {
			base = o
			break
		}
		if k, ok := onStack[cur.Name]; ok {
			// stack[k:] is a cycle: each of its bundles comes back to
			// itself after len(stack)-k steps, the last from its
			// predecessor on the cycle.
			m := len(stack) - k
			for i := k; i < len(stack); i++ {
				prev := stack[k+(i-k+m-1)%m].b
				w.memo[stack[i].b.Name] = &Outcome{Next: stack[i].next, Steps: m, End: stack[i].b,
					Loop: fmt.Errorf("%w: %s comes back to %s", ErrLoop, InstalledBundle(prev), stack[i].b.Name)}
			}
			stack = stack[:k]
			base = w.memo[cur.Name]
			break
		}
		st := w.g.firstStep(InstalledBundle(cur))
		onStack[cur.Name] = len(stack)
		stack = append(stack, node{cur, st})
		if st == nil {
			stack = stack[:len(stack)-1]
			base = &Outcome{}
			w.memo[cur.Name] = base
			break
		}
		cur = st.To
	}
	for i := len(stack) - 1; i >= 0; i-- {
		n := stack[i]
		o := &Outcome{Next: n.next, Steps: base.Steps + 1, End: base.End, Loop: base.Loop}
		if o.End == nil {
			o.End = n.next.To
		}
		w.memo[n.b.Name] = o
		base = o
	}
	return w.memo[b.Name]
}

// InstalledBundle is b as an installed bundle: its name, and its version
// when its blob gives one.
func InstalledBundle(b *model.Bundle) Installed {
	in := Installed{Name: b.Name}
	if b.HasBlob {
		v := b.Version
		in.Version = &v
	}
	return in
}

// ResolveFrom finds the installed bundle that --from names in a package:
// a bundle of the channel by name, else a bundle of another channel of the
// package by name (a cluster that switches channel), else, when from is a
// version, the package's one bundle of that version. Anything else is a
// bundle the catalog does not hold, a virtual node: its version is read
// from a "vX.Y.Z" or "X.Y.Z" suffix of its name when there is one, so that
// skipRange edges can cover it.
func ResolveFrom(pkg *model.Package, ch *model.Channel, from string) (Installed, error) {
	if b, ok := ch.Bundles[from]; ok {
		return InstalledBundle(b), nil
	}
	names := make([]string, 0, len(pkg.Channels))
	for name := range pkg.Channels {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if b, ok := pkg.Channels[name].Bundles[from]; ok {
			return InstalledBundle(b), nil
		}
	}
	if v, err := semver.ParseTolerant(from); err == nil && !strings.ContainsAny(from, "/ ") {
		var found []*model.Bundle
		seen := map[string]bool{}
		for _, name := range names {
			for _, b := range pkg.Channels[name].Bundles {
				if b.HasBlob && b.Version.Equals(v) && !seen[b.Name] {
					seen[b.Name] = true
					found = append(found, b)
				}
			}
		}
		switch len(found) {
		case 0:
			return Installed{Version: &v}, nil
		case 1:
			return InstalledBundle(found[0]), nil
		}
		var ns []string
		for _, b := range found {
			ns = append(ns, b.Name)
		}
		slices.Sort(ns)
		return Installed{}, fmt.Errorf("version %s names %d bundles of package %q (%s): give a bundle name", v, len(found), pkg.Name, strings.Join(ns, ", "))
	}
	in := Installed{Name: from}
	if i := versionSuffix(from); i >= 0 {
		if v, err := semver.ParseTolerant(from[i:]); err == nil {
			in.Version = &v
		}
	}
	return in, nil
}

// versionSuffix returns where a version begins in a bundle name such as
// "etcdoperator.v0.9.2" or "foo-1.2.3", or -1.
func versionSuffix(name string) int {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c == '.' || c == '-') && i+1 < len(name) {
			rest := name[i+1:]
			if rest[0] == 'v' && len(rest) > 1 {
				rest = rest[1:]
			}
			if rest[0] >= '0' && rest[0] <= '9' {
				if _, err := semver.ParseTolerant(rest); err == nil {
					return len(name) - len(rest)
				}
			}
		}
	}
	return -1
}
