package install

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report answers, for every package and channel of a catalog (or for
// every bundle of each channel), whether a new Subscription can install
// it from the resolver's catalogs.
type Report struct {
	// Catalogs are the catalogs the answers come from, in OLM's order of
	// preference when none is preferred.
	Catalogs []CatalogInfo `json:"catalogs"`
	// Catalog is the one whose packages are asked about.
	Catalog string    `json:"catalog"`
	Answers []*Answer `json:"answers"`
}

// CatalogInfo names a catalog and its priority.
type CatalogInfo struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
}

// Counts returns how many answers have each status.
func (r *Report) Counts() map[Status]int {
	out := map[Status]int{}
	for _, a := range r.Answers {
		out[a.Status]++
	}
	return out
}

// All asks, for every package and channel of the catalog named catalog
// ("" for the first), what a new Subscription to the channel installs;
// with everyBundle, for every bundle of each channel too (as the
// subscription's starting bundle), the head first.
// Each question gets the resolver's Budget; the error is ctx's when it is
// done before the report is complete. An answer installing more than
// MaxReportInstalls bundles keeps the first of them and leaves its tree
// out (InstallsOmitted), so that a report grows with the questions, not
// with their product by the bundles each installs (on a chain of n
// dependencies, n questions each install up to n bundles); the question
// asked alone has the whole answer.
func (r *Resolver) All(ctx context.Context, catalog string, everyBundle bool) (*Report, error) {
	return r.allOf(ctx, catalog, everyBundle, nil)
}

// allOf is All over the packages for which keep (nil: all) reports true.
func (r *Resolver) allOf(ctx context.Context, catalog string, everyBundle bool, keep func(pkg string) bool) (*Report, error) {
	cat := r.Catalog(catalog)
	if cat == nil {
		return nil, fmt.Errorf("no catalog named %q", catalog)
	}
	rep := &Report{Catalog: cat.Name, Answers: []*Answer{}}
	for _, c := range r.catalogs {
		rep.Catalogs = append(rep.Catalogs, CatalogInfo{Name: c.Name, Priority: c.Priority})
	}
	for _, pkg := range cat.Packages() {
		if keep != nil && !keep(pkg) {
			continue
		}
		channels, _ := cat.Channels(pkg)
		for _, ch := range channels {
			subs := []Subscription{{Catalog: cat.Name, Package: pkg, Channel: ch}}
			if everyBundle {
				for _, e := range r.channelOrder(cat, pkg, ch) {
					subs = append(subs, Subscription{Catalog: cat.Name, Package: pkg, Channel: ch, StartingCSV: e.Name()})
				}
			}
			for _, s := range subs {
				a, err := r.Resolve(ctx, s)
				if err != nil {
					return nil, err
				}
				a.trim()
				rep.Answers = append(rep.Answers, a)
			}
		}
	}
	return rep, nil
}

// channelOrder lists a channel's entries in OLM's order, head first, then
// those it never reaches (skipped, or off the chain) by name; a channel
// OLM cannot order by name.
func (r *Resolver) channelOrder(c *Catalog, pkg, channel string) []*Entry {
	ch := r.chainOf(c, pkg, channel)
	var out []*Entry
	in := map[*Entry]bool{}
	for _, e := range ch.order {
		out = append(out, e)
		in[e] = true
	}
	for _, e := range c.Entries(pkg, channel) {
		if !in[e] {
			out = append(out, e)
		}
	}
	return out
}

// Why is the answer's reason in one line: the first reason, or the error.
func (a *Answer) Why() string {
	switch a.Status {
	case Unsatisfiable:
		if len(a.Reasons) > 0 {
			s := a.Reasons[0]
			// The subscription's own reason (its candidates) only restates
			// the question.
			n := 0
			for _, r := range a.Reasons[1:] {
				if !strings.HasPrefix(r, subscriptionReason) {
					n++
				}
			}
			if n > 0 {
				s += fmt.Sprintf(" (and %d more)", n)
			}
			return s
		}
	case Failed, Undecided:
		return strings.SplitN(a.Error, "\n", 2)[0]
	}
	return ""
}

// WriteTable writes the report as a table: one line per answer, with what
// it installs or why it cannot, and a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	bundles := false
	for _, a := range r.Answers {
		if a.Subscription.StartingCSV != "" {
			bundles = true
			break
		}
	}
	if bundles {
		fmt.Fprintln(tw, "PACKAGE\tCHANNEL\tSTARTING BUNDLE\tSTATUS\tINSTALLS\tWHY NOT")
	} else {
		fmt.Fprintln(tw, "PACKAGE\tCHANNEL\tSTATUS\tINSTALLS\tWHY NOT")
	}
	for _, a := range r.Answers {
		s := a.Subscription
		var installs string
		if a.Status == Installable {
			names := make([]string, len(a.Installs))
			for i, in := range a.Installs {
				names[i] = in.Bundle
			}
			installs = strings.Join(names, ", ")
			if a.InstallsOmitted > 0 {
				installs += fmt.Sprintf(" and %d more", a.InstallsOmitted)
			}
		}
		if bundles {
			start := s.StartingCSV
			if start == "" {
				start = "(head)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Package, s.Channel, start, a.Status, installs, a.Why())
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Package, s.Channel, a.Status, installs, a.Why())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := r.Counts()
	answers := "answers"
	if len(r.Answers) == 1 {
		answers = "answer"
	}
	undecided := ""
	if n := c[Undecided]; n > 0 {
		undecided = fmt.Sprintf(", %d undecided", n)
	}
	_, err := fmt.Fprintf(w, "\n%d %s: %d installable, %d unsatisfiable, %d fail to resolve%s\n",
		len(r.Answers), answers, c[Installable], c[Unsatisfiable], c[Failed], undecided)
	return err
}

// Regression is a subscription that a catalog's old version installs and
// its new version does not: the rule "uninstallable" of
// `opm alpha diff --check`.
type Regression struct {
	Package     string `json:"package"`
	Channel     string `json:"channel"`
	StartingCSV string `json:"startingCSV,omitempty"`
	Status      Status `json:"status"`
	Why         string `json:"why"`
}

func (g Regression) String() string {
	what := fmt.Sprintf("package %s, channel %s", g.Package, g.Channel)
	if g.StartingCSV != "" {
		what += ", starting at " + g.StartingCSV
	}
	return fmt.Sprintf("%s: installable before, %s now: %s", what, g.Status, g.Why)
}

// Regressions compares two reports of the same questions (All over an old
// and a new catalog): every subscription installable in old that is asked
// in new too and is not installable there. Questions only one report asks
// (a channel or bundle added or removed) are left to the other diff
// rules. A question undecided in old and not installable in new may be a
// regression: it is one, with status Undecided and why, as is one
// installable in old and undecided in new.
func Regressions(old, new *Report) []Regression {
	before := map[Subscription]Status{}
	for _, a := range old.Answers {
		s := a.Subscription
		s.Catalog = ""
		before[s] = a.Status
	}
	var out []Regression
	for _, a := range new.Answers {
		s := a.Subscription
		s.Catalog = ""
		st, ok := before[s]
		switch {
		case !ok || a.Status == Installable:
		case st == Installable:
			out = append(out, Regression{Package: s.Package, Channel: s.Channel, StartingCSV: s.StartingCSV, Status: a.Status, Why: a.Why()})
		case st == Undecided:
			out = append(out, Regression{Package: s.Package, Channel: s.Channel, StartingCSV: s.StartingCSV, Status: Undecided,
				Why: fmt.Sprintf("%s now, and undecided before (%s)", a.Status, old.answer(s).Why())})
		}
	}
	return out
}

// Uninstallable is the rule "uninstallable" of `opm alpha diff --check`
// over two versions of a catalog, each the only CatalogSource: every
// channel, and every bundle as a starting bundle, that a new Subscription
// can install from old and cannot from new (Regressions of two All
// reports with every bundle).
//
// Only the questions whose answer the change can alter are asked: those
// about a package whose bundles differ, or that may depend, directly or
// through other packages, on one whose bundles differ (in either
// version). The others visit the same bundles in both versions, so they
// get the same answer; a catalog compared with itself asks nothing.
//
// Each question gets the limits; the error is ctx's.
func Uninstallable(ctx context.Context, old, new *Catalog, limits Limits) ([]Regression, error) {
	changed := changedPackages(old, new)
	if len(changed) == 0 {
		return nil, nil
	}
	var rs [2]*Resolver
	ask := map[string]bool{}
	for i, c := range []*Catalog{old, new} {
		r, err := NewResolver(c)
		if err != nil {
			return nil, err
		}
		r.Budget, r.MaxTerms = limits.Budget, limits.MaxTerms
		rs[i] = r
		deps, err := r.dependents(ctx, changed)
		if err != nil {
			return nil, err
		}
		for p := range deps {
			ask[p] = true
		}
	}
	var reps [2]*Report
	for i, r := range rs {
		var err error
		if reps[i], err = r.allOf(ctx, "", true, func(pkg string) bool { return ask[pkg] }); err != nil {
			return nil, err
		}
	}
	return Regressions(reps[0], reps[1]), nil
}

// answer returns the report's answer to s (its catalog left out), or an
// empty answer.
func (r *Report) answer(s Subscription) *Answer {
	for _, a := range r.Answers {
		t := a.Subscription
		t.Catalog = ""
		if t == s {
			return a
		}
	}
	return &Answer{}
}

// Limits bound each question of a run of questions (Resolver.Budget and
// MaxTerms).
type Limits struct {
	Budget   time.Duration
	MaxTerms int
}

// MaxReportInstalls is how many bundles an answer of a report lists. Every
// answer of the real catalogs installs at most a few (their dependencies
// go two deep).
const MaxReportInstalls = 64

// trim keeps the first MaxReportInstalls bundles of a large answer, for a
// report.
func (a *Answer) trim() {
	if len(a.Installs) <= MaxReportInstalls {
		return
	}
	a.InstallsOmitted = len(a.Installs) - MaxReportInstalls
	a.Installs = slices.Clone(a.Installs[:MaxReportInstalls]) // not the whole array: a report holds many
	a.Tree, a.Continuations = nil, nil
}
