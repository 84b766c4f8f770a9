package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/fastopm/fastopm/internal/shapecat"
)

// Questions whose answer OLM searches for without bound end within their
// budget, undecided, naming what made them hard; the budget and the
// asker's context reach every loop that can take long. Nothing here
// depends on the machine's speed: the tests spend the budget or cancel
// from inside the search, at a point the question is known to reach.

// hostile loads a hostile shape of internal/shapecat.
func hostile(t *testing.T, name string, n int) *Catalog {
	t.Helper()
	s, ok := shapecat.LookupAny(name)
	if !ok {
		t.Fatalf("no shape %s", name)
	}
	cat, _, err := Load(context.Background(), s.FS(n), "hostile", 0)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// onSearch sets testHookSearch for the test.
func onSearch(t *testing.T, f func(ctx context.Context, expire func())) {
	t.Helper()
	testHookSearch = f
	t.Cleanup(func() { testHookSearch = nil })
}

// TestBudgetSpentInSearch: a pigeonhole (OLM's search backtracks through
// every assignment of the holes) whose budget is spent once the search
// runs is answered undecided, naming the package, the size of the problem
// and the constraints that leave the most choices.
func TestBudgetSpentInSearch(t *testing.T) {
	r, err := NewResolver(hostile(t, "pigeonhole", 6))
	if err != nil {
		t.Fatal(err)
	}
	r.Budget = time.Hour // spent by the hook, not by the clock
	steps := 0
	onSearch(t, func(_ context.Context, expire func()) {
		if steps++; steps == 3 {
			expire()
		}
	})
	a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != Undecided {
		t.Fatalf("status %s, want undecided: %+v", a.Status, a)
	}
	for _, want := range []string{"undecided within 3600 s: the constraints are too hard to decide", "package shape pulls in 43 bundles", "constraints leave a choice"} {
		if !strings.Contains(a.Error, want) {
			t.Errorf("error %q does not say %q", a.Error, want)
		}
	}
	if len(a.Constraints) != maxUndecidedConstraints+1 || !strings.HasSuffix(a.Constraints[0], "provide H0 (hole.example.com/v1)") ||
		!strings.HasPrefix(a.Constraints[maxUndecidedConstraints], "and ") {
		t.Errorf("constraints: %q", a.Constraints)
	}
	var b strings.Builder
	if err := a.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "is undecided: undecided within") || !strings.Contains(b.String(), "The constraints with the most choices:") {
		t.Errorf("text:\n%s", b.String())
	}
	if a.Why() != a.Error {
		t.Errorf("Why %q, want the error", a.Why())
	}
}

// TestCancelledInSearch: the asker going away stops the search, and the
// answer is the context's error, not an undecided answer.
func TestCancelledInSearch(t *testing.T) {
	r, err := NewResolver(hostile(t, "pigeonhole", 6))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onSearch(t, func(context.Context, func()) { cancel() })
	if a, err := r.Resolve(ctx, Subscription{Package: shapecat.Package}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want context.Canceled", a, err)
	}
	// The resolver learnt nothing wrong from the stopped question: the
	// same question, unhurried, is OLM's answer.
	testHookSearch = nil
	a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil || a.Status != Unsatisfiable {
		t.Fatalf("got %+v, %v; want unsatisfiable", a, err)
	}
}

// TestBudgetBeforeTheProblem: a budget spent while the dependencies are
// read says so.
func TestBudgetBeforeTheProblem(t *testing.T) {
	r, err := NewResolver(hostile(t, "pigeonhole", 3))
	if err != nil {
		t.Fatal(err)
	}
	r.Budget = time.Nanosecond
	a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != Undecided || !strings.Contains(a.Error, "undecided within 1e-09 s") {
		t.Fatalf("got %s: %s", a.Status, a.Error)
	}
}

// TestHardQuestionDoesNotBlockOthers: while one question is in its search
// (held there by the test), another is answered on the same resolver. A
// resolver that held one lock for a whole question (as it did) answers the
// second only after the first.
func TestHardQuestionDoesNotBlockOthers(t *testing.T) {
	hard := hostile(t, "pigeonhole", 6)
	r, err := NewResolver(hard)
	if err != nil {
		t.Fatal(err)
	}
	inSearch, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	onSearch(t, func(ctx context.Context, _ func()) {
		if ctx.Value(hardKey{}) == nil {
			return
		}
		once.Do(func() { close(inSearch) })
		<-release
	})
	done := make(chan error, 1)
	go func() {
		_, err := r.Resolve(context.WithValue(context.Background(), hardKey{}, true), Subscription{Package: shapecat.Package})
		done <- err
	}()
	<-inSearch
	// An easy question on the same resolver: a provider package alone.
	easy := make(chan *Answer, 1)
	go func() {
		a, err := r.Resolve(context.Background(), Subscription{Package: "pig-0"})
		if err != nil {
			a = &Answer{Error: err.Error()}
		}
		easy <- a
	}()
	select {
	case a := <-easy:
		if a.Status != Installable {
			t.Fatalf("easy question: %+v", a)
		}
	case <-time.After(2 * time.Minute): // a hang guard: the hard question waits for the test
		close(release)
		t.Fatal("the easy question waited for the hard one")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type hardKey struct{}

// TestConcurrentQuestions: many questions at once on one resolver give the
// answers they give one at a time (run with -race).
func TestConcurrentQuestions(t *testing.T) {
	r, err := NewResolver(hostile(t, "pigeonhole", 4))
	if err != nil {
		t.Fatal(err)
	}
	subs := []Subscription{{Package: shapecat.Package}}
	for i := 0; i <= 4; i++ {
		subs = append(subs, Subscription{Package: fmt.Sprintf("pig-%d", i)})
	}
	want := map[string]Status{}
	seq, _ := NewResolver(r.catalogs...)
	for _, s := range subs {
		a, err := seq.Resolve(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		want[s.Package] = a.Status
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(subs))
	for range 4 {
		for _, s := range subs {
			wg.Go(func() {
				a, err := r.Resolve(context.Background(), s)
				if err == nil && a.Status != want[s.Package] {
					err = fmt.Errorf("%s: %s, alone %s", s.Package, a.Status, want[s.Package])
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCELCostLimit: a rule that iterates the properties three times over
// stops at the cost limit on its first candidate: the question is
// undecided, naming the rule and the bundle. The same rule over fewer
// properties is evaluated as OLM does. (A lower limit than CELCostLimit
// keeps the race suite fast; the corpus run has the real one on the
// hostile shape's 100 properties: TestHostileCELCorpus.)
func TestCELCostLimit(t *testing.T) {
	r, err := NewResolver(hostile(t, "cel-nested", 30))
	if err != nil {
		t.Fatal(err)
	}
	r.compiler.costLimit = 10_000
	a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != Undecided || !strings.Contains(a.Error, "costs more than the limit of 10000") ||
		!strings.Contains(a.Error, "properties.all(a, properties.all(b") || !strings.Contains(a.Error, "on bundle cel-0.v1.0.0") {
		t.Fatalf("got %s: %s", a.Status, a.Error)
	}
	small, err := NewResolver(hostile(t, "cel-nested", 10))
	if err != nil {
		t.Fatal(err)
	}
	small.compiler.costLimit = 10_000
	a, err = small.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil || a.Status != Installable {
		t.Fatalf("10 properties: %+v, %v", a, err)
	}
}

// TestSolveStops: gini's own solve, on a problem it takes exponential time
// over (a pigeonhole of 14 into 13), stops at the question's deadline.
func TestSolveStops(t *testing.T) {
	g := gini.New()
	const holes = 13
	var in [holes + 1][holes]z.Lit // pigeon i in hole j
	for i := range in {
		for j := range in[i] {
			in[i][j] = g.Lit()
		}
	}
	for i := range in { // each pigeon in a hole
		for j := range in[i] {
			g.Add(in[i][j])
		}
		g.Add(z.LitNull)
	}
	for j := range holes { // no two in one
		for i := range in {
			for k := i + 1; k < len(in); k++ {
				g.Add(in[i][j].Not())
				g.Add(in[k][j].Not())
				g.Add(z.LitNull)
			}
		}
	}
	x, end := newEval(context.Background(), time.Millisecond)
	defer end()
	ctx := x.ctx
	type result struct {
		r   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := solveBy(x, g)
		done <- result{r, err}
	}()
	select {
	case res := <-done:
		if !errors.Is(res.err, context.Canceled) || !errors.Is(context.Cause(ctx), errBudget) {
			t.Fatalf("solveBy: %d, %v (cause %v); want the budget spent", res.r, res.err, context.Cause(ctx))
		}
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("the solve did not stop")
	}
}

// TestTooLarge: a question whose problem grows past MaxTerms is undecided
// as soon as it does, before the solver takes the memory; within the
// limit, or without one, it is OLM's answer.
func TestTooLarge(t *testing.T) {
	cat := hostile(t, "self-deps", 30) // 30 bundles, each a candidate of every other's dependency: 900 terms
	r, err := NewResolver(cat)
	if err != nil {
		t.Fatal(err)
	}
	r.MaxTerms = 100
	a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != Undecided || !strings.Contains(a.Error, "the problem is too large to decide: package shape pulls in 4 bundles whose dependencies have more than 100 candidates") {
		t.Fatalf("got %s: %s", a.Status, a.Error)
	}
	for _, limit := range []int{900, -1} {
		r, _ := NewResolver(cat)
		r.MaxTerms = limit
		if a, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package}); err != nil || a.Status != Installable {
			t.Fatalf("limit %d: %+v, %v", limit, a, err)
		}
	}
}

// TestReportTrims: a report over a chain of dependencies lists at most
// MaxReportInstalls bundles of each answer, so that it grows with the
// questions (n), not with n²; the question alone keeps its whole answer.
func TestReportTrims(t *testing.T) {
	r, err := NewResolver(hostile(t, "dep-chain", 100))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.All(context.Background(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	byPkg := map[string]*Answer{}
	for _, a := range rep.Answers {
		byPkg[a.Subscription.Package] = a
	}
	top, mid := byPkg[shapecat.Package], byPkg["dep-50"]
	if top == nil || len(top.Installs) != MaxReportInstalls || top.InstallsOmitted != 101-MaxReportInstalls || top.Tree != nil || top.Continuations != nil {
		t.Fatalf("top answer: %d installs, %d omitted, tree %v", len(top.Installs), top.InstallsOmitted, top.Tree != nil)
	}
	if mid == nil || len(mid.Installs) != 51 || mid.InstallsOmitted != 0 || mid.Tree == nil {
		t.Fatalf("dep-50: %+v", mid)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), fmt.Sprintf(" and %d more", 101-MaxReportInstalls)) {
		t.Errorf("the table does not say how many are left out:\n%.2000s", b.String())
	}
	alone, err := r.Resolve(context.Background(), Subscription{Package: shapecat.Package})
	if err != nil || len(alone.Installs) != 101 || alone.Tree == nil {
		t.Fatalf("alone: %v", err)
	}
}
