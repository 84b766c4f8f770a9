package schema

import (
	"flag"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/fastopm/fastopm/internal/testutil"
)

var (
	mutationRounds = flag.Int("mutation-rounds", 0, "mutants per seed blob in TestCheckMatchesReferenceOnMutations (0: 60 in the corpus build, 8 in the race suite)")
	mutationSeed   = flag.Uint64("mutation-seed", 1, "random seed of TestCheckMatchesReferenceOnMutations")
)

// schemaLabels returns the field labels of schema.cue, so that mutations
// add the keys the definitions talk about.
func schemaLabels(t testing.TB) []string {
	t.Helper()
	f, err := parser.ParseFile("schema.cue", Source())
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	ast.Walk(f, func(n ast.Node) bool {
		if fd, ok := n.(*ast.Field); ok {
			if name, _, err := ast.LabelName(fd.Label); err == nil && name != "" && name[0] != '#' && name[0] != '_' {
				set[name] = true
			}
		}
		return true
	}, nil)
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mutator makes random structural changes to decoded JSON values.
type mutator struct {
	rng    *rand.Rand
	keys   []string
	strs   []string
	nested int
}

func (m *mutator) scalar() any {
	switch m.rng.IntN(9) {
	case 0:
		return nil
	case 1:
		return float64(m.rng.IntN(3))
	case 2:
		return 1.5
	case 3:
		return m.rng.IntN(2) == 0
	case 4:
		return ""
	case 5:
		return "some value"
	default:
		return m.strs[m.rng.IntN(len(m.strs))]
	}
}

func (m *mutator) value() any {
	if m.nested < 3 {
		m.nested++
		defer func() { m.nested-- }()
		switch m.rng.IntN(6) {
		case 0:
			obj := map[string]any{}
			for range m.rng.IntN(3) + 1 {
				obj[m.keys[m.rng.IntN(len(m.keys))]] = m.value()
			}
			return obj
		case 1:
			var l []any
			for range m.rng.IntN(3) {
				l = append(l, m.value())
			}
			return append(l, m.scalar())
		}
	}
	return m.scalar()
}

// mutate changes one random node of v (in place where possible) and
// returns the new root.
func (m *mutator) mutate(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		switch r := m.rng.IntN(10); {
		case r == 0 || len(keys) == 0:
			x[m.keys[m.rng.IntN(len(m.keys))]] = m.value()
		case r == 1:
			delete(x, keys[m.rng.IntN(len(keys))])
		case r == 2:
			x[keys[m.rng.IntN(len(keys))]] = m.value()
		default:
			k := keys[m.rng.IntN(len(keys))]
			x[k] = m.mutate(x[k])
		}
		return x
	case []any:
		switch r := m.rng.IntN(10); {
		case r == 0 || len(x) == 0:
			return append(x, m.value())
		case r == 1:
			i := m.rng.IntN(len(x))
			return slices.Delete(x, i, i+1)
		case r == 2:
			return append(x, x[m.rng.IntN(len(x))])
		default:
			i := m.rng.IntN(len(x))
			x[i] = m.mutate(x[i])
			return x
		}
	}
	if m.rng.IntN(4) == 0 {
		return m.value()
	}
	return m.scalar()
}

// TestCheckMatchesReferenceOnMutations mutates the fixture and table blobs
// at random (fixed seed) and compares Check with the whole-blob reference on
// each mutant, checked as the blob's own schema and as every other kind.
func TestCheckMatchesReferenceOnMutations(t *testing.T) {
	c := sharedChecker(t)
	var seeds [][]byte
	for _, b := range fixtures(t) {
		if len(b.data) <= 16<<10 {
			seeds = append(seeds, b.data)
		}
	}
	for _, tc := range checkCases {
		seeds = append(seeds, []byte(tc.blob))
	}
	var strs []string
	for s := range c.voc.lits.set {
		strs = append(strs, s)
	}
	sort.Strings(strs)
	// Keys: the schema's labels, plus keys it does not know (anonymized
	// in shapes), including one that looks like an anonymized key.
	keys := append(schemaLabels(t), "extra", "alm-examples", "~0", "0", "Schema")
	m := &mutator{rng: rand.New(rand.NewPCG(*mutationSeed, 2)), keys: keys, strs: strs}
	rounds := *mutationRounds
	if rounds == 0 {
		rounds = 8
		if testutil.Corpus {
			rounds = 60
		}
	}
	if testing.Short() {
		rounds = min(rounds, 5)
	}
	failures, mutants, invalid, nestedInvalid := 0, 0, 0, 0
	for _, seed := range seeds {
		for range rounds {
			_, v, err := canonical(seed)
			if err != nil {
				t.Fatal(err)
			}
			for range m.rng.IntN(4) + 1 {
				v = m.mutate(v)
			}
			blob, err := encodeCanonical(v)
			if err != nil {
				t.Fatal(err)
			}
			schemaName := fuzzSchemas[m.rng.IntN(len(fuzzSchemas))]
			if m.rng.IntN(2) == 0 {
				schemaName = schemaOf(v)
			}
			got := c.Check(schemaName, blob)
			ref := referenceParts(c, schemaName, blob)
			want := ref.vs
			mutants++
			if want != nil {
				invalid++
			}
			if ref.nestedFail {
				nestedInvalid++
			}
			checkWhole(t, c, "mutant", schemaName, blob, ref)
			if d := diffViolations(got, want); d != "" {
				t.Errorf("as %s: Check and the reference disagree on\n%s\n%s", schemaName, blob, d)
				if failures++; failures > 5 {
					t.Fatal("too many failures")
				}
			}
		}
	}
	t.Logf("%d mutants, %d invalid, %d with a nested constraint failing", mutants, invalid, nestedInvalid)
	if invalid == 0 || invalid == mutants {
		t.Errorf("mutants should be a mix of valid and invalid blobs")
	}
}
