package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/property"
)

// A namespace resolved as OLM's catalog operator resolves it
// (operator-lifecycle-manager v0.46.0, resolver.go Resolve and
// step_resolver.go ResolveSteps): every Subscription of the namespace and
// every CSV installed in it go into one problem, with the CatalogSources
// of the namespace and of the global catalog namespace. A Subscription
// with an installed CSV may move to any entry of its channel that
// replaces, skips or skipRange-covers it (or stay); an installed CSV that
// no Subscription names must stay; at most one bundle may provide each API
// and come from each package, installed ones included.

// InstalledCSV is a ClusterServiceVersion installed in the namespace, as
// OLM's resolver reads it (its "@existing" source, source_csvs.go).
type InstalledCSV struct {
	Name string
	// Version is spec.version ("" for none).
	Version string
	// Properties are the CSV's operatorframework.io/properties
	// annotation's, or, without it, what OLM derives from its spec:
	// olm.gvk for each owned CRD and APIService, olm.gvk.required for
	// each required one, and olm.package when exactly one Subscription
	// names the CSV as installed (alpha/cluster derives them).
	Properties []Property
	// Subscription is the Subscription whose status.installedCSV names
	// the CSV ("" for none: then the CSV must stay).
	Subscription string
}

// NamespaceSubscription is a Subscription of the namespace.
type NamespaceSubscription struct {
	Name                    string
	Package, Channel        string
	Source, SourceNamespace string
	StartingCSV             string
	// InstalledCSV and CurrentCSV are the status's; CurrentCSVExists says
	// whether a CSV of the namespace has the name CurrentCSV.
	InstalledCSV, CurrentCSV string
	CurrentCSVExists         bool
}

// NamespaceQuestion is a namespace as OLM's next sync resolves it.
type NamespaceQuestion struct {
	Namespace     string
	Subscriptions []NamespaceSubscription
	Installed     []InstalledCSV
	// Catalogs are the CatalogSources the namespace sees, each with its
	// Namespace set (Catalog.SetNamespace): the namespace's own and the
	// global catalog namespace's.
	Catalogs []*Catalog
	// SourceErrors are the sources OLM cannot read, in its words
	// ("error using catalogsource NS/NAME: ..."): a CatalogSource it has
	// no registry client for, installed CSVs it cannot read. Any of them
	// fails the namespace's resolution.
	SourceErrors []string
}

// NoRegistryClient is OLM's error for a CatalogSource it has no
// connection to (namespace/name).
func NoRegistryClient(namespace, name string) string {
	return fmt.Sprintf("error using catalogsource %s/%s: no registry client established for catalogsource %s/%s", namespace, name, namespace, name)
}

// NamespaceAnswer is what OLM's next sync of a namespace does.
type NamespaceAnswer struct {
	Namespace string `json:"namespace"`
	// Status is Installable when the namespace resolves (whether or not
	// anything changes), Unsatisfiable, Failed (OLM stops before it
	// solves) or Undecided.
	Status Status `json:"status"`
	// Operators are the bundles the solution holds that are not
	// installed: what the InstallPlan installs.
	Operators []NamespaceOperator `json:"operators,omitempty"`
	// Kept are the installed CSVs the solution keeps.
	Kept []string `json:"kept,omitempty"`
	// Updated are the Subscriptions whose status.currentCSV moves.
	Updated []SubscriptionUpdate `json:"updated,omitempty"`
	// Reasons and Constraints, for an unsatisfiable namespace, are as
	// Answer's; Error is why OLM fails or what left the question
	// undecided.
	Reasons     []string `json:"reasons,omitempty"`
	Constraints []string `json:"constraints,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// NamespaceOperator is a bundle OLM's solution holds that is not
// installed.
type NamespaceOperator struct {
	Install
	// CatalogSource and CatalogSourceNamespace name its CatalogSource.
	CatalogSource          string `json:"catalogSource"`
	CatalogSourceNamespace string `json:"catalogSourceNamespace"`
	// Replaces is the CSV it replaces: the installed one it upgrades, or
	// the catalog entry's replaces.
	Replaces string `json:"replaces,omitempty"`
	// Subscriptions are the Subscriptions it satisfies; none: OLM adds a
	// Subscription for it (GeneratedSubscription).
	Subscriptions []string `json:"subscriptions,omitempty"`
	// GeneratedSubscription is the name of the Subscription OLM's
	// InstallPlan creates for it, when no Subscription matches it.
	GeneratedSubscription string `json:"generatedSubscription,omitempty"`
	// UpToDate: every Subscription it satisfies already has it as its
	// current CSV: no step.
	UpToDate bool `json:"upToDate,omitempty"`
	// RequiredBy are the bundles (installed or new) whose dependencies it
	// satisfies.
	RequiredBy []string `json:"requiredBy,omitempty"`
	// BundleLookup: the catalog gives the bundle by image only (an
	// olm.bundle with an image): OLM unpacks the image for its steps.
	BundleLookup bool `json:"bundleLookup,omitempty"`

	entry *Entry
}

// Entry returns the operator's catalog entry (its bundle's properties).
func (o *NamespaceOperator) Entry() *Entry { return o.entry }

// SubscriptionUpdate is a Subscription whose status.currentCSV the sync
// moves.
type SubscriptionUpdate struct {
	Subscription string `json:"subscription"`
	From         string `json:"from,omitempty"`
	To           string `json:"to"`
}

// installedCatalog is the catalog of a namespace's installed CSVs, OLM's
// "@existing" source: no channels, each CSV a source of its own.
func installedCatalog(ns string, csvs []InstalledCSV) *Catalog {
	c := &Catalog{Name: "@existing", Namespace: ns, virtual: true, packages: map[string]*pkgInfo{}, named: map[[2]string]int{}}
	for _, csv := range csvs {
		b := installedBundle(csv)
		e := &Entry{Bundle: b, Catalog: c, ident: c.Key() + "//" + csv.Name, subscription: csv.Subscription}
		c.entries = append(c.entries, e)
		c.named[[2]string{"", csv.Name}]++
	}
	return c
}

// installedBundle is what the resolver reads of an installed CSV.
func installedBundle(csv InstalledCSV) *Bundle {
	b := &Bundle{Name: csv.Name}
	for _, p := range csv.Properties {
		b.Properties = append(b.Properties, p)
		if b.addProvided(p.Type, p.Value) && p.Type == property.TypePackage && b.Package == "" {
			b.Package = b.packages[len(b.packages)-1].PackageName
		}
	}
	b.own = len(b.Properties)
	b.Version = csv.Version
	if v, err := semver.Parse(csv.Version); err == nil {
		b.version = &v
	}
	return b
}

// ResolveNamespace answers what OLM's next sync of the namespace does.
// The error is ctx's, when it is done first; OLM's failures are answers,
// and so is a question past the limits (Undecided).
func ResolveNamespace(ctx context.Context, q NamespaceQuestion, limits Limits) (*NamespaceAnswer, error) {
	installed := installedCatalog(q.Namespace, q.Installed)
	r, err := newResolver(q.Namespace, installed, q.Catalogs)
	if err != nil {
		return nil, err
	}
	r.Budget, r.MaxTerms = limits.Budget, limits.MaxTerms
	x, end := newEval(ctx, r.Budget)
	defer end()
	res := &nsResolution{resolution: resolution{r: r, x: x, deps: map[*Entry]*entryDeps{},
		visited: map[*Entry]bool{}, ids: map[string]*Entry{}}, q: q, installed: installed}
	a, p, err := res.run()
	if err == nil {
		return a, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var tl *tooLargeError
	if errors.Is(context.Cause(x.ctx), errBudget) || errors.Is(err, errCELCost) || errors.As(err, &tl) {
		u := res.undecided(p, err)
		return &NamespaceAnswer{Namespace: q.Namespace, Status: Undecided, Error: u.Error, Constraints: u.Constraints}, nil
	}
	return nil, err
}

// nsResolution is a namespace's resolution: resolution's variables, every
// Subscription's, and the constraints OLM adds for the installed CSVs.
type nsResolution struct {
	resolution
	q         NamespaceQuestion
	installed *Catalog
	subVars   []*variable
	// extra are constraints of bundle variables beyond their
	// dependencies, by identifier: an installed CSV that must stay, a
	// candidate's conflict with the CSV it replaces.
	extra map[string][]constraint
	// replaces is the CSV a candidate replaces, by entry.
	replaces map[*Entry]string
	// subOf are the Subscriptions by name.
	subOf map[string]*NamespaceSubscription
}

func (res *nsResolution) run() (*NamespaceAnswer, *problem, error) {
	a := &NamespaceAnswer{Namespace: res.q.Namespace}
	res.extra = map[string][]constraint{}
	res.replaces = map[*Entry]string{}
	res.subOf = map[string]*NamespaceSubscription{}
	if res.x.stop() {
		return nil, nil, res.x.err
	}
	// The installed CSVs first, their dependencies with them.
	res.bundles(slices.Clone(res.installed.entries))
	if res.x.err != nil {
		return nil, nil, res.x.err
	}
	if len(res.errs) > 0 {
		a.fail(aggregate(res.errs))
		return a, nil, nil
	}
	for _, e := range res.installed.entries {
		if e.subscription == "" {
			res.extra[e.id()] = append(res.extra[e.id()], constraint{kind: mandatory,
				msg: fmt.Sprintf("clusterserviceversion %s exists and is not referenced by a subscription", e.Name())})
		}
	}
	var subErrs []error
	for i := range res.q.Subscriptions {
		sub := &res.q.Subscriptions[i]
		res.subOf[sub.Name] = sub
		v, err := res.subscriptionVar(sub)
		if res.x.err != nil {
			return nil, nil, res.x.err
		}
		if err != nil {
			subErrs = append(subErrs, err)
			continue
		}
		res.subVars = append(res.subVars, v)
	}
	// OLM reports the catalogs it cannot read first, then the
	// Subscriptions' errors.
	if len(res.q.SourceErrors) > 0 {
		var errs []error
		for _, e := range slices.Sorted(slices.Values(res.q.SourceErrors)) {
			errs = append(errs, errors.New(e))
		}
		a.fail(aggregate(errs))
		return a, nil, nil
	}
	if len(subErrs) > 0 {
		a.fail(aggregate(subErrs))
		return a, nil, nil
	}
	p := res.nsProblem()
	sol, err := solve(res.x, p)
	if err != nil {
		return nil, p, err
	}
	if sol.unsat {
		var as Answer
		if err := as.unsatisfiable(res.x, p, sol.core); err != nil {
			return nil, p, err
		}
		a.Status, a.Reasons, a.Constraints = as.Status, as.Reasons, as.Constraints
		return a, p, nil
	}
	in := map[*Entry]bool{}
	var chosen []*Entry
	var errs []error
	for _, i := range sol.selected {
		e := p.vars[i].entry
		if e == nil {
			continue
		}
		in[e] = true
		if e.Catalog.virtual {
			a.Kept = append(a.Kept, e.Name())
			continue
		}
		if n := e.Catalog.named[[2]string{e.Channel, e.Name()}]; n != 1 {
			errs = append(errs, &IdentityError{Catalog: e.Catalog.Key(), Channel: e.Channel, Bundle: e.Name(), Count: n})
			continue
		}
		chosen = append(chosen, e)
	}
	if len(errs) > 0 {
		a.fail(aggregate(errs))
		return a, p, nil
	}
	a.Status = Installable
	slices.Sort(a.Kept)
	for _, e := range chosen {
		a.Operators = append(a.Operators, res.operator(e, in))
	}
	slices.SortFunc(a.Operators, func(x, y NamespaceOperator) int {
		return strings.Compare(x.Package+"/"+x.Bundle, y.Package+"/"+y.Bundle)
	})
	for i := range a.Operators {
		op := &a.Operators[i]
		for _, name := range op.Subscriptions {
			if sub := res.subOf[name]; sub.CurrentCSV != op.Bundle {
				a.Updated = append(a.Updated, SubscriptionUpdate{Subscription: name, From: sub.CurrentCSV, To: op.Bundle})
			}
		}
	}
	slices.SortFunc(a.Updated, func(x, y SubscriptionUpdate) int { return strings.Compare(x.Subscription, y.Subscription) })
	return a, p, nil
}

func (a *NamespaceAnswer) fail(err error) {
	a.Status = Failed
	a.Error = err.Error()
}

// aggregate joins errors as apimachinery's NewAggregate, which OLM's
// resolver uses, does: nested aggregates flattened, each message once, in
// brackets when there are several.
func aggregate(errs []error) error {
	var flat aggErr
	for _, e := range errs {
		var a aggErr
		if errors.As(e, &a) {
			flat = append(flat, a...)
		} else if j, ok := e.(interface{ Unwrap() []error }); ok {
			flat = append(flat, j.Unwrap()...)
		} else if e != nil {
			flat = append(flat, e)
		}
	}
	if len(flat) == 0 {
		return nil
	}
	return flat
}

type aggErr []error

func (a aggErr) Error() string {
	var msgs []string
	for _, e := range a {
		if m := e.Error(); !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// operator is a chosen entry as the InstallPlan holds it: the
// Subscriptions that match it (step_resolver.go), what it replaces, who
// requires it.
func (res *nsResolution) operator(e *Entry, in map[*Entry]bool) NamespaceOperator {
	op := NamespaceOperator{Install: install(e), CatalogSource: e.Catalog.Name, CatalogSourceNamespace: e.Catalog.Namespace,
		Replaces: e.Replaces, BundleLookup: e.Bundle.Image != "", entry: e}
	op.Catalog = e.Catalog.Key()
	if r, ok := res.replaces[e]; ok {
		op.Replaces = r
	}
	upToDate := true
	for i := range res.q.Subscriptions {
		sub := &res.q.Subscriptions[i]
		if sub.Package != e.Package() || (sub.Channel != "" && sub.Channel != e.Channel) {
			continue
		}
		if (sub.Source != "" || sub.SourceNamespace != "") && (sub.Source != e.Catalog.Name || sub.SourceNamespace != e.Catalog.Namespace) {
			continue
		}
		op.Subscriptions = append(op.Subscriptions, sub.Name)
		if !sub.CurrentCSVExists || sub.CurrentCSV != e.Name() {
			upToDate = false
		}
	}
	op.UpToDate = len(op.Subscriptions) > 0 && upToDate
	if len(op.Subscriptions) == 0 {
		op.GeneratedSubscription = fmt.Sprintf("%s-%s-%s-%s", e.Package(), e.Channel, e.Catalog.Name, e.Catalog.Namespace)
	}
	for dependent, d := range res.deps {
		if !in[dependent] {
			continue
		}
		for _, dep := range d.deps {
			if first := firstIn(dep.Candidates, in); first == e && !slices.Contains(op.RequiredBy, dependent.Name()) {
				op.RequiredBy = append(op.RequiredBy, dependent.Name())
			}
		}
	}
	slices.Sort(op.RequiredBy)
	return op
}

// firstIn is the first of cands in the solution.
func firstIn(cands []*Entry, in map[*Entry]bool) *Entry {
	for _, c := range cands {
		if in[c] {
			return c
		}
	}
	return nil
}

// subscriptionVar makes a Subscription's variable (getSubscriptionVariables)
// and visits its candidates.
func (res *nsResolution) subscriptionVar(sub *NamespaceSubscription) (*variable, error) {
	name := sub.Name
	id := "subscription:" + name
	var current *Entry
	for _, e := range res.installed.entries {
		if e.Name() == sub.InstalledCSV {
			current = e
			break
		}
	}
	cat := res.r.byName[sub.Source+"/"+sub.SourceNamespace]
	var all []*Entry
	if cat != nil {
		all = cat.entries
	}
	// OLM counts the catalog's entries, those of the package, those of the
	// channel too, and those with the starting CSV's name too (only when
	// nothing is installed), to say which is missing.
	var nall, npkg, nch, ncsv int
	var entries []*Entry
	for _, e := range all {
		nall++
		if !(pkgPredicate(sub.Package).test(res.x, e)) {
			continue
		}
		npkg++
		if sub.Channel != "" && e.Channel != sub.Channel {
			continue
		}
		nch++
		if current == nil && sub.StartingCSV != "" && e.Name() != sub.StartingCSV {
			continue
		}
		ncsv++
		entries = append(entries, e)
	}
	var reason string
	switch {
	case nall == 0:
		reason = fmt.Sprintf("no operators found from catalog %s in namespace %s referenced by subscription %s", sub.Source, sub.SourceNamespace, name)
	case npkg == 0:
		reason = fmt.Sprintf("no operators found in package %s in the catalog referenced by subscription %s", sub.Package, name)
	case nch == 0:
		reason = fmt.Sprintf("no operators found in channel %s of package %s in the catalog referenced by subscription %s", sub.Channel, sub.Package, name)
	case ncsv == 0:
		reason = fmt.Sprintf("no operators found with name %s in channel %s of package %s in the catalog referenced by subscription %s", sub.StartingCSV, sub.Channel, sub.Package, name)
	}
	if reason != "" {
		return &variable{id: id, cons: []constraint{
			{kind: mandatory, msg: fmt.Sprintf("subscription %s exists", name)},
			{kind: prohibited, msg: reason, words: res.subNotFound(sub, cat, nall, npkg, nch)},
		}}, nil
	}
	sorted, err := channelOrder(entries)
	if err != nil {
		return nil, err
	}
	var cands []*Entry
	for _, o := range sorted {
		if current != nil && !replacesCurrent(o, current) {
			continue
		}
		var stack []*Entry
		for _, e := range entries {
			if e.Name() == o.Name() {
				stack = append(stack, e)
			}
		}
		res.bundles(slices.Clone(stack))
		if res.x.err != nil {
			return nil, nil
		}
		if len(res.errs) > 0 {
			err := aggregate(res.errs)
			res.errs = nil
			return nil, err
		}
		slices.SortStableFunc(stack, func(a, b *Entry) int { return slices.Index(sorted, a) - slices.Index(sorted, b) })
		cands = append(cands, stack...)
	}
	var ids []string
	for _, c := range cands {
		if current != nil {
			res.replaces[c] = current.Name()
			res.extra[c.id()] = append(res.extra[c.id()], constraint{kind: conflict, targets: []string{current.id()}})
		}
		ids = append(ids, c.id())
	}
	if current != nil {
		ids = append(ids, current.id())
	}
	v := &variable{id: id, cons: []constraint{{kind: mandatory, msg: fmt.Sprintf("subscription %s exists", name)}}}
	if len(ids) == 0 {
		v.cons = append(v.cons, constraint{kind: dependency, msg: fmt.Sprintf("no operators found matching the criteria of subscription %s", name)})
		return v, nil
	}
	req := ids[0]
	if len(ids) > 1 {
		req = fmt.Sprintf("at least one of %s or %s", strings.Join(ids[:len(ids)-1], ", "), ids[len(ids)-1])
	}
	v.cons = append(v.cons, constraint{kind: dependency, msg: fmt.Sprintf("subscription %s requires %s", name, req), targets: ids})
	return v, nil
}

// replacesCurrent is OLM's filter of a Subscription's candidates when a
// CSV is installed: the entry's skipRange includes the installed version,
// or it replaces or skips the installed CSV.
func replacesCurrent(e, current *Entry) bool {
	if current.Bundle.version != nil && e.skipRange != nil && e.skipRange(*current.Bundle.version) {
		return true
	}
	return e.Replaces == current.Name() || slices.Contains(e.Skips, current.Name())
}

// subNotFound says in words what of a Subscription's package, channel and
// starting CSV its catalog does not have.
func (res *nsResolution) subNotFound(sub *NamespaceSubscription, cat *Catalog, nall, npkg, nch int) string {
	switch {
	case cat == nil:
		return fmt.Sprintf("subscription %s names CatalogSource %s/%s, which the namespace does not see (its catalogs: %s)",
			sub.Name, sub.SourceNamespace, sub.Source, res.catalogNames())
	case nall == 0:
		return fmt.Sprintf("CatalogSource %s/%s has no bundles", sub.SourceNamespace, sub.Source)
	}
	res.sub = Subscription{Catalog: cat.Key(), Package: sub.Package, Channel: sub.Channel, StartingCSV: sub.StartingCSV}
	res.cat = cat
	return res.notFound(nall, npkg, nch)
}

func (res *nsResolution) catalogNames() string {
	var names []string
	for _, c := range res.r.catalogs {
		names = append(names, c.Namespace+"/"+c.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// nsProblem makes the solver's input: the installed CSVs and every bundle
// visited, the Subscriptions, and OLM's invariants.
func (res *nsResolution) nsProblem() *problem {
	p := &problem{}
	byID := map[string]int{}
	for _, v := range res.subVars {
		byID[v.id] = p.add(v)
	}
	for _, id := range res.order {
		e := res.ids[id]
		// In OLM's order (NewBundleVariableFromOperator, then
		// getBundleVariables, then getSubscriptionVariables): the
		// mandatory constraint of an installed CSV no Subscription names,
		// deprecation, the dependencies, the conflict of a candidate with
		// the CSV it replaces.
		v := &variable{id: id, entry: e}
		for _, c := range res.extra[id] {
			if c.kind == mandatory {
				v.cons = append(v.cons, c)
			}
		}
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
		for _, c := range res.extra[id] {
			if c.kind != mandatory {
				v.cons = append(v.cons, c)
			}
		}
		byID[id] = p.add(v)
	}
	res.invariants(p, byID)
	p.link(byID)
	return p
}
