package crdsafety

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/internal/testutil"
)

// TestSameAnswerRandom: on random pairs of CRDs, the Checker's answer is
// one that crdify's own runner on the whole CRDs gives (referenceChanges).
// The schemas mix every kind of child crdify walks (properties, items as a
// schema and as a list, allOf, anyOf, oneOf, not, additionalProperties,
// patternProperties, definitions, dependencies), null schemas, property
// names that make crdify's path strings collide ("items", "not", "a.b",
// "x[0]", ""), and changes of every check; the CRDs have several served
// versions. Where two paths collide, crdify's answer depends on the order
// of its maps, and changes from one run to the next: the Checker's must be
// one of them (crdify is run up to 16 times). The race suite runs 40
// cases, the corpus run 3000 (each takes about 60 ms, most of it
// crdify's).
func TestSameAnswerRandom(t *testing.T) {
	t.Parallel()
	n := 40
	if testutil.Corpus {
		n = 3000
	}
	c := newChecker(t)
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 24))
		oldJS, newJS := randomCRDPair(r)
		o, n := manifest(t, oldJS), manifest(t, newJS)
		got := compareOne(t, c, o, n)
		want := referenceChanges(t, o, n)
		for range 15 {
			if sameChanges(got, want) {
				break
			}
			want = referenceChanges(t, o, n)
		}
		if !sameChanges(got, want) {
			t.Fatalf("seed %d:\nold: %s\nnew: %s\nonly the Checker's:\n%sonly crdify's:\n%s", seed, oldJS, newJS,
				report(slices.DeleteFunc(slices.Clone(got), func(c Change) bool { return slices.Contains(want, c) })),
				report(slices.DeleteFunc(slices.Clone(want), func(c Change) bool { return slices.Contains(got, c) })))
		}
	}
}

// sameChanges reports whether the Checker's changes are crdify's: the
// same, but for an unhandled change of a property whose lists of schemas
// nest past maxListNest, which the Checker words without go-cmp's diff of
// them (unhandledWithoutDeepDiff): its message is not compared.
func sameChanges(got, want []Change) bool {
	return slices.EqualFunc(got, want, func(g, w Change) bool {
		if g.Check == "unhandled" && strings.Contains(g.Message, deepValue) {
			g.Message = w.Message
		}
		return g == w
	})
}

func manifest(t testing.TB, js []byte) CRD {
	t.Helper()
	c, ok, err := ParseManifest(js)
	if err != nil || !ok {
		t.Fatalf("%s: %v %v", js, ok, err)
	}
	return c
}

type jmap = map[string]any

var randomNames = []string{"a", "b", "c", "spec", "size", "items", "not", "allOf", "additionalProperties", "a.b", "x[0]", ""}

// randomSchema is a schema node depth levels deep at most.
func randomSchema(r *rand.Rand, depth int) any {
	if r.IntN(30) == 0 {
		return nil
	}
	s := jmap{}
	types := []string{"object", "string", "integer", "array", "number", "boolean", ""}
	if ty := types[r.IntN(len(types))]; ty != "" {
		s["type"] = ty
	}
	if r.IntN(3) == 0 {
		s["description"] = fmt.Sprintf("d%d", r.IntN(3))
	}
	if r.IntN(6) == 0 {
		s["enum"] = []any{"x", "y", "z"}[:1+r.IntN(3)]
	}
	if r.IntN(6) == 0 {
		s["maxLength"] = r.IntN(3)
	}
	if r.IntN(8) == 0 {
		s["minimum"] = r.IntN(3)
	}
	if r.IntN(8) == 0 {
		s["format"] = []string{"email", "date"}[r.IntN(2)]
	}
	if r.IntN(8) == 0 {
		s["default"] = "x"
	}
	if r.IntN(8) == 0 {
		s["nullable"] = true
	}
	if r.IntN(10) == 0 {
		s["x-kubernetes-preserve-unknown-fields"] = true
	}
	if depth <= 0 {
		return s
	}
	if r.IntN(2) == 0 {
		props := jmap{}
		for range 1 + r.IntN(4) {
			props[randomNames[r.IntN(len(randomNames))]] = randomSchema(r, depth-1)
		}
		s["properties"] = props
		if r.IntN(3) == 0 {
			var req []any
			for _, k := range slices.Sorted(maps.Keys(props)) {
				if r.IntN(2) == 0 {
					req = append(req, k)
				}
			}
			s["required"] = req
		}
	}
	switch r.IntN(6) {
	case 0:
		s["items"] = randomSchema(r, depth-1)
	case 1:
		s["items"] = []any{randomSchema(r, depth-1), randomSchema(r, depth-1)}
	}
	for _, comb := range []string{"allOf", "anyOf", "oneOf"} {
		if r.IntN(8) == 0 {
			s[comb] = []any{randomSchema(r, depth-1), randomSchema(r, depth-1)}[:1+r.IntN(2)]
		}
	}
	if r.IntN(8) == 0 {
		s["not"] = randomSchema(r, depth-1)
	}
	if r.IntN(8) == 0 {
		if r.IntN(3) == 0 {
			s["additionalProperties"] = r.IntN(2) == 0
		} else {
			s["additionalProperties"] = randomSchema(r, depth-1)
		}
	}
	for _, m := range []string{"patternProperties", "definitions", "dependencies"} {
		if r.IntN(12) == 0 {
			v := jmap{randomNames[r.IntN(len(randomNames))]: randomSchema(r, depth-1)}
			if m == "dependencies" && r.IntN(2) == 0 {
				v["k"] = []any{"a"}
			}
			s[m] = v
		}
	}
	return s
}

// mutate returns a copy of the schema v with random changes.
func mutate(r *rand.Rand, v any, depth int) any {
	s, ok := v.(jmap)
	if !ok || r.IntN(12) == 0 {
		if r.IntN(3) == 0 {
			return randomSchema(r, depth)
		}
		return v
	}
	out := jmap{}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		x := s[k]
		switch k {
		case "properties", "patternProperties", "definitions", "dependencies":
			m := jmap{}
			for _, name := range slices.Sorted(maps.Keys(x.(jmap))) {
				p := x.(jmap)[name]
				switch r.IntN(10) {
				case 0: // removed
				case 1:
					m[name+"2"] = p
				default:
					m[name] = mutate(r, p, depth-1)
				}
			}
			if r.IntN(6) == 0 {
				m[randomNames[r.IntN(len(randomNames))]] = randomSchema(r, depth-1)
			}
			out[k] = m
		case "items", "allOf", "anyOf", "oneOf":
			if list, ok := x.([]any); ok {
				var l []any
				for _, e := range list {
					if r.IntN(8) != 0 {
						l = append(l, mutate(r, e, depth-1))
					}
				}
				out[k] = l
			} else {
				out[k] = mutate(r, x, depth-1)
			}
		case "not", "additionalProperties":
			out[k] = mutate(r, x, depth-1)
		default:
			if r.IntN(8) != 0 {
				out[k] = x
			}
		}
	}
	switch r.IntN(12) {
	case 0:
		out["type"] = "string"
	case 1:
		out["enum"] = []any{"x"}
	case 2:
		out["maxLength"] = 1
	case 3:
		out["description"] = "changed"
	case 4:
		out["required"] = []any{"a", "b"}
	case 5:
		out["format"] = "uri"
	case 6:
		out["default"] = "y"
	case 7:
		out["anyOf"] = []any{jmap{"type": "string"}}
	}
	return out
}

// randomCRDPair is an old CRD of one to three versions and a new one
// changed from it.
func randomCRDPair(r *rand.Rand) (oldJS, newJS []byte) {
	names := []string{"v1alpha1", "v1beta1", "v1", "v2"}
	nv := 1 + r.IntN(3)
	var oldVs, newVs []any
	for i := range nv {
		schema := randomSchema(r, 1+r.IntN(4))
		v := jmap{"name": names[i], "served": r.IntN(5) != 0, "storage": i == nv-1}
		if schema != nil || r.IntN(2) == 0 {
			v["schema"] = jmap{"openAPIV3Schema": schema}
		}
		oldVs = append(oldVs, v)
		nv := maps.Clone(v)
		if r.IntN(5) != 0 {
			nv["schema"] = jmap{"openAPIV3Schema": mutate(r, schema, 4)}
		}
		if r.IntN(10) == 0 {
			nv["served"] = !v["served"].(bool)
		}
		if r.IntN(12) != 0 {
			newVs = append(newVs, nv)
		}
	}
	if r.IntN(4) == 0 {
		newVs = append(newVs, jmap{"name": "v3", "served": true, "storage": false, "schema": jmap{"openAPIV3Schema": randomSchema(r, 3)}})
	}
	crd := func(vs []any, webhook bool) []byte {
		spec := jmap{
			"group": "random.example.com", "scope": "Namespaced", "versions": vs,
			"names": jmap{"kind": "Thing", "plural": "things", "singular": "thing", "listKind": "ThingList"},
		}
		if webhook {
			spec["conversion"] = jmap{"strategy": "Webhook"}
		}
		js, err := json.Marshal(jmap{"apiVersion": APIVersionV1, "kind": crdKind, "metadata": jmap{"name": "things.random.example.com"}, "spec": spec})
		if err != nil {
			panic(err)
		}
		return js
	}
	return crd(oldVs, false), crd(newVs, r.IntN(8) == 0)
}
