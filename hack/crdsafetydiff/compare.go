package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/validations"
)

type meta struct {
	Catalog, Package, Channel, From, To string
	Kind                                string // edge or mutation
	Note                                string `json:",omitempty"`
}

// pairInfo is what compare reads of a pair's directory.
type pairInfo struct {
	meta meta
	// identical says a CRD's manifest is the same in both bundles.
	identical map[string]bool
	// paths are, per CRD of the new bundle, per version, crdify's
	// paths of its properties.
	paths map[string]map[string]map[string]bool
}

func readJSONL(path string) (map[string]pairAnswer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read only
	out := map[string]pairAnswer{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for n := 1; sc.Scan(); n++ {
		var a pairAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out[a.ID] = a
	}
	return out, sc.Err()
}

// crdManifests are a side's CRD manifests by name, the first of each.
func crdManifests(dir string) (map[string][]byte, error) {
	files, err := objectFiles(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if k, name, _ := kindOf(data); k == "CustomResourceDefinition" {
			if _, ok := out[name]; !ok {
				out[name] = data
			}
		}
	}
	return out, nil
}

func readPair(dir string) (pairInfo, error) {
	var p pairInfo
	js, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(js, &p.meta); err != nil {
		return p, err
	}
	old, err := crdManifests(filepath.Join(dir, "old"))
	if err != nil {
		return p, err
	}
	nw, err := crdManifests(filepath.Join(dir, "new"))
	if err != nil {
		return p, err
	}
	p.identical, p.paths = map[string]bool{}, map[string]map[string]map[string]bool{}
	for name, data := range nw {
		p.identical[name] = string(old[name]) == string(data)
		var crd apiextensionsv1.CustomResourceDefinition
		if json.Unmarshal(data, &crd) != nil {
			continue // a v1beta1 CRD: not compared
		}
		vs := map[string]map[string]bool{}
		for _, v := range crd.Spec.Versions {
			m := map[string]bool{}
			for k := range validations.FlattenCRDVersion(v) {
				m[k] = true
			}
			vs[v.Name] = m
		}
		p.paths[name] = vs
	}
	return p, nil
}

var (
	address  = regexp.MustCompile(`\b0x[0-9a-f]{8,}\b`)
	required = regexp.MustCompile(`^(.*: required: new required fields: \[)(.*)\]$`)
)

// normalized writes a problem of theirs as ours writes it: the required
// list, in crdify's map order, sorted; pointer addresses 0x0.
func normalized(p string) string {
	p = address.ReplaceAllString(p, "0x0")
	if m := required.FindStringSubmatch(p); m != nil {
		names := strings.Fields(m[2])
		slices.Sort(names)
		p = m[1] + strings.Join(names, " ") + "]"
	}
	return p
}

// parentPath is the property a crdify path is in, or "".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// fold leaves out of their problems what alpha/crdsafety folds into a
// removed field: the removed fields inside another of the same version,
// the same version's problems on a removed field or inside one, and, for
// a pair of served versions, the problems of a property that the later
// version has not, nor its parent.
func fold(probs []string, paths map[string]map[string]bool) []string {
	const rf = "existingFieldRemoval: removed field : "
	removed := map[string]bool{} // version + " " + path
	for _, p := range probs {
		if rest, ok := strings.CutPrefix(p, rf); ok {
			if v, f, ok := strings.Cut(rest, ".^"); ok {
				removed[v+" ^"+f] = true
			}
		}
	}
	under := func(v, f string) bool {
		for x := f; x != ""; x = parentPath(x) {
			if removed[v+" "+x] {
				return true
			}
		}
		return false
	}
	var out []string
	for _, p := range probs {
		if rest, ok := strings.CutPrefix(p, rf); ok {
			if v, f, ok := strings.Cut(rest, ".^"); ok && under(v, parentPath("^"+f)) {
				continue
			}
			out = append(out, p)
			continue
		}
		ver, rest, ok := strings.Cut(p, ": ")
		if !ok || !strings.HasPrefix(rest, "^") {
			out = append(out, p)
			continue
		}
		field, _, _ := strings.Cut(rest, ": ")
		if _, later, served := strings.Cut(ver, " -> "); served {
			if pp := parentPath(field); pp != "" && !paths[later][field] && !paths[later][pp] {
				continue
			}
		} else if under(ver, field) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// multiset counts strings.
func multiset(ss []string, f func(string) string) map[string]int {
	m := map[string]int{}
	for _, s := range ss {
		if f != nil {
			s = f(s)
		}
		m[s]++
	}
	return m
}

// minus lists what a has more than b.
func minus(a, b map[string]int) []string {
	var out []string
	for s, n := range a {
		for range n - b[s] {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func sameMultiset(a, b map[string]int) bool {
	return len(minus(a, b)) == 0 && len(minus(b, a)) == 0
}

type counts struct {
	pairs, identical, refused, verdict, raw, normalized, folded int
	foldedPairs, foldedProblems                                 int
}

func compare(root, oursPath string, theirsPaths []string, w io.Writer) (int, error) {
	ours, err := readJSONL(oursPath)
	if err != nil {
		return 0, err
	}
	dirs, err := pairDirs(root)
	if err != nil {
		return 0, err
	}
	info := map[string]pairInfo{}
	var ids []string
	for _, d := range dirs {
		p, err := readPair(d)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", d, err)
		}
		info[filepath.Base(d)] = p
		ids = append(ids, filepath.Base(d))
	}
	bw := bufio.NewWriter(w)
	differences := 0
	var runs []map[string]pairAnswer
	for _, tp := range theirsPaths {
		theirs, err := readJSONL(tp)
		if err != nil {
			return 0, err
		}
		runs = append(runs, theirs)
		byKind := map[string]*counts{"edge": {}, "mutation": {}}
		var lines []string
		for _, id := range ids {
			t, ok := theirs[id]
			if !ok {
				return 0, fmt.Errorf("%s: no answer for pair %s", tp, id)
			}
			o, ok := ours[id]
			if !ok {
				return 0, fmt.Errorf("%s: no answer for pair %s", oursPath, id)
			}
			p := info[id]
			c := byKind[p.meta.Kind]
			if c == nil {
				c = &counts{}
				byKind[p.meta.Kind] = c
			}
			for _, tc := range t.CRDs {
				i := slices.IndexFunc(o.CRDs, func(x crdAnswer) bool { return x.Name == tc.Name })
				var oc crdAnswer
				if i >= 0 {
					oc = o.CRDs[i]
				}
				c.pairs++
				if p.identical[tc.Name] {
					c.identical++
				}
				if tc.Refused {
					c.refused++
				}
				sameVerdict := tc.Refused == oc.Refused && tc.Error == ""
				if sameVerdict {
					c.verdict++
				}
				ourSet := multiset(oc.Problems, nil)
				if sameMultiset(multiset(tc.Problems, nil), ourSet) {
					c.raw++
				}
				if sameMultiset(multiset(tc.Problems, normalized), ourSet) {
					c.normalized++
				}
				folded := fold(tc.Problems, p.paths[tc.Name])
				if n := len(tc.Problems) - len(folded); n > 0 {
					c.foldedPairs++
					c.foldedProblems += n
				}
				theirSet := multiset(folded, normalized)
				same := sameMultiset(theirSet, ourSet)
				if same {
					c.folded++
				}
				if same && sameVerdict {
					continue
				}
				differences++
				what := p.meta.Note
				if p.meta.Kind == "edge" {
					what = fmt.Sprintf("%s %s: %s -> %s", p.meta.Catalog, p.meta.Package, p.meta.From, p.meta.To)
				}
				line := fmt.Sprintf("  %s (%s, %s) %s: theirs refused=%v, ours refused=%v", id, p.meta.Kind, what, tc.Name, tc.Refused, oc.Refused)
				if tc.Error != "" {
					line += "; their error: " + tc.Error
				}
				for _, s := range minus(theirSet, ourSet) {
					line += "\n    only theirs: " + s
				}
				for _, s := range minus(ourSet, theirSet) {
					line += "\n    only ours:   " + s
				}
				lines = append(lines, line)
			}
		}
		fmt.Fprintf(bw, "%s:\n", tp)
		fmt.Fprintf(bw, "  %-9s %9s %9s %12s %12s %14s %14s %14s %22s\n", "kind", "CRD pairs", "identical", "they refuse", "same verdict", "same raw", "same normalized", "same folded", "folded (pairs, problems)")
		all := counts{}
		for _, k := range []string{"edge", "mutation"} {
			c := byKind[k]
			fmt.Fprintf(bw, "  %-9s %9d %9d %12d %12d %14d %14d %14d %22s\n", k, c.pairs, c.identical, c.refused, c.verdict, c.raw, c.normalized, c.folded, fmt.Sprintf("%d, %d", c.foldedPairs, c.foldedProblems))
			all.pairs += c.pairs
			all.identical += c.identical
			all.refused += c.refused
			all.verdict += c.verdict
			all.raw += c.raw
			all.normalized += c.normalized
			all.folded += c.folded
			all.foldedPairs += c.foldedPairs
			all.foldedProblems += c.foldedProblems
		}
		fmt.Fprintf(bw, "  %-9s %9d %9d %12d %12d %14d %14d %14d %22s\n", "all", all.pairs, all.identical, all.refused, all.verdict, all.raw, all.normalized, all.folded, fmt.Sprintf("%d, %d", all.foldedPairs, all.foldedProblems))
		fmt.Fprintf(bw, "  %d CRD pairs differ (verdict, or folded problems):\n", len(lines))
		for _, l := range lines {
			fmt.Fprintln(bw, l)
		}
	}
	// Their order from one run to the next.
	if len(runs) >= 2 {
		lists, reordered := 0, 0
		for _, id := range ids {
			a, b := runs[0][id], runs[1][id]
			for i := range min(len(a.CRDs), len(b.CRDs)) {
				x, y := a.CRDs[i].Problems, b.CRDs[i].Problems
				if len(x) > 1 && sameMultiset(multiset(x, nil), multiset(y, nil)) {
					lists++
					if !slices.Equal(x, y) {
						reordered++
					}
				}
			}
		}
		fmt.Fprintf(bw, "their order: %d of %d lists of more than one problem, the same in runs 1 and 2, came out in another order\n", reordered, lists)
	}
	return differences, bw.Flush()
}
