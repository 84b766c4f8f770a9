package action

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
)

// TestValidateConstraintDeep validates shapecat's constraint-deep
// catalog, a bundle whose olm.constraint nests all, any and not N deep (a
// 26 KB catalog at 1000 took validate hours): it passes, as it does
// upstream, as deep as a catalog can nest it (3331: each level is three
// levels of JSON, and encoding/json reads 10000), and fails deeper, where
// upstream fails to read it too ("exceeded max depth"). The verdict is
// checked, not the time (docs/performance.md has the figures). The race
// suite validates 300 levels; the corpus run 1000, 3331, 3332 and 9000.
func TestValidateConstraintDeep(t *testing.T) {
	s, ok := shapecat.LookupAny("constraint-deep")
	if !ok {
		t.Fatal("no constraint-deep shape")
	}
	depths := []int{300}
	if testutil.Corpus {
		depths = append(depths, 1000, 3331, 3332, 9000)
	}
	for _, n := range depths {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			res, err := Validate{FS: s.FS(n)}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n <= 3331 {
				if !res.Passed() || len(res.Problems) > 0 {
					t.Fatalf("want a pass without problems:\n%s", describe(res))
				}
				return
			}
			if res.Passed() || len(res.Problems) != 1 || res.Problems[0].Rule != model.RuleParse || !strings.Contains(res.Problems[0].Message, "exceeded max depth") {
				t.Fatalf("want one parse problem, nested too deep:\n%s", describe(res))
			}
		})
	}
}

// TestValidateConstraintSize: an olm.constraint value over OLM's 128 KiB
// is a warning (upstream checks nothing), an error under --strict,
// located at the value.
func TestValidateConstraintSize(t *testing.T) {
	msg := strings.Repeat("x", 2<<16)
	catalog := `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1.0.0"}]}
{"schema":"olm.bundle","package":"foo","name":"foo.v1.0.0","image":"quay.io/foo/bundle:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"type":"olm.constraint","value":{"failureMessage":"` + msg + `","gvk":{"group":"g","kind":"K","version":"v1"}}}]}
`
	fsys := fstest.MapFS{"catalog.json": &fstest.MapFile{Data: []byte(catalog)}}
	want := `catalog.json:3:206: olm.bundle "foo.v1.0.0": properties[1].value is an olm.constraint value of 131139 bytes; OLM refuses it: it reads olm.constraint values of at most 131072 bytes (operator-framework/api's constraints.Parse)`
	for _, strict := range []bool{false, true} {
		res, err := Validate{FS: fsys, Strict: strict}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 1 || res.Problems[0].Message != want || res.Problems[0].Rule != model.RuleSchema || res.Passed() == strict {
			t.Errorf("strict=%v: want one schema problem %q:\n%s", strict, want, describe(res))
		}
	}
}
