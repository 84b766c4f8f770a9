package schema

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/cel-go/common"
	celparser "github.com/google/cel-go/parser"

	"github.com/fastopm/fastopm/internal/testutil"
)

// olmCase is an olm.constraint value and what OLM v0.46 does with it.
type olmCase struct {
	name  string
	value string
	// refused is whether OLM refuses the value (for any reason), as
	// operator-framework/api v0.45.0's constraints.Parse and cel-go
	// v0.29.2 said when given the value (see olmCases); want is the
	// finding's path and the end of its words, "" for none: validate
	// reports OLM's limits, not what the schema reports.
	refused bool
	want    string
}

func celValue(rule string) string { return `{"cel":{"rule":"` + rule + `"}}` }

// olmCases were checked against OLM's own code: a program calling
// constraints.Parse and, for each rule OLM converts, NewCelEnvironment's
// Validate (operator-framework/api v0.45.0, cel-go v0.29.2, OLM v0.46's
// versions) printed "refused" for exactly the cases marked refused.
var olmCases = []olmCase{
	{name: "gvk", value: goodGVK},
	{name: "none", value: `{"none":{"constraints":[` + goodGVK + `]}}`, refused: true,
		want: "properties[0].value.none | is OLM's old name of not; OLM refuses it: operator-framework/api reads not since v0.14.0, and refuses the olm.constraint value with a field it does not know"},
	{name: "none nested", value: `{"all":{"constraints":[` + goodGVK + `,{"any":{"constraints":[{"none":{"constraints":[]}}]}}]}}`, refused: true,
		want: "properties[0].value.all.constraints[1].any.constraints[0].none | is OLM's old name of not; OLM refuses it: operator-framework/api reads not since v0.14.0, and refuses the olm.constraint value with a field it does not know"},
	{name: "largest", value: `{"failureMessage":"` + strings.Repeat("x", maxConstraintSize-len(`{"failureMessage":"",`+goodGVK[1:])) + `",` + goodGVK[1:]},
	{name: "too large", value: `{"failureMessage":"` + strings.Repeat("x", maxConstraintSize+1-len(`{"failureMessage":"",`+goodGVK[1:])) + `",` + goodGVK[1:], refused: true,
		want: "properties[0].value | is an olm.constraint value of 131073 bytes; OLM refuses it: it reads olm.constraint values of at most 131072 bytes (operator-framework/api's constraints.Parse)"},
	{name: "cel", value: celValue(`properties.exists(p, p.type == 'certified')`)},
	{name: "cel parens 249", value: celValue(strings.Repeat("(", 249) + "true" + strings.Repeat(")", 249))},
	{name: "cel parens 250", value: celValue(strings.Repeat("(", 250) + "true" + strings.Repeat(")", 250)), refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule nested more than 250 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "cel lists 251", value: celValue(strings.Repeat("[", 251) + strings.Repeat("]", 251) + " == []"), refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule nesting brackets 251 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "cel sum 249", value: celValue(strings.Repeat("1+", 249) + "1 > 0")},
	{name: "cel sum 300", value: celValue(strings.Repeat("1+", 300) + "1 > 0"), refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule nested more than 250 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "cel selects 300", value: celValue("a" + strings.Repeat(".b", 300) + " == 1"), refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule nested more than 250 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "cel ternaries 300", value: celValue(strings.Repeat("a ? b : ", 300) + "c"), refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule nested more than 250 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "cel long and shallow", value: celValue(strings.Repeat("properties.exists(p, p.type == 'x') || ", 2000) + "true")},
	{name: "cel brackets in strings", value: celValue(`'` + strings.Repeat("(", 300) + `' == r'\\' || b'[[' != b'' || '''` + strings.Repeat("[", 300) + `''' == ''`)},
	{name: "cel 100000 characters", value: celValue(`'` + strings.Repeat("x", 100000-9) + `' == 'y'`)},
	{name: "cel 100001 characters", value: celValue(`'` + strings.Repeat("x", 100001-9) + `' == 'y'`), refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule of 100001 characters; OLM refuses it: its CEL parser (cel-go) reads rules of at most 100000 characters"},
	{name: "cel 100001 multibyte", value: celValue(`'` + strings.Repeat("é", 100001-9) + `' == 'y'`), refused: true,
		want: "properties[0].value | is an olm.constraint value of 200012 bytes; OLM refuses it: it reads olm.constraint values of at most 131072 bytes (operator-framework/api's constraints.Parse)"},
	// OLM converts a constraint's first kind of gvk, package, all, any,
	// not, cel: this rule is never compiled (the schema reports the two
	// kinds).
	{name: "cel after gvk", value: `{"gvk":{"group":"g","version":"v1","kind":"K"},"cel":{"rule":"` + strings.Repeat("(", 300) + "true" + strings.Repeat(")", 300) + `"}}`},
	{name: "cel nested", value: `{"any":{"constraints":[` + goodGVK + `,{"not":{"constraints":[` + celValue(strings.Repeat("1+", 300)+"1 > 0") + `]}}]}}`, refused: true,
		want: "properties[0].value.any.constraints[1].not.constraints[0].cel.rule | is a CEL rule nested more than 250 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "cel under all, beside any", value: `{"all":{"constraints":[` + celValue("true") + `]},"any":{"constraints":[` + celValue(strings.Repeat("(", 300)+"true"+strings.Repeat(")", 300)) + `]}}`},
	// encoding/json matches field names case-insensitively.
	{name: "Cel", value: `{"Cel":{"rule":"` + strings.Repeat("(", 300) + "true" + strings.Repeat(")", 300) + `"}}`, refused: true,
		want: "properties[0].value.cel.rule | is a CEL rule nesting brackets 300 deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most 250 deep"},
	{name: "deepest", value: strings.Replace(nestConstraint(celValue("true"), maxNesting), `"none"`, `"not"`, -1)},
	{name: "deepest none", value: nestConstraint(celValue("true"), maxNesting), refused: true,
		want: "properties[0].value.not.constraints[0].any.constraints[0].all.constraints[0].none | is OLM's old name of not; OLM refuses it: operator-framework/api reads not since v0.14.0, and refuses the olm.constraint value with a field it does not know"},
}

// TestOLMRefusals: OLMRefusals reports each olm.constraint OLM refuses
// for its limits (and none, the one field OLM does not know that the
// schema accepts), at its path, and nothing for the others; every other
// reason OLM has to refuse a value is a schema finding.
func TestOLMRefusals(t *testing.T) {
	c := sharedChecker(t)
	for _, tc := range olmCases {
		value, _, err := canonical([]byte(tc.value))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		blob := []byte(`{"image":"i","name":"p.v1","package":"p","properties":[{"type":"olm.constraint","value":` + string(value) + `}],"schema":"olm.bundle"}`)
		var got []string
		for _, f := range c.OLMRefusals(blob) {
			if formatSteps(f.Steps) != f.Path {
				t.Errorf("%s: steps %v do not spell %q", tc.name, f.Steps, f.Path)
			}
			words, ok := strings.CutPrefix(f.Words, f.Path)
			if !ok {
				t.Errorf("%s: words do not start with the path: %s", tc.name, f.Words)
			}
			got = append(got, f.Path+" |"+words)
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
		schemaFinds := c.Check("olm.bundle", blob) != nil
		if tc.refused && !schemaFinds && tc.want == "" {
			t.Errorf("%s: OLM refuses the value, and validate says nothing", tc.name)
		}
	}
	// Only olm.constraint properties, where they are.
	blob := []byte(`{"image":"i","name":"p.v1","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"example.com/x","value":{"none":1}},{"type":"olm.constraint","value":{"none":{"constraints":[]}}}],"schema":"olm.bundle"}`)
	if fs := c.OLMRefusals(blob); len(fs) != 1 || fs[0].Path != "properties[2].value.none" {
		t.Errorf("refusals: %v", fs)
	}
}

// celGen writes random CEL text: every construct of the grammar, nested
// at random, and long chains of one operator, with strings and comments
// that hold brackets and quotes.
type celGen struct {
	rng    *rand.Rand
	budget int
}

var (
	celRelOps  = []string{"==", "!=", "<", "<=", ">", ">=", "in"}
	celCalcOps = []string{"+", "-", "*", "/", "%"}
	celAtoms   = []string{"a", "properties", "1", "1.5e-3", "0x1F", "2u", "true", "null", `'s'`, `"("`, `'\''`, `r'\'`, `b'[['`, `'''a'b'''`, `"""x"y"""`, `R"]"`, `.a`}
)

func (g *celGen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func (g *celGen) expr(d int) string {
	if d <= 0 || g.budget <= 0 {
		return g.pick(celAtoms)
	}
	g.budget--
	switch g.rng.IntN(16) {
	case 0:
		return g.expr(d-1) + " ? " + g.expr(d-1) + " : " + g.expr(d-1)
	case 1:
		return g.expr(d-1) + " || " + g.expr(d-1)
	case 2:
		return g.expr(d-1) + " && " + g.expr(d-1)
	case 3:
		return g.expr(d-1) + " " + g.pick(celRelOps) + " " + g.expr(d-1)
	case 4:
		return g.expr(d-1) + g.pick(celCalcOps) + g.expr(d-1)
	case 5:
		return "!" + g.expr(d-1)
	case 6:
		return "-" + g.expr(d-1)
	case 7:
		return "(" + g.expr(d-1) + ")"
	case 8:
		return g.expr(d-1) + ".f"
	case 9:
		return g.expr(d-1) + ".exists(x, " + g.expr(d-1) + ")"
	case 10:
		return g.expr(d-1) + "[" + g.expr(d-1) + "]"
	case 11:
		return "[" + g.expr(d-1) + ", " + g.expr(d-1) + "]"
	case 12:
		return "{" + g.expr(d-1) + ": " + g.expr(d-1) + "}"
	case 13:
		return "f(" + g.expr(d-1) + ") // ((( '\n"
	case 14:
		// A long chain of one operator, or of brackets.
		n := g.rng.IntN(300)
		switch g.rng.IntN(4) {
		case 0:
			return strings.Repeat("a"+g.pick(celCalcOps), n) + "a"
		case 1:
			return "a" + strings.Repeat(".b", n)
		case 2:
			return strings.Repeat("a ? b : ", n) + "c"
		default:
			return strings.Repeat("[", n) + g.expr(d-1) + strings.Repeat("]", n)
		}
	}
	return g.expr(d-1) + " " + g.pick(celRelOps) + " " + g.expr(d-1) + " || " + g.expr(d-1)
}

// celDepth is how deep cel-go's parser nests reading rule, by its own
// counters: the least limit it reads rule within (up to 4000); ok is false
// when rule has other errors.
func celDepth(t *testing.T, rule string) (depth int, ok bool) {
	t.Helper()
	parse := func(limit int) (recursion, other bool) {
		p, err := celparser.NewParser(celparser.Macros(celparser.AllMacros...), celparser.MaxExpressionNodeCount(-1), celparser.MaxRecursionDepth(limit))
		if err != nil {
			t.Fatal(err)
		}
		_, iss := p.Parse(common.NewTextSource(rule))
		if iss == nil {
			return false, false
		}
		for _, e := range iss.GetErrors() {
			if strings.Contains(e.Message, "recursion") {
				recursion = true
			} else {
				other = true
			}
		}
		return recursion, other
	}
	lo, hi := 1, 4000
	if rec, other := parse(hi); rec || other {
		return 0, false
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if rec, _ := parse(mid); rec {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, true
}

// TestCELDepthBounds: on random rules, celDepthBounds' bounds hold the
// depth cel-go's parser nests to (40 rules in the race suite, 1500 in
// the corpus run), so that OLMRefusals parses a rule only when its bounds
// straddle the limit.
func TestCELDepthBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 250))
	n := 40
	if testutil.Corpus {
		n = 1500
	}
	valid, deep := 0, 0
	for i := range n {
		g := &celGen{rng: rng, budget: 60}
		rule := g.expr(rng.IntN(8) + 1)
		depth, ok := celDepth(t, rule)
		if !ok {
			continue
		}
		valid++
		if depth > maxCELDepth {
			deep++
		}
		low, high := celDepthBounds(rule)
		if low > depth || high < depth {
			t.Errorf("rule %d: bounds %d..%d, parser nests %d: %.300s", i, low, high, depth, rule)
		}
	}
	t.Logf("%d rules, %d parse, %d nest deeper than %d", n, valid, deep, maxCELDepth)
	if valid < n/3 || deep == 0 {
		t.Errorf("the rules should be mostly valid, some too deep")
	}
}

// TestOLMRefusalsDeep: a value nested as deep as a catalog can nest it is
// read in memory linear in its size (paths were copied at each level:
// half a gigabyte at 3331 levels), and its refusals found at the bottom.
func TestOLMRefusalsDeep(t *testing.T) {
	c := sharedChecker(t)
	deep := strings.Replace(nestConstraint(celValue(strings.Repeat("1+", 300)+"1 > 0"), maxNesting), `"none"`, `"not"`, -1)
	blob := []byte(`{"image":"i","name":"p.v1","package":"p","properties":[{"type":"olm.constraint","value":` + deep + `}],"schema":"olm.bundle"}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fs := c.OLMRefusals(blob)
	runtime.ReadMemStats(&after)
	if len(fs) != 1 || !strings.HasSuffix(fs[0].Path, ".cel.rule") || strings.Count(fs[0].Path, ".constraints[0]") != maxNesting {
		t.Errorf("refusals: %.300v", fs)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100*uint64(len(blob)) {
		t.Errorf("reading a %d-byte value allocated %d bytes", len(blob), alloc)
	}
}
