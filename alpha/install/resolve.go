package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/pkg/suggest"
)

// Subscription is a new Subscription: what it asks OLM to install.
type Subscription struct {
	// Catalog is the CatalogSource it names ("" for the resolver's first).
	Catalog string `json:"catalog"`
	Package string `json:"package"`
	// Channel is its channel; "" leaves it out, and then every channel is
	// a candidate, the default channel first.
	Channel string `json:"channel,omitempty"`
	// StartingCSV is the bundle to install first; "" for the channel head.
	StartingCSV string `json:"startingCSV,omitempty"`
}

// name is the subscription's name in OLM's messages.
func (s Subscription) name() string { return s.Package }

// Status is the outcome of a resolution.
type Status string

// The outcomes.
const (
	// Installable: OLM installs the bundles of the answer.
	Installable Status = "installable"
	// Unsatisfiable: no set of bundles meets every constraint; OLM's
	// InstallPlan fails with "constraints not satisfiable".
	Unsatisfiable Status = "unsatisfiable"
	// Failed: OLM stops before it solves (a channel it cannot order, a
	// constraint it cannot read, two bundles it cannot tell apart).
	Failed Status = "error"
	// Undecided: the question was not decided within the resolver's
	// budget, or a CEL rule costs more than CELCostLimit: not an answer of
	// OLM's (which has no bound), ours. The Error says which.
	Undecided Status = "undecided"
)

// resolution is one question being answered: OLM's variables as they are
// made.
type resolution struct {
	r   *Resolver
	sub Subscription
	cat *Catalog
	x   *eval
	// deps are the dependencies of the entries visited; terms counts
	// their candidates, the size of the solver's problem.
	deps  map[*Entry]*entryDeps
	terms int

	visited map[*Entry]bool
	// ids maps an identifier to the entry whose variable holds it now: OLM
	// keeps variables in a map by identifier, so an entry with the same
	// identifier as another (same catalog, channel and bundle name, other
	// package) takes its place.
	ids   map[string]*Entry
	order []string // identifiers in the order they first appeared
	errs  []error
}

// Resolve answers what OLM installs for sub. The error is for a question
// that names no catalog the resolver has, or ctx's error when ctx is done
// before the answer; OLM's own failures are answers, and so is a question
// left undecided within the resolver's Budget (Undecided).
func (r *Resolver) Resolve(ctx context.Context, sub Subscription) (*Answer, error) {
	cat := r.Catalog(sub.Catalog)
	if cat == nil {
		return nil, fmt.Errorf("no catalog named %q", sub.Catalog)
	}
	sub.Catalog = cat.Name
	x, end := newEval(ctx, r.Budget)
	defer end()
	qctx := x.ctx
	res := &resolution{r: r, sub: sub, cat: cat, x: x, deps: map[*Entry]*entryDeps{},
		visited: map[*Entry]bool{}, ids: map[string]*Entry{}}
	a, p, err := res.run()
	if err == nil {
		return a, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var tl *tooLargeError
	if errors.Is(context.Cause(qctx), errBudget) || errors.Is(err, errCELCost) || errors.As(err, &tl) {
		return res.undecided(p, err), nil
	}
	return nil, err
}

// errBudget ends a question's context when its budget is spent.
var errBudget = errors.New("the question's budget is spent")

// newEval makes a question's evaluation: its context is ctx's, ended with
// errBudget when budget (if not zero) is spent. Call end when the
// question is answered.
func newEval(ctx context.Context, budget time.Duration) (x *eval, end func()) {
	qctx, cancel := context.WithCancelCause(ctx)
	x = &eval{ctx: qctx, expire: func() { cancel(errBudget) }}
	if budget <= 0 {
		return x, func() { cancel(nil) }
	}
	// A timer ends the context (for what waits on it: gini's solve, CEL),
	// and every check looks at the clock too, so that a budget shorter
	// than the timer's delay is spent all the same.
	x.deadline = time.Now().Add(budget)
	t := time.AfterFunc(budget, x.expire)
	return x, func() { t.Stop(); cancel(nil) }
}

// run answers the question; on an error it returns the problem as far as
// it was made (nil before the solver's input is complete).
func (res *resolution) run() (*Answer, *problem, error) {
	a := &Answer{Subscription: res.sub}
	if res.x.stop() {
		return nil, nil, res.x.err
	}
	subVar, cands, err := res.subscription()
	if res.x.err != nil {
		return nil, nil, res.x.err
	}
	if err != nil {
		a.fail(err)
		return a, nil, nil
	}
	p := res.problem(subVar)
	sol, err := solve(res.x, p)
	if err != nil {
		return nil, p, err
	}
	if sol.unsat {
		if err := a.unsatisfiable(res.x, p, sol.core); err != nil {
			return nil, p, err
		}
		return a, p, nil
	}
	// OLM finds each chosen bundle again by catalog, channel and name; two
	// bundles of that identity fail the resolution.
	var chosen []*Entry
	var errs []error
	for _, i := range sol.selected {
		e := p.vars[i].entry
		if e == nil {
			continue
		}
		if n := e.Catalog.named[[2]string{e.Channel, e.Name()}]; n != 1 {
			errs = append(errs, &IdentityError{Catalog: e.Catalog.Name, Channel: e.Channel, Bundle: e.Name(), Count: n})
			continue
		}
		chosen = append(chosen, e)
	}
	if len(errs) > 0 {
		a.fail(errors.Join(errs...))
		return a, p, nil
	}
	a.installable(res, chosen, cands)
	return a, p, nil
}

// BundleOfVersion finds the starting bundle of a version (read
// tolerantly) in the Subscription's package, and channel when it names
// one. When the package or the channel is not in the catalog it returns
// "" and no error: there is no version to look for, and the resolution
// answers as OLM does for such a Subscription (not installable, naming
// what is missing, with its suggestion), as it does without a version.
func (r *Resolver) BundleOfVersion(sub Subscription, version string) (string, error) {
	want, err := semver.ParseTolerant(version)
	if err != nil {
		return "", fmt.Errorf("version %q: %w", version, err)
	}
	cat := r.Catalog(sub.Catalog)
	if cat == nil {
		return "", fmt.Errorf("no catalog named %q", sub.Catalog)
	}
	channels, _ := cat.Channels(sub.Package)
	if len(channels) == 0 || (sub.Channel != "" && !slices.Contains(channels, sub.Channel)) {
		return "", nil
	}
	found := ""
	for _, ch := range channels {
		if sub.Channel != "" && ch != sub.Channel {
			continue
		}
		for _, e := range cat.Entries(sub.Package, ch) {
			if e.Bundle.version != nil && e.Bundle.version.Equals(want) {
				if found != "" && found != e.Name() {
					return "", fmt.Errorf("version %s names bundles %s and %s: give the bundle", version, found, e.Name())
				}
				found = e.Name()
			}
		}
	}
	if found == "" {
		where := "package " + sub.Package
		if sub.Channel != "" {
			where += ", channel " + sub.Channel
		}
		return "", fmt.Errorf("no bundle of version %s in %s of catalog %s", version, where, cat.Name)
	}
	return found, nil
}

// UnknownError is a Subscription that names a package, channel or
// starting bundle its catalog does not hold: a question that is wrong
// (a misspelt name) rather than one OLM answers "not installable".
type UnknownError struct{ What string }

func (e *UnknownError) Error() string { return e.What }

// Unknown returns an *UnknownError when the Subscription's catalog does
// not hold its package, its channel or its starting bundle, in the words
// (and with the suggestion) the unsatisfiable answer would give; nil
// otherwise, and for a catalog the resolver does not have (Resolve says
// so).
func (r *Resolver) Unknown(sub Subscription) error {
	cat := r.Catalog(sub.Catalog)
	if cat == nil {
		return nil
	}
	sub.Catalog = cat.Name
	var npkg, nch, ncsv int
	if p := cat.packages[sub.Package]; p != nil {
		for _, ch := range p.channels {
			for _, e := range p.byChannel[ch] {
				npkg++
				if sub.Channel != "" && e.Channel != sub.Channel {
					continue
				}
				nch++
				if sub.StartingCSV == "" || e.Name() == sub.StartingCSV {
					ncsv++
				}
			}
		}
	}
	if npkg > 0 && nch > 0 && ncsv > 0 {
		return nil
	}
	res := &resolution{r: r, sub: sub, cat: cat}
	return &UnknownError{What: res.notFound(len(cat.entries), npkg, nch)}
}

// IdentityError is a chosen bundle whose catalog, channel and name are
// those of bundles of other packages too: OLM cannot tell them apart.
type IdentityError struct {
	Catalog, Channel, Bundle string
	Count                    int
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("expected exactly one operator, got %d: catalog %s has %d bundles named %s in channels named %s (in different packages), and OLM tells bundles apart by catalog, channel and name only",
		e.Count, e.Catalog, e.Count, e.Bundle, e.Channel)
}

// notFound says which of the subscription's package, channel and
// starting bundle the catalog does not have (the counts are subscription's:
// the catalog's, the package's and the channel's entries), suggesting a
// name near the one given, or the other catalogs that have the package.
func (res *resolution) notFound(nall, npkg, nch int) string {
	sub, cat := res.sub, res.cat
	switch {
	case nall == 0:
		return fmt.Sprintf("catalog %s has no bundles", cat.Name)
	case npkg == 0:
		s := fmt.Sprintf("package %q is not in catalog %s", sub.Package, cat.Name)
		var others []string
		for _, c := range res.r.catalogs {
			if c != cat && c.packages[sub.Package] != nil {
				others = append(others, c.Name)
			}
		}
		if len(others) > 0 {
			return s + fmt.Sprintf(" (catalog %s has it: --source names the Subscription's catalog)", strings.Join(others, ", "))
		}
		return s + suggest.Hint(sub.Package, cat.Packages())
	case nch == 0:
		channels, _ := cat.Channels(sub.Package)
		return fmt.Sprintf("package %s of catalog %s has no channel %q (its channels: %s)%s", sub.Package, cat.Name, sub.Channel,
			strings.Join(channels, ", "), suggest.Hint(sub.Channel, channels))
	}
	p := cat.packages[sub.Package]
	var bundles []string
	for _, ch := range p.channels {
		if sub.Channel != "" && ch != sub.Channel {
			continue
		}
		for _, e := range p.byChannel[ch] {
			if !slices.Contains(bundles, e.Name()) {
				bundles = append(bundles, e.Name())
			}
		}
	}
	where := fmt.Sprintf("package %s of catalog %s", sub.Package, cat.Name)
	if sub.Channel != "" {
		where = fmt.Sprintf("channel %s of %s", sub.Channel, where)
	}
	return fmt.Sprintf("%s has no bundle %q%s", where, sub.StartingCSV, suggest.BundleHint(sub.StartingCSV, bundles))
}

// subscription makes the subscription's variable and visits the bundles
// it may install (getSubscriptionVariables). It returns the variable and
// the candidates, most preferred first.
func (res *resolution) subscription() (*variable, []*Entry, error) {
	sub, cat := res.sub, res.cat
	name := sub.name()
	// OLM counts the catalog's entries, those of the package, those of the
	// channel too, and those with the starting bundle's name too, to say
	// which is missing. The package's entries are, in a valid catalog,
	// those whose olm.package property names it, which OLM's predicate
	// reads.
	nall := len(cat.entries)
	var npkg, nch, ncsv int
	var entries []*Entry
	if p := cat.packages[sub.Package]; p != nil {
		for _, ch := range p.channels {
			for _, e := range p.byChannel[ch] {
				npkg++
				if sub.Channel != "" && e.Channel != sub.Channel {
					continue
				}
				nch++
				if sub.StartingCSV != "" && e.Name() != sub.StartingCSV {
					continue
				}
				ncsv++
				entries = append(entries, e)
			}
		}
	}
	var reason string
	switch {
	case nall == 0:
		reason = fmt.Sprintf("no operators found from catalog %s referenced by subscription %s", cat.Name, name)
	case npkg == 0:
		reason = fmt.Sprintf("no operators found in package %s in the catalog referenced by subscription %s", sub.Package, name)
	case nch == 0:
		reason = fmt.Sprintf("no operators found in channel %s of package %s in the catalog referenced by subscription %s", sub.Channel, sub.Package, name)
	case ncsv == 0:
		reason = fmt.Sprintf("no operators found with name %s in channel %s of package %s in the catalog referenced by subscription %s", sub.StartingCSV, sub.Channel, sub.Package, name)
	}
	id := "subscription:" + name
	if reason != "" {
		return &variable{id: id, cons: []constraint{
			{kind: mandatory, msg: fmt.Sprintf("subscription %s exists", name)},
			{kind: prohibited, msg: reason, words: res.notFound(nall, npkg, nch)},
		}}, nil, nil
	}
	sorted, err := channelOrder(entries)
	if err != nil {
		return nil, nil, err
	}
	var cands []*Entry
	for _, o := range sorted {
		// Every entry of the subscription's package and channel (all
		// channels when it names none) with this bundle's name; OLM adds
		// them in no set order, we add them in the order above.
		var stack []*Entry
		for _, e := range entries {
			if e.Name() == o.Name() {
				stack = append(stack, e)
			}
		}
		res.bundles(slices.Clone(stack))
		if res.x.err != nil {
			return nil, nil, nil
		}
		if len(res.errs) > 0 {
			return nil, nil, errors.Join(res.errs...)
		}
		slices.SortStableFunc(stack, func(a, b *Entry) int { return slices.Index(sorted, a) - slices.Index(sorted, b) })
		cands = append(cands, stack...)
	}
	v := &variable{id: id, cons: []constraint{{kind: mandatory, msg: fmt.Sprintf("subscription %s exists", name)}}}
	if len(cands) == 0 {
		v.cons = append(v.cons, constraint{kind: dependency, msg: fmt.Sprintf("no operators found matching the criteria of subscription %s", name)})
		return v, nil, nil
	}
	s := make([]string, len(cands))
	for i, c := range cands {
		s[i] = c.id()
	}
	req := s[0]
	if len(s) > 1 {
		req = fmt.Sprintf("at least one of %s or %s", strings.Join(s[:len(s)-1], ", "), s[len(s)-1])
	}
	v.cons = append(v.cons, constraint{kind: dependency, msg: fmt.Sprintf("subscription %s requires %s", name, req), targets: s})
	return v, cands, nil
}

// bundles visits the entries of stack and, transitively, every candidate
// of their dependencies (getBundleVariables), recording identifiers in
// OLM's order of writes.
func (res *resolution) bundles(stack []*Entry) {
	local := map[string]*Entry{}
	var localOrder []string
	write := func(e *Entry) {
		id := e.id()
		if _, ok := local[id]; !ok {
			localOrder = append(localOrder, id)
		}
		local[id] = e
	}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if res.visited[e] {
			write(e)
			continue
		}
		res.visited[e] = true
		d := res.r.dependencies(res.x, e)
		if d == nil { // the question stopped (res.x.err)
			return
		}
		res.deps[e] = d
		for _, dep := range d.deps {
			res.terms += len(dep.Candidates)
		}
		if max := res.r.maxTerms(); res.terms > max {
			res.x.err = &tooLargeError{terms: res.terms, limit: max, visited: len(res.visited)}
			return
		}
		if d.err != nil {
			res.errs = append(res.errs, d.err)
			if d.deps == nil {
				continue
			}
		}
		for _, dep := range d.deps {
			for _, c := range dep.Candidates {
				write(c)
				stack = append(stack, c)
			}
		}
		write(e)
	}
	for _, id := range localOrder {
		if _, ok := res.ids[id]; !ok {
			res.order = append(res.order, id)
		}
		res.ids[id] = local[id]
	}
}

// problem makes the solver's input: the subscription, the bundles visited,
// and OLM's invariants (addInvariants): at most one provider of each API
// and one bundle of each package.
func (res *resolution) problem(sub *variable) *problem {
	p := &problem{}
	byID := map[string]int{}
	p.add(sub)
	byID[sub.id] = 0
	for _, id := range res.order {
		e := res.ids[id]
		v := &variable{id: id, entry: e}
		if e.Bundle.deprecated {
			v.cons = append(v.cons, constraint{kind: prohibited, msg: fmt.Sprintf("bundle %s is deprecated", id)})
		}
		for _, d := range res.deps[e].deps {
			ids := make([]string, len(d.Candidates))
			for i, c := range d.Candidates {
				ids[i] = c.id()
			}
			v.cons = append(v.cons, constraint{kind: dependency, msg: d.olm(), dep: d, targets: ids})
		}
		byID[id] = p.add(v)
	}
	res.invariants(p, byID)
	p.link(byID)
	return p
}

// invariants adds OLM's invariants (addInvariants) over the bundles OLM
// can find again by identity: at most one provider of each API, one
// bundle of each package.
func (res *resolution) invariants(p *problem, byID map[string]int) {
	gvks := map[GVK][]string{}
	pkgs := map[string][]string{}
	for _, id := range res.order {
		e := res.ids[id]
		if e.Catalog.named[[2]string{e.Channel, e.Name()}] != 1 {
			continue
		}
		for _, g := range e.Bundle.gvks {
			gvks[g] = append(gvks[g], id)
		}
		for _, pp := range e.Bundle.packages {
			pkgs[pp.PackageName] = append(pkgs[pp.PackageName], id)
		}
	}
	for _, g := range sortedKeys(gvks, func(a, b GVK) int { return strings.Compare(gvkID(a), gvkID(b)) }) {
		is := gvks[g]
		slices.Sort(is)
		gid := gvkID(g)
		v := &variable{id: gid}
		if len(is) > 1 {
			v.cons = []constraint{
				{kind: mandatory, msg: fmt.Sprintf("there can be only one provider of %s", gid)},
				{kind: atMost, n: 1, msg: fmt.Sprintf("%s and %s provide %s", strings.Join(is[:len(is)-1], ", "), is[len(is)-1], gid), targets: is, invariant: "GVK " + g.String()},
			}
		}
		if _, dup := byID[gid]; !dup {
			byID[gid] = p.add(v)
		}
	}
	for _, name := range sortedKeys(pkgs, strings.Compare) {
		is := pkgs[name]
		slices.Sort(is)
		v := &variable{id: name}
		if len(is) > 1 {
			v.cons = []constraint{
				{kind: mandatory, msg: fmt.Sprintf("there can be only one operator from package %s", name)},
				{kind: atMost, n: 1, msg: fmt.Sprintf("%s and %s originate from package %s", strings.Join(is[:len(is)-1], ", "), is[len(is)-1], name), targets: is, invariant: "package " + name},
			}
		}
		if _, dup := byID[name]; !dup {
			byID[name] = p.add(v)
		}
	}
}

func gvkID(g GVK) string { return fmt.Sprintf("%s (%s/%s)", g.Kind, g.Group, g.Version) }

func sortedKeys[K comparable, V any](m map[K]V, cmp func(a, b K) int) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, cmp)
	return out
}
