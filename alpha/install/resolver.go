package install

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Resolver answers install questions over a set of catalogs, as OLM v0's
// resolver (operator-lifecycle-manager v0.46.0,
// pkg/controller/registry/resolver, resolver.go) does for a new
// Subscription in a namespace where nothing is installed yet, and where
// every catalog is a CatalogSource of the same namespace. It is safe for
// use by several goroutines, which it answers at the same time; what it
// learns about the catalogs (the order of each channel, the providers of
// each dependency) is kept for the next question, but for what a question
// stopped before it had learnt in full.
type Resolver struct {
	// catalogs in OLM's order when no catalog is preferred: higher
	// priority first, then by name.
	catalogs []*Catalog
	byName   map[string]*Catalog
	first    *Catalog

	all   []*Entry // every entry, catalogs in order
	byGVK map[GVK][]*Entry
	byPkg map[string][]*Entry

	// namespace is the namespace resolved (ResolveNamespace), installed
	// the catalog of its installed CSVs (nil when none).
	namespace string
	installed *Catalog

	// Budget bounds the time of one question (Resolve); past it the
	// answer is Undecided. Zero: no bound, as in OLM. Set it before the
	// first question.
	Budget time.Duration
	// MaxTerms bounds the size of a question's problem (DefaultMaxTerms
	// when zero, none when negative); past it the answer is Undecided.
	MaxTerms int

	compiler compiler
	// mu guards the maps below, which hold what is learnt; it is never
	// held while anything is computed. Two questions that need the same
	// thing at the same time may both compute it (the same answer); the
	// first stored is kept.
	mu      sync.Mutex
	chains  map[chainKey]*chain
	matches map[string][]*Entry
	deps    map[*Entry]*entryDeps
}

type chainKey struct {
	catalog      *Catalog
	pkg, channel string
}

// chain is a channel in OLM's order (sortChannel), or why it has none.
type chain struct {
	order []*Entry
	err   error
}

// entryDeps are an entry's dependencies, or the error OLM stops at while
// it reads them.
type entryDeps struct {
	deps []*Dependency
	err  error
}

// Dependency is one dependency of a bundle, with its candidates in OLM's
// order of preference.
type Dependency struct {
	// Of is the bundle that depends.
	Of *Entry
	// Property is the property the dependency comes from.
	Property Property
	pred     predicate
	// Candidates are the bundles that satisfy it: those of the dependent's
	// own catalog first, then by catalog priority and name; within a
	// catalog, the default channels first, then by package and channel
	// name; within a channel, from the head down (skipped bundles never
	// satisfy anything).
	Candidates []*Entry
}

// Words is the dependency in words: "GVK g/v/K", "package p in range r"...
func (d *Dependency) Words() string { return d.pred.words() }

// olm is OLM's text of the dependency's constraint.
func (d *Dependency) olm() string {
	return fmt.Sprintf("bundle %s requires an operator %s", d.Of.Name(), d.pred.String())
}

// NewResolver returns a resolver over catalogs; the first is the one a
// subscription refers to unless it names another. Catalog names must be
// unique.
func NewResolver(catalogs ...*Catalog) (*Resolver, error) {
	return newResolver("", nil, catalogs)
}

// newResolver makes a resolver over catalogs, for a namespace when
// namespace is not "" (ResolveNamespace): its catalogs are preferred over
// others of the same priority, and installed (its CSVs, nil when none)
// over every catalog.
func newResolver(namespace string, installed *Catalog, catalogs []*Catalog) (*Resolver, error) {
	if len(catalogs) == 0 && installed == nil {
		return nil, errors.New("no catalog")
	}
	r := &Resolver{byName: map[string]*Catalog{}, byGVK: map[GVK][]*Entry{}, byPkg: map[string][]*Entry{},
		chains: map[chainKey]*chain{}, matches: map[string][]*Entry{}, deps: map[*Entry]*entryDeps{},
		namespace: namespace, installed: installed}
	if len(catalogs) > 0 {
		r.first = catalogs[0]
	}
	for _, c := range catalogs {
		if c.Name == "" {
			return nil, errors.New("a catalog has no name")
		}
		if _, dup := r.byName[c.Key()]; dup {
			return nil, fmt.Errorf("two catalogs are named %q", c.Key())
		}
		r.byName[c.Key()] = c
	}
	r.catalogs = slices.Clone(catalogs)
	// OLM's order of catalogs when none is preferred
	// (cache.sortableSnapshots): higher priority first, then those of the
	// namespace resolved, then by name.
	slices.SortStableFunc(r.catalogs, func(a, b *Catalog) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		if a.Namespace != b.Namespace && namespace != "" {
			if a.Namespace == namespace {
				return -1
			}
			if b.Namespace == namespace {
				return 1
			}
		}
		return cmp.Compare(a.Name, b.Name)
	})
	indexed := r.catalogs
	if installed != nil {
		indexed = append([]*Catalog{installed}, indexed...)
	}
	for _, c := range indexed {
		for _, e := range c.entries {
			r.all = append(r.all, e)
			seen := map[string]bool{}
			for _, p := range e.Bundle.packages {
				if !seen[p.PackageName] {
					seen[p.PackageName] = true
					r.byPkg[p.PackageName] = append(r.byPkg[p.PackageName], e)
				}
			}
			if !seen[e.Package()] {
				r.byPkg[e.Package()] = append(r.byPkg[e.Package()], e)
			}
			for i, g := range e.Bundle.gvks {
				if !slices.Contains(e.Bundle.gvks[:i], g) {
					r.byGVK[g] = append(r.byGVK[g], e)
				}
			}
		}
	}
	return r, nil
}

// Catalog returns the catalog of that name, or the first one for "".
func (r *Resolver) Catalog(name string) *Catalog {
	if name == "" {
		return r.first
	}
	return r.byName[name]
}

// Catalogs returns the catalogs in the order they were given... sorted by
// OLM's preference when none is preferred.
func (r *Resolver) Catalogs() []*Catalog { return r.catalogs }

// chainOf returns a channel of a catalog in OLM's order.
func (r *Resolver) chainOf(c *Catalog, pkg, channel string) *chain {
	k := chainKey{c, pkg, channel}
	r.mu.Lock()
	ch, ok := r.chains[k]
	r.mu.Unlock()
	if ok {
		return ch
	}
	order, err := sortChannel(c.Entries(pkg, channel))
	return remember(r, r.chains, k, &chain{order: order, err: err})
}

// remember stores v under k in m (one of r's maps) unless a value is
// there already, and returns the value stored.
func remember[K comparable, V any](r *Resolver, m map[K]V, k K, v V) V {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := m[k]; ok {
		return old
	}
	m[k] = v
	return v
}

// checkEvery is how many bundles a loop over a catalog's bundles tests
// between two looks at the question's context.
const checkEvery = 64

// channelOrder orders a subscription's candidate entries as OLM tries
// them: the default channel first, then by channel name; each channel in
// its order (sortChannel). entries is sorted in place.
func channelOrder(entries []*Entry) ([]*Entry, error) {
	slices.SortStableFunc(entries, func(a, b *Entry) int {
		if a.Default != b.Default {
			if a.Default {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Channel, b.Channel)
	})
	var sorted []*Entry
	for i := 0; i < len(entries); {
		j := i
		for j < len(entries) && entries[j].Channel == entries[i].Channel {
			j++
		}
		ch, err := sortChannel(entries[i:j])
		if err != nil {
			return nil, err
		}
		sorted = append(sorted, ch...)
		i = j
	}
	return sorted, nil
}

// sortChannel orders a channel's entries as OLM does: the replaces chain
// from the head down, leaving out every entry another one skips. A
// channel with no head, a cycle or more than one chain has no order.
func sortChannel(entries []*Entry) ([]*Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	pkg, channel := entries[0].Package(), entries[0].Channel
	byName := map[string]*Entry{}
	for _, e := range entries {
		byName[e.Name()] = e
	}
	replacedBy := map[*Entry]bool{}
	replaces := map[*Entry]*Entry{}
	skipped := map[string]bool{}
	for _, e := range entries {
		if e.Replaces != "" {
			if r, ok := byName[e.Replaces]; ok {
				replacedBy[r] = true
				replaces[e] = r
			}
		}
		for _, s := range e.Skips {
			if r, ok := byName[s]; ok {
				replacedBy[r] = true
				skipped[s] = true
			}
		}
	}
	var heads []*Entry
	for _, e := range entries {
		if !replacedBy[e] {
			heads = append(heads, e)
		}
	}
	if len(heads) == 0 {
		return nil, fmt.Errorf("no channel heads (entries not replaced by another entry) found in channel %q of package %q", channel, pkg)
	}
	var chains [][]*Entry
	for _, h := range heads {
		var chain []*Entry
		visited := map[*Entry]bool{}
		for cur := h; ; {
			visited[cur] = true
			if !skipped[cur.Name()] {
				chain = append(chain, cur)
			}
			next, ok := replaces[cur]
			if !ok {
				break
			}
			if visited[next] {
				return nil, fmt.Errorf("a cycle exists in the chain of replacement beginning with %q in channel %q of package %q", h.Name(), channel, pkg)
			}
			cur = next
		}
		chains = append(chains, chain)
	}
	if len(chains) > 1 {
		s := make([]string, len(chains))
		for i, c := range chains {
			switch len(c) {
			case 0:
				s[i] = "[]"
			case 1:
				s[i] = c[0].Name()
			default:
				s[i] = c[0].Name() + "..." + c[len(c)-1].Name()
			}
		}
		return nil, fmt.Errorf("a unique replacement chain within a channel is required to determine the relative order between channel entries, but %d replacement chains were found in channel %q of package %q: %s",
			len(s), channel, pkg, strings.Join(s, ", "))
	}
	return chains[0], nil
}

// find returns the entries of every catalog that satisfy p, catalogs in
// order; nil and x.err when the question stopped.
func (r *Resolver) find(x *eval, p predicate) []*Entry {
	k := p.key()
	r.mu.Lock()
	m, ok := r.matches[k]
	r.mu.Unlock()
	if ok {
		return m
	}
	var out []*Entry
	for i, e := range r.superset(p) {
		if i%checkEvery == 0 && x.stop() {
			return nil
		}
		if p.test(x, e) {
			out = append(out, e)
		}
	}
	if x.err != nil {
		return nil
	}
	return remember(r, r.matches, k, out)
}

// superset returns entries among which every match of p is, in order.
func (r *Resolver) superset(p predicate) []*Entry {
	switch q := p.(type) {
	case gvkPredicate:
		return r.byGVK[GVK(q)]
	case pkgPredicate:
		return r.byPkg[string(q)]
	case andPredicate:
		best := r.all
		for _, s := range q {
			if sub := r.superset(s); len(sub) < len(best) {
				best = sub
			}
		}
		return best
	}
	return r.all
}

// dependencies returns an entry's dependencies with their candidates, as
// getBundleVariables computes them; nil when the question stopped (x.err).
func (r *Resolver) dependencies(x *eval, e *Entry) *entryDeps {
	r.mu.Lock()
	d, ok := r.deps[e]
	r.mu.Unlock()
	if ok {
		return d
	}
	d = &entryDeps{}
	preds, from, err := r.compiler.dependencies(e.Bundle.Properties[:e.Bundle.own])
	if err != nil {
		d.err = fmt.Errorf("bundle %s (%s): %w", e.Name(), e.Bundle.Source, err)
		return remember(r, r.deps, e, d)
	}
	seen := map[string]bool{}
	var errs []error
	for i, p := range preds {
		// OLM also reads the translated copies of olm.gvk.required and
		// olm.package.required: the same predicates again, which add
		// nothing to the problem.
		if seen[p.key()] {
			continue
		}
		seen[p.key()] = true
		cands, err := r.candidates(x, e, p)
		if x.err != nil {
			return nil
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.deps = append(d.deps, &Dependency{Of: e, Property: from[i], pred: p, Candidates: cands})
	}
	d.err = errors.Join(errs...)
	return remember(r, r.deps, e, d)
}

// candidates lists the entries that satisfy p for the dependent e, in
// OLM's order: every channel with at least one match is taken whole,
// sorted (sortBundles), and then filtered by p.
func (r *Resolver) candidates(x *eval, e *Entry, p predicate) ([]*Entry, error) {
	type source struct {
		catalog      *Catalog
		pkg, channel string
	}
	matches := r.find(x, p)
	if len(matches) == 0 {
		return nil, nil
	}
	inSource := map[source]bool{}
	for _, m := range matches {
		inSource[source{m.Catalog, m.Package(), m.Channel}] = true
	}
	var out []*Entry
	for _, c := range r.preferred(e.Catalog) {
		if c.virtual {
			// Each installed CSV that matches is a source of its own; OLM
			// orders them as channels of their packages (which they do not
			// have: a package with two of them has two heads, and fails).
			byPkg := map[string][]*Entry{}
			for _, m := range matches {
				if m.Catalog == c {
					byPkg[m.Package()] = append(byPkg[m.Package()], m)
				}
			}
			for _, pkg := range sortedKeys(byPkg, cmp.Compare) {
				order, err := sortChannel(byPkg[pkg])
				if err != nil {
					return nil, err
				}
				for _, b := range order {
					if p.test(x, b) {
						out = append(out, b)
					}
				}
			}
			continue
		}
		// The catalog's matching channels: default channels first, then by
		// package and channel name.
		var srcs []source
		for s := range inSource {
			if s.catalog == c {
				srcs = append(srcs, s)
			}
		}
		slices.SortFunc(srcs, func(a, b source) int {
			ad, bd := c.packages[a.pkg].defaultChannel == a.channel, c.packages[b.pkg].defaultChannel == b.channel
			if ad != bd {
				if ad {
					return -1
				}
				return 1
			}
			if a.pkg != b.pkg {
				return cmp.Compare(a.pkg, b.pkg)
			}
			return cmp.Compare(a.channel, b.channel)
		})
		for _, s := range srcs {
			ch := r.chainOf(c, s.pkg, s.channel)
			if ch.err != nil {
				return nil, ch.err
			}
			for i, b := range ch.order {
				if i%checkEvery == 0 && x.stop() {
					return nil, nil
				}
				if p.test(x, b) {
					out = append(out, b)
				}
			}
		}
	}
	return out, nil
}

// preferred returns the catalogs in OLM's order for a dependent of c
// (cache.sortableSnapshots): the namespace's installed CSVs first, then c,
// then by priority, namespace and name.
func (r *Resolver) preferred(c *Catalog) []*Catalog {
	out := make([]*Catalog, 0, len(r.catalogs)+1)
	if r.installed != nil {
		out = append(out, r.installed)
	}
	if c != r.installed {
		out = append(out, c)
	}
	for _, x := range r.catalogs {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}
