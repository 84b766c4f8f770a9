package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/inter"
	"github.com/go-air/gini/logic"
	"github.com/go-air/gini/z"
)

// The solver: OLM v0's (operator-lifecycle-manager,
// pkg/controller/registry/resolver/solver, v0.46.0) restated on the same
// SAT library, go-air/gini. Variables and constraints become a circuit
// whose constraint outputs are assumed true; a search then guesses the
// variables in the order of preference that dependency constraints list
// them in, backtracking when an assumption makes the formula
// unsatisfiable; the solution found is finally shrunk to the fewest
// variables beyond those guessed. Everything here mirrors OLM's calls to
// gini one for one, so that the same problem gets the same answer.

// kind is the kind of a constraint.
type kind uint8

const (
	mandatory  kind = iota // the variable is in every solution
	prohibited             // the variable is in no solution
	dependency             // the variable needs one of ids (most preferred first)
	conflict               // the variable and ids[0] are never both in
	atMost                 // at most n of ids are in
)

// constraint is a constraint on the variable that holds it. msg is its
// text in OLM's words.
type constraint struct {
	kind kind
	ids  []int
	n    int
	msg  string
	// words, when set, say msg for people (a subscription to a package,
	// channel or bundle the catalog does not have, with a suggestion).
	words string
	// targets are the identifiers of ids, while the problem is built.
	targets []string
	// dep is the bundle dependency a dependency constraint comes from (nil
	// for the subscription's).
	dep *Dependency
	// invariant names what an invariant's atMost is about: "GVK g/v/K",
	// "package p".
	invariant string
}

// variable is a solver variable: a bundle in one channel of one catalog,
// the subscription, or an invariant (one provider of an API, one bundle
// of a package).
type variable struct {
	id    string // OLM's identifier
	entry *Entry // nil but for bundles
	cons  []constraint
}

// problem is the solver's input, variables in order.
type problem struct {
	vars []*variable
}

func (p *problem) add(v *variable) int {
	p.vars = append(p.vars, v)
	return len(p.vars) - 1
}

// link turns every constraint's targets, OLM's identifiers, into indexes
// of p's variables (byID: each identifier's index).
func (p *problem) link(byID map[string]int) {
	for _, v := range p.vars {
		for i := range v.cons {
			c := &v.cons[i]
			c.ids = make([]int, len(c.targets))
			for j, id := range c.targets {
				c.ids[j] = byID[id]
			}
		}
	}
}

// applied is a constraint of a variable.
type applied struct {
	v int
	c *constraint
}

// The results of gini's Test and Solve.
const (
	sat     = 1
	unsat   = -1
	unknown = 0
)

// errInternal is a solution that disappears while it is minimised: a bug.
var errInternal = errors.New("unexpected internal error")

// encoding is the problem as a circuit: one input per variable, and one
// output per constraint, true when the constraint holds.
type encoding struct {
	p       *problem
	c       *logic.C
	lits    []z.Lit           // by variable
	vars    map[z.Lit]int     // lit → variable
	outputs map[z.Lit]applied // constraint output → constraint
	order   []z.Lit           // the outputs, in the order they were made
}

func encode(p *problem) *encoding {
	e := &encoding{p: p, c: logic.NewCCap(len(p.vars)), lits: make([]z.Lit, len(p.vars)),
		vars: make(map[z.Lit]int, len(p.vars)), outputs: map[z.Lit]applied{}}
	for i := range p.vars {
		e.lits[i] = e.c.Lit()
		e.vars[e.lits[i]] = i
	}
	for i, v := range p.vars {
		for j := range v.cons {
			c := &v.cons[j]
			m := e.output(i, c)
			if m == z.LitNull {
				continue
			}
			if _, seen := e.outputs[m]; !seen {
				e.order = append(e.order, m)
			}
			// A later constraint with the same output (an identical one)
			// takes its place, as in OLM's map.
			e.outputs[m] = applied{i, c}
		}
	}
	return e
}

// output builds the circuit of constraint c of variable v.
func (e *encoding) output(v int, c *constraint) z.Lit {
	self := e.lits[v]
	switch c.kind {
	case mandatory:
		return self
	case prohibited:
		return self.Not()
	case dependency:
		m := self.Not()
		for _, id := range c.ids {
			m = e.c.Or(m, e.lits[id])
		}
		return m
	case conflict:
		return e.c.Or(self.Not(), e.lits[c.ids[0]].Not())
	case atMost:
		ms := make([]z.Lit, len(c.ids))
		for i, id := range c.ids {
			ms[i] = e.lits[id]
		}
		return e.c.CardSort(ms).Leq(c.n)
	}
	return z.LitNull
}

// anchors are the variables with a mandatory constraint, in order.
func (e *encoding) anchors() []z.Lit {
	var out []z.Lit
	for i, v := range e.p.vars {
		if slices.ContainsFunc(v.cons, func(c constraint) bool { return c.kind == mandatory }) {
			out = append(out, e.lits[i])
		}
	}
	return out
}

func (e *encoding) assumeConstraints(g inter.Assumable) {
	g.Assume(e.order...)
}

// solution is what solve found: the variables of the solution, or the
// constraints that cannot hold together.
type solution struct {
	unsat    bool
	selected []int
	// core are the constraints gini blames, as OLM reports them
	// (NotSatisfiable), sorted by text.
	core []applied
}

// solve runs OLM's solver on p. It stops with ctx's error when ctx is
// done first: OLM's own solver has no bound (it is given context.TODO()),
// ours stops at the question's budget or when the asker goes away.
func solve(x *eval, p *problem) (*solution, error) {
	e := encode(p)
	g := gini.New()
	e.c.ToCnf(g)
	assumptions := e.anchors()
	e.assumeConstraints(g)
	g.Assume(assumptions...)
	outcome, _ := g.Test(nil)
	var guessed map[z.Lit]bool
	if outcome != sat && outcome != unsat {
		s := &search{ctx: x.ctx, x: x, g: g, e: e}
		outcome, assumptions, guessed = s.run(assumptions)
		if s.err != nil {
			return nil, s.err
		}
	}
	switch outcome {
	case sat:
		// Shrink the solution: keep what the search guessed and what was
		// false, and allow as few of the other true variables as can be.
		var extras, excluded []z.Lit
		for _, m := range e.lits {
			if guessed[m] {
				continue
			}
			if !g.Value(m) {
				excluded = append(excluded, m.Not())
				continue
			}
			extras = append(extras, m)
		}
		g.Untest()
		cs := e.cardinality(g, extras)
		g.Assume(assumptions...)
		g.Assume(excluded...)
		e.assumeConstraints(g)
		g.Test(nil)
		for w := 0; w <= cs.N(); w++ {
			g.Assume(cs.Leq(w))
			r, err := solveBy(x, g)
			if err != nil {
				return nil, err
			}
			if r == sat {
				var sel []int
				for i, m := range e.lits {
					if g.Value(m) {
						sel = append(sel, i)
					}
				}
				return &solution{selected: sel}, nil
			}
		}
		return nil, errInternal
	case unsat:
		return &solution{unsat: true, core: e.blame(g)}, nil
	}
	return nil, errors.New("the solver stopped before it found an answer")
}

// cardinality adds a sorting network over ms to g, with the clauses of
// every bound.
func (e *encoding) cardinality(g inter.Adder, ms []z.Lit) *logic.CardSort {
	n := e.c.Len()
	cs := e.c.CardSort(ms)
	marks := make([]int8, n, e.c.Len())
	for i := range marks {
		marks[i] = 1
	}
	for w := 0; w <= cs.N(); w++ {
		marks, _ = e.c.CnfSince(g, marks, cs.Leq(w))
	}
	return cs
}

// blame returns the constraints among the failed assumptions of g's last
// test or solve, sorted by text as OLM sorts them.
func (e *encoding) blame(g inter.Assumable) []applied {
	var out []applied
	for _, m := range g.Why(nil) {
		if a, ok := e.outputs[m]; ok {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b applied) int { return cmp.Compare(e.text(a), e.text(b)) })
	return out
}

// text is a constraint in OLM's words.
func (e *encoding) text(a applied) string { return a.c.text(e.p, a.v) }

// text is the constraint of variable v in OLM's words: its message, or
// the solver's own wording when it has none.
func (c *constraint) text(p *problem, v int) string {
	if c.msg != "" {
		return c.msg
	}
	subject := p.vars[v].id
	ids := func() string {
		s := make([]string, len(c.ids))
		for i, id := range c.ids {
			s[i] = p.vars[id].id
		}
		return strings.Join(s, ", ")
	}
	switch c.kind {
	case mandatory:
		return subject + " is mandatory"
	case prohibited:
		return subject + " is prohibited"
	case dependency:
		if len(c.ids) == 0 {
			return subject + " has a dependency without any candidates to satisfy it"
		}
		return subject + " requires at least one of " + ids()
	case conflict:
		return subject + " conflicts with " + ids()
	case atMost:
		return fmt.Sprintf("%s permits at most %d of %s", subject, c.n, ids())
	}
	return ""
}

// minimalCore shrinks the constraints of an unsatisfiable problem to a
// minimal set that cannot hold together: leaving out any one of them
// makes the rest satisfiable. It starts from the constraints gini blames
// when every constraint is assumed, and drops each one whose absence
// leaves the rest unsatisfiable. It returns nil when the constraints
// together are satisfiable (the search found no solution among its
// preferences, which OLM reports too).
func minimalCore(x *eval, p *problem) ([]applied, error) {
	e := encode(p)
	g := gini.New()
	e.c.ToCnf(g)
	all := slices.Clone(e.order)
	g.Assume(all...)
	if r, err := solveBy(x, g); r != unsat || err != nil {
		return nil, err
	}
	var core []z.Lit
	for _, m := range g.Why(nil) {
		if _, ok := e.outputs[m]; ok {
			core = append(core, m)
		}
	}
	slices.Sort(core)
	core = slices.Compact(core)
	for i := 0; i < len(core); {
		rest := slices.Concat(core[:i], core[i+1:])
		g.Assume(rest...)
		r, err := solveBy(x, g)
		if err != nil {
			return nil, err
		}
		if r == unsat {
			core = rest
			continue
		}
		i++
	}
	out := make([]applied, len(core))
	for i, m := range core {
		out[i] = e.outputs[m]
	}
	slices.SortStableFunc(out, func(a, b applied) int { return cmp.Compare(e.text(a), e.text(b)) })
	return out, nil
}

// testHookSearch runs at each step of the search (tests), with the
// question's context and the function that spends its budget.
var testHookSearch func(ctx context.Context, expire func())

// solveBy is g.Solve(), stopped when the question must stop (its budget
// spent, its asker gone): then it returns the question's error, and g
// must not be used again. gini's own Try takes a duration and cannot be
// stopped from outside; so the solve runs in gini's goroutine (GoSolve,
// the same Solve), and is asked for its result, yielding the processor in
// between, until it answers or the question's context is done, when it is
// stopped (gini checks for a stop every 20,000 propagations). Most of
// OLM's solves take microseconds: they end while the caller yields; a
// longer one is asked again at growing intervals, up to a millisecond.
func solveBy(x *eval, g *gini.Gini) (int, error) {
	if x.stop() {
		return unknown, x.err
	}
	done := x.ctx.Done()
	if done == nil {
		return g.Solve(), nil
	}
	sv := g.GoSolve()
	var timer *time.Timer
	for i := 0; ; i++ {
		if r, ok := sv.Test(); ok {
			if timer != nil {
				timer.Stop()
			}
			return r, nil
		}
		if i < spinYields {
			select {
			case <-done:
				sv.Stop()
				x.stop()
				return unknown, x.err
			default:
				runtime.Gosched()
				continue
			}
		}
		wait := min(time.Microsecond<<min(i-spinYields, 10), time.Millisecond)
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-done:
			timer.Stop()
			sv.Stop()
			x.stop()
			return unknown, x.err
		case <-timer.C:
		}
	}
}

// spinYields is how many times solveBy yields before it sleeps.
const spinYields = 64

// search guesses variables in preference order: the anchors first, then,
// breadth first, the candidates of each dependency of every variable
// guessed, most preferred first, backtracking on a dead end.
type search struct {
	ctx     context.Context
	x       *eval // the question: its budget
	err     error // ctx's error, once the search stopped for it
	g       *gini.Gini
	e       *encoding
	assumed map[z.Lit]bool
	guesses []guess
	choices []choice // to be made, front first
	result  int
}

// choice is a dependency still to be satisfied: its candidates, and the
// next one to try.
type choice struct {
	next       int
	candidates []z.Lit
}

// guess is a choice made: m is the candidate assumed, or z.LitNull when the
// choice needed no new assumption (a candidate was already assumed) or had
// no candidate left.
type guess struct {
	m          z.Lit
	index      int
	children   int // the choices this guess added
	candidates []z.Lit
}

func (s *search) push() {
	c := s.choices[0]
	s.choices = s.choices[1:]
	gs := guess{m: z.LitNull, index: c.next, candidates: c.candidates}
	if gs.index < len(gs.candidates) {
		gs.m = gs.candidates[gs.index]
	}
	for _, m := range gs.candidates {
		if s.assumed[m] {
			gs.m = z.LitNull
			break
		}
	}
	s.guesses = append(s.guesses, gs)
	if gs.m == z.LitNull {
		return
	}
	v := s.e.p.vars[s.e.vars[gs.m]]
	for _, c := range v.cons {
		if c.kind != dependency || len(c.ids) == 0 {
			continue
		}
		ms := make([]z.Lit, len(c.ids))
		for i, id := range c.ids {
			ms[i] = s.e.lits[id]
		}
		s.guesses[len(s.guesses)-1].children++
		s.choices = append(s.choices, choice{candidates: ms})
	}
	if s.assumed == nil {
		s.assumed = map[z.Lit]bool{}
	}
	s.assumed[gs.m] = true
	s.g.Assume(gs.m)
	s.result, _ = s.g.Test(nil)
}

func (s *search) pop() {
	gs := s.guesses[len(s.guesses)-1]
	s.guesses = s.guesses[:len(s.guesses)-1]
	if gs.m != z.LitNull {
		delete(s.assumed, gs.m)
		s.result = s.g.Untest()
	}
	s.choices = s.choices[:len(s.choices)-gs.children]
	c := choice{next: gs.index, candidates: gs.candidates}
	if gs.m != z.LitNull {
		c.next++
	}
	s.choices = slices.Insert(s.choices, 0, c)
}

// run searches from the anchors. It returns the outcome, the literals
// guessed and their set.
func (s *search) run(anchors []z.Lit) (int, []z.Lit, map[z.Lit]bool) {
	for _, m := range anchors {
		s.choices = append(s.choices, choice{candidates: []z.Lit{m}})
	}
	for {
		// OLM's search can take exponential time (a pigeonhole of
		// conflicting providers); ours stops when ctx is done.
		if testHookSearch != nil {
			testHookSearch(s.ctx, s.x.expire)
		}
		if s.x.stop() {
			s.err = s.x.err
			return unknown, nil, nil
		}
		if len(s.choices) == 0 && s.result == unknown {
			var err error
			if s.result, err = solveBy(s.x, s.g); err != nil {
				s.err = err
				return unknown, nil, nil
			}
		}
		if s.result == unsat {
			if len(s.guesses) == 0 {
				break
			}
			s.pop()
			continue
		}
		if len(s.choices) == 0 {
			break
		}
		s.push()
	}
	var lits []z.Lit
	set := map[z.Lit]bool{}
	for _, gs := range s.guesses {
		if gs.m != z.LitNull {
			lits = append(lits, gs.m)
			set[gs.m] = true
		}
	}
	result := s.result
	for len(s.guesses) > 0 {
		s.pop()
	}
	return result, lits, set
}

// notSatisfiable is OLM's message for an unsatisfiable problem.
func notSatisfiable(p *problem, core []applied) string {
	const msg = "constraints not satisfiable"
	if len(core) == 0 {
		return msg
	}
	s := make([]string, len(core))
	for i, a := range core {
		s[i] = a.c.text(p, a.v)
	}
	return fmt.Sprintf("%s: %s", msg, strings.Join(s, ", "))
}
