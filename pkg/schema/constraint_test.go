package schema

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// nestedOps are the compound kinds nestConstraint nests, in turn.
var nestedOps = []string{"all", "any", "not", "none"}

// nestConstraint returns leaf nested n deep: in all, any, not and none in
// turn, from the inside out, each holding the one below in its
// constraints.
func nestConstraint(leaf string, n int) string {
	var b strings.Builder
	for i := n - 1; i >= 0; i-- {
		b.WriteString(`{"` + nestedOps[i%len(nestedOps)] + `":{"constraints":[`)
	}
	b.WriteString(leaf)
	b.WriteString(strings.Repeat("]}}", n))
	return b.String()
}

// nestedPath is the path, below prefix, of the leaf nestConstraint nests
// n deep.
func nestedPath(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := n - 1; i >= 0; i-- {
		fmt.Fprintf(&b, ".%s.constraints[0]", nestedOps[i%len(nestedOps)])
	}
	return b.String()
}

// constraintBundle is a bundle whose properties are an olm.package and
// the olm.constraint values, in order (from properties[1]).
func constraintBundle(values ...string) string {
	b := `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}`
	for _, v := range values {
		b += `,{"type":"olm.constraint","value":` + v + `}`
	}
	return b + `]}`
}

const (
	goodGVK = `{"gvk":{"group":"g","version":"v1","kind":"K"}}`
	// badGVK is a constraint whose gvk has a number for a group.
	badGVK = `{"gvk":{"group":1,"version":"v1","kind":"K"}}`
)

func init() {
	leaf500 := nestedPath("properties[1].value", 500)
	leaf3 := nestedPath("properties[1].value", 3)
	leaf2 := nestedPath("properties[2].value", 2)
	checkCases = append(checkCases,
		checkCase{name: "constraint nested valid", schema: "olm.bundle",
			blob: constraintBundle(
				`{"failureMessage":"needs blue or green","any":{"constraints":[
					{"all":{"constraints":[{"package":{"packageName":"blue","versionRange":">=1.0.0"}},`+goodGVK+`]}},
					{"not":{"constraints":[{"failureMessage":"no","cel":{"rule":"properties.exists(p, p.type == 'x')"}}]}},
					{"none":{"constraints":[]}},
					`+nestConstraint(goodGVK, 6)+`]}}`,
				nestConstraint(goodGVK, 40)),
			deep: true},
		// The problem is reported at the constraint that has it, with the
		// violations CUE gives for that constraint alone, however deep.
		checkCase{name: "constraint bad leaf 500 deep", schema: "olm.bundle",
			blob: constraintBundle(nestConstraint(badGVK, 500)),
			deep: true,
			want: []Violation{
				{leaf500, "2 errors in empty disjunction:"},
				{leaf500 + ".gvk", "field not allowed"},
				{leaf500 + ".gvk.group", "conflicting values 1 and string (mismatched types int and string)"},
			}},
		checkCase{name: "constraint nested errors", schema: "olm.bundle",
			blob: constraintBundle(
				nestConstraint(`{"cel":{"rule":"true"},"gvk":{"group":"g","version":"v1","kind":"K"}}`, 3),
				nestConstraint(`{"bogus":1}`, 2),
				`{"all":{"constraints":[
					{"failureMessage":3,"gvk":{"group":"g","version":"v1","kind":"K"}},
					{"any":{"constraints":"x"}},
					{"package":{"packageName":"p","versionRange":1}},
					{"cel":{"rule":null}},
					{"not":{}},
					{},
					`+goodGVK+`]}}`),
			want: []Violation{
				{leaf3, "2 errors in empty disjunction:"},
				{leaf3 + ".cel", "field not allowed"},
				{leaf3 + ".gvk", "field not allowed"},
				{leaf2 + ".bogus", "field not allowed"},
				{"properties[3].value.all.constraints[0].failureMessage", "conflicting values 3 and string (mismatched types int and string)"},
				{"properties[3].value.all.constraints[1]", "2 errors in empty disjunction:"},
				{"properties[3].value.all.constraints[1].any", "field not allowed"},
				{"properties[3].value.all.constraints[1].any.constraints", `conflicting values "x" and [...#Constraint] (mismatched types string and list)`},
				{"properties[3].value.all.constraints[2]", "2 errors in empty disjunction:"},
				{"properties[3].value.all.constraints[2].package", "field not allowed"},
				{"properties[3].value.all.constraints[2].package.versionRange", "conflicting values 1 and string (mismatched types int and string)"},
				{"properties[3].value.all.constraints[3]", "2 errors in empty disjunction:"},
				{"properties[3].value.all.constraints[3].cel", "field not allowed"},
				{"properties[3].value.all.constraints[3].cel.rule", "conflicting values null and string (mismatched types null and string)"},
				{"properties[3].value.all.constraints[5]", "incomplete value {failureMessage?:string,gvk!:~(#GVKValue)} | {failureMessage?:string,package!:~(#PackageRequiredValue)} | {failureMessage?:string,cel!:{rule:string}} | {failureMessage?:string,all!:~(#CompoundConstrai…"},
			}},
		// A constraint that fails beside nested ones that fail: all are
		// reported.
		checkCase{name: "constraint failing at two levels", schema: "olm.bundle",
			blob: constraintBundle(`{"extra":true,"all":{"constraints":[` + badGVK + `,` + goodGVK + `]}}`),
			want: []Violation{
				{"properties[1].value", "2 errors in empty disjunction:"},
				{"properties[1].value.all", "field not allowed"},
				{"properties[1].value.all.constraints[0]", "2 errors in empty disjunction:"},
				{"properties[1].value.all.constraints[0].gvk", "field not allowed"},
				{"properties[1].value.all.constraints[0].gvk.group", "conflicting values 1 and string (mismatched types int and string)"},
				{"properties[1].value.extra", "field not allowed"},
			}},
	)
}

// TestExplainNested: a nested constraint's findings name its path, in the
// words given to the same problem at the top of an olm.constraint value.
func TestExplainNested(t *testing.T) {
	c := sharedChecker(t)
	deep := nestedPath("properties[1].value", 500)
	many := make([]string, maxNestedReported+5)
	for i := range many {
		many[i] = `{"bogus":1}`
	}
	for _, tc := range []struct {
		blob string
		want []string // "path | words"
	}{
		{constraintBundle(nestConstraint(badGVK, 500)), []string{
			deep + " | " + deep + " is not a constraint; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage), in OLM's form: package is {packageName, versionRange}, cel is {rule}, all, any and not are {constraints: [...]}",
		}},
		{constraintBundle(`{"all":{"constraints":[{"bogus":1},{"failureMessage":3,"gvk":{"group":"g","version":"v1","kind":"K"}},{},{"cel":{}},{"cel":{"rule":"x"},"package":{"packageName":"p","versionRange":"1"}}]}}`), []string{
			"properties[1].value.all.constraints[0].bogus | properties[1].value.all.constraints[0].bogus is not a field of a constraint",
			"properties[1].value.all.constraints[1].failureMessage | properties[1].value.all.constraints[1].failureMessage is a number (3); expected a string",
			"properties[1].value.all.constraints[2] | properties[1].value.all.constraints[2] is incomplete; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage)",
			"properties[1].value.all.constraints[3].cel.rule | properties[1].value.all.constraints[3].cel.rule is missing; expected a string",
			"properties[1].value.all.constraints[4] | properties[1].value.all.constraints[4] is not a constraint; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage), in OLM's form: package is {packageName, versionRange}, cel is {rule}, all, any and not are {constraints: [...]}",
		}},
		// The value fails as a whole (two kinds), and so does a
		// constraint in it: both are said.
		{constraintBundle(`{"gvk":{"group":"g","version":"v1","kind":"K"},"any":{"constraints":[{"failureMessage":"x"}]}}`), []string{
			"properties[1].value | properties[1].value is not an olm.constraint value; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage), in OLM's form: package is {packageName, versionRange}, cel is {rule}, all, any and not are {constraints: [...]}",
			"properties[1].value.any.constraints[0] | properties[1].value.any.constraints[0] is incomplete; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage)",
		}},
		// Past maxNestedReported failing constraints, a count.
		{constraintBundle(`{"any":{"constraints":[` + strings.Join(many, ",") + `]}}`), func() []string {
			out := []string{"properties[1].value | properties[1].value: 5 more of its nested constraints fail; only the first 20 are reported"}
			for i := range maxNestedReported {
				p := fmt.Sprintf("properties[1].value.any.constraints[%d].bogus", i)
				out = append(out, p+" | "+p+" is not a field of a constraint")
			}
			return out
		}()},
	} {
		blob, _, err := canonical([]byte(tc.blob))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range c.Explain("olm.bundle", blob, c.Check("olm.bundle", blob)) {
			if formatSteps(f.Steps) != f.Path {
				t.Errorf("steps %v do not spell %q", f.Steps, f.Path)
			}
			got = append(got, f.Path+" | "+f.Words)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%.200s:\ngot:\n%s\nwant:\n%s", tc.blob, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// randomConstraint builds a constraint tree at most depth deep, mostly
// valid, with a defect here and there of the kinds people write: two
// kinds in one constraint, an unknown key, a value of the wrong type, a
// missing field, a constraint that is not an object, a list that is not
// a list.
func randomConstraint(rng *rand.Rand, depth int) any {
	var node map[string]any
	if depth > 0 && rng.IntN(3) > 0 {
		list := []any{}
		for range rng.IntN(3) {
			list = append(list, randomConstraint(rng, depth-1))
		}
		node = map[string]any{nestedOps[rng.IntN(len(nestedOps))]: map[string]any{"constraints": list}}
	} else {
		switch rng.IntN(3) {
		case 0:
			node = map[string]any{"gvk": map[string]any{"group": "g", "version": "v1", "kind": "K"}}
		case 1:
			node = map[string]any{"package": map[string]any{"packageName": "p", "versionRange": ">=1.0.0"}}
		default:
			node = map[string]any{"cel": map[string]any{"rule": "true"}}
		}
	}
	if rng.IntN(4) == 0 {
		node["failureMessage"] = "m"
	}
	if rng.IntN(6) > 0 {
		return node
	}
	switch rng.IntN(9) {
	case 0, 1, 2:
	case 3:
		node["gvk"] = map[string]any{"group": "g", "version": "v1", "kind": "K"}
		return node
	case 4:
		node["bogus"] = 1.0
		return node
	case 5:
		node["failureMessage"] = 3.0
		return node
	case 6:
		return nil
	case 7:
		return "x"
	case 8:
		return map[string]any{}
	}
	// The other defects are in the object under the constraint's kind.
	var inner map[string]any
	for _, k := range slices.Sorted(maps.Keys(node)) {
		if m, ok := node[k].(map[string]any); ok {
			inner = m
			break
		}
	}
	first := slices.Sorted(maps.Keys(inner))[0]
	switch rng.IntN(3) {
	case 0:
		delete(inner, first)
	case 1:
		inner[first] = 1.0
		if _, ok := inner["constraints"]; ok {
			inner["constraints"] = "x"
		}
	default:
		inner["extra"] = true
	}
	return node
}

// TestNestedConstraintsRandom compares Check with the reference on
// random constraint trees (and with the whole blob evaluated at once: the
// same violations where no nested constraint fails, the same verdict
// where one does). The race suite checks 100 trees, the corpus run 2000.
func TestNestedConstraintsRandom(t *testing.T) {
	c := sharedChecker(t)
	rng := rand.New(rand.NewPCG(7, 24))
	n := 100
	if testutil.Corpus {
		n = 2000
	}
	nested, invalid := 0, 0
	for i := range n {
		props := []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": "p", "version": "1.0.0"}}}
		for range rng.IntN(2) + 1 {
			props = append(props, map[string]any{"type": "olm.constraint", "value": randomConstraint(rng, rng.IntN(5)+1)})
		}
		blob, err := encodeCanonical(map[string]any{"schema": "olm.bundle", "package": "p", "name": "p.v1", "image": "i", "properties": props})
		if err != nil {
			t.Fatal(err)
		}
		schemaName := []string{"olm.bundle", "olm.bundle", "olm.bundle", "olm.other", "olm.deprecations"}[rng.IntN(5)]
		if checkAgainstReference(t, c, fmt.Sprintf("tree %d", i), schemaName, blob) != nil {
			invalid++
		}
		if referenceParts(c, schemaName, blob).nestedFail {
			nested++
		}
	}
	t.Logf("%d trees, %d invalid, %d with a nested constraint failing", n, invalid, nested)
	if nested == 0 || invalid == n {
		t.Errorf("the trees should be a mix of valid ones and ones failing inside")
	}
}

// maxNesting is the deepest a constraint nests in a blob that JSON
// decoders read: three levels of JSON for each ({"all":{"constraints":[),
// inside the blob, its properties and the property, within the 10000
// levels of encoding/json and of the shaper.
const maxNesting = (maxDepth - 5) / 3

// TestDeepConstraints: constraints nested as deep as a catalog can nest
// them are checked by parts, each a small shape (the whole value given to
// CUE at once took hours), and a problem at the bottom is reported
// there. Deep values of other kinds are checked as they were: they have
// no disjunction to explode.
func TestDeepConstraints(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	check := func(schemaName, blob string) []Violation {
		t.Helper()
		data, _, err := canonical([]byte(blob))
		if err != nil {
			t.Fatal(err)
		}
		vs := c.Check(schemaName, data)
		c.Explain(schemaName, data, vs)
		return vs
	}
	if vs := check("olm.bundle", constraintBundle(nestConstraint(goodGVK, maxNesting))); vs != nil {
		t.Errorf("valid constraint nested %d deep: %v", maxNesting, vs)
	}
	leaf := nestedPath("properties[1].value", maxNesting)
	if vs := check("olm.bundle", constraintBundle(nestConstraint(`{"bogus":1}`, maxNesting))); len(vs) != 1 || vs[0].Path != leaf+".bogus" {
		t.Errorf("unknown key %d deep: %v", maxNesting, vs)
	}
	// An unknown field at the top of the blob: its words are looked up
	// in the blob with its constraints cut.
	blob := strings.Replace(constraintBundle(nestConstraint(goodGVK, maxNesting)), `"image":"i"`, `"image":"i","imag":"j"`, 1)
	if vs := check("olm.bundle", blob); len(vs) != 1 || vs[0].Path != "imag" {
		t.Errorf("unknown field beside a deep constraint: %v", vs)
	}
	// Properties are not a field of olm.deprecations blobs, but _Meta
	// types them: their constraints are cut there too.
	dep := `{"schema":"olm.deprecations","package":"p","entries":[],"properties":[{"type":"olm.constraint","value":` + nestConstraint(goodGVK, maxNesting) + `}]}`
	if vs := check("olm.deprecations", dep); vs == nil {
		t.Errorf("olm.deprecations with properties: no violation")
	}
	// Every shape CUE saw is small: a constraint's cut, never the
	// whole nest (a shape as long as the value would be).
	for i := range c.memo.shards {
		for key := range c.memo.shards[i].m {
			if len(key) > 1000 {
				t.Errorf("a shape of %d bytes was evaluated: %.200s", len(key), key)
			}
		}
	}
	// Deep values without constraints: a property value nested to the
	// limit, and one past it.
	deepList := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if vs := check("olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"x","value":`+deepList(maxDepth-3)+`}]}`); vs != nil {
		t.Errorf("deep list value: %v", vs)
	}
	data := []byte(`{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.constraint","value":` + nestConstraint(goodGVK, maxDepth/3) + `}]}`)
	if vs := c.Check("olm.bundle", data); len(vs) != 1 || vs[0].Message != errTooDeep.Error() {
		t.Errorf("constraint nested past the limit: %v", vs)
	}
}
