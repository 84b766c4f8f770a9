package install

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// DefaultBudget is the time a question gets by default from the CLI
// (--timeout) and the HTTP routes. OLM's own solver has no bound: on a
// catalog built to be hard (a pigeonhole of conflicting providers) it
// searches for hours.
const DefaultBudget = 10 * time.Second

// maxUndecidedConstraints is how many constraints an undecided answer
// lists.
const maxUndecidedConstraints = 8

// undecided is the answer to a question stopped by err: the budget spent
// (context.DeadlineExceeded) or a CEL rule past its cost limit. It names
// the package asked for and what held the question up: the CEL rule, or
// the constraints of the solver's problem (p; nil when the budget ran out
// before it was made) that leave it the most choices.
func (res *resolution) undecided(p *problem, err error) *Answer {
	a := &Answer{Subscription: res.sub, Status: Undecided}
	var ce *celError
	isCEL := errors.As(err, &ce)
	var tl *tooLargeError
	switch {
	case errors.As(err, &tl):
		a.Error = fmt.Sprintf("undecided: the problem is too large to decide: package %s pulls in %d bundles whose dependencies have more than %d candidates in all, the limit (the largest question of the real catalogs has about a hundred)",
			res.sub.Package, tl.visited, tl.limit)
		return a
	case errors.Is(err, errCELCost) && isCEL:
		a.Error = fmt.Sprintf("undecided: %v (OLM evaluates rules without a limit; fastopm stops there)", ce)
		return a
	case isCEL:
		a.Error = fmt.Sprintf("undecided within %s: the constraints are too hard to decide: evaluating %v", budgetWords(res.r.Budget), ce)
		return a
	case p == nil:
		a.Error = fmt.Sprintf("undecided within %s: the constraints are too hard to decide: package %s's dependencies were still being read (%d bundles visited)",
			budgetWords(res.r.Budget), res.sub.Package, len(res.visited))
		return a
	}
	type choice struct {
		n    int
		text string
	}
	var cs []choice
	bundles := 0
	for i, v := range p.vars {
		if v.entry != nil {
			bundles++
		}
		for j := range v.cons {
			c := &v.cons[j]
			if (c.kind == dependency || c.kind == atMost) && len(c.ids) > 1 {
				cs = append(cs, choice{len(c.ids), c.text(p, i)})
			}
		}
	}
	slices.SortStableFunc(cs, func(x, y choice) int {
		if x.n != y.n {
			return cmp.Compare(y.n, x.n)
		}
		return strings.Compare(x.text, y.text)
	})
	a.Error = fmt.Sprintf("undecided within %s: the constraints are too hard to decide: package %s pulls in %d bundles, and %d constraints leave a choice",
		budgetWords(res.r.Budget), res.sub.Package, bundles, len(cs))
	for _, c := range cs[:min(len(cs), maxUndecidedConstraints)] {
		a.Constraints = append(a.Constraints, c.text)
	}
	if len(cs) > maxUndecidedConstraints {
		a.Constraints = append(a.Constraints, fmt.Sprintf("and %d more", len(cs)-maxUndecidedConstraints))
	}
	return a
}

// budgetWords says a budget in seconds: "10 s", "0.5 s".
func budgetWords(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Seconds())
}

// DefaultMaxTerms bounds the size of a question's problem: the candidates
// of the dependencies of the bundles it pulls in, counted as they are
// read. The largest question of the real catalogs (community, certified,
// okderators, percona-everest and the bench catalog, every channel and
// every starting bundle) has 103; the solver's memory grows by about
// 500 bytes for each (1,000 bundles each depending on all the others, a
// million, take 475 MB). Past the limit the answer is undecided at once,
// before the memory is taken. The HTTP routes, which answer many askers
// at once, have a lower one.
const DefaultMaxTerms = 1_000_000

func (r *Resolver) maxTerms() int {
	switch {
	case r.MaxTerms > 0:
		return r.MaxTerms
	case r.MaxTerms < 0:
		return math.MaxInt
	}
	return DefaultMaxTerms
}

// tooLargeError is a question whose problem grew past the limit.
type tooLargeError struct{ terms, limit, visited int }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the problem has more than %d terms (%d)", e.limit, e.terms)
}
