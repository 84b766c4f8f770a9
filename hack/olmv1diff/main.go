// Command olmv1diff checks alpha/olmv1 against operator-controller's own
// code: it writes a list of OLM v1 questions over catalog directories,
// answers them with alpha/olmv1, and compares those answers with the
// answers of a harness built from operator-controller's sources (kept out
// of this repository; docs/olm-v1.md says how it was run).
//
//	go run ./hack/olmv1diff fixtures DIR testdata/olmv1/catalog
//	go run ./hack/olmv1diff questions [-release] [-set NAME=DIR[:PRIO],...]... DIR... > questions.jsonl
//	go run ./hack/olmv1diff answer questions.jsonl > ours.jsonl
//	go run ./hack/olmv1diff compare questions.jsonl ours.jsonl theirs.jsonl
//
// fixtures writes four small catalogs the real ones lack (fixtures.go).
// Each DIR is a catalog asked about alone (named after its directory);
// each -set is several catalogs asked about together, with priorities;
// -release asks each resolution question with the BundleReleaseSupport
// feature gate on as well.
// The questions: every package × (no channel, each channel) × (nothing
// installed, each bundle installed) × both upgrade constraint policies;
// a few version ranges per package (one invalid); with several catalogs,
// a selector for each; and, for every bundle whose objects the catalog
// carries, whether OLM v1 installs it, with the
// SingleOwnNamespaceInstallSupport gate off and on and several watch
// namespaces (installConfigs). An answer line is {"id", "bundle", "catalog", "error"} for
// a resolution and {"id", "bundle", "installable", "error"} for an
// installability question ("error" then holds the reasons, one a line).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/olmv1"
)

type catalogRef struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Priority int    `json:"priority"`
}

type question struct {
	ID               int          `json:"id"`
	Kind             string       `json:"kind"` // "resolve" or "install"
	Catalogs         []catalogRef `json:"catalogs"`
	Package          string       `json:"package"`
	Channels         []string     `json:"channels,omitempty"`
	Version          string       `json:"version,omitempty"`
	Policy           string       `json:"policy,omitempty"`
	Selector         string       `json:"selector,omitempty"`
	Installed        string       `json:"installed,omitempty"`
	Bundle           string       `json:"bundle,omitempty"`
	SingleOwn        bool         `json:"singleOwn,omitempty"`
	InstallNamespace string       `json:"installNamespace,omitempty"`
	WatchNamespace   string       `json:"watchNamespace,omitempty"`
	// ReleaseSupport is the BundleReleaseSupport feature gate.
	ReleaseSupport bool `json:"releaseSupport,omitempty"`
}

type answer struct {
	ID          int    `json:"id"`
	Bundle      string `json:"bundle,omitempty"`
	Catalog     string `json:"catalog,omitempty"`
	Error       string `json:"error,omitempty"`
	Installable *bool  `json:"installable,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "questions":
		err = questions(os.Args[2:], os.Stdout)
	case "fixtures":
		if len(os.Args) != 4 {
			usage()
		}
		err = fixtures(os.Args[2], os.Args[3])
	case "answer":
		if len(os.Args) != 3 {
			usage()
		}
		err = answerAll(os.Args[2], os.Stdout)
	case "compare":
		if len(os.Args) != 5 {
			usage()
		}
		var n int
		n, err = compare(os.Args[2], os.Args[3], os.Args[4], os.Stdout)
		if err == nil && n > 0 {
			os.Exit(1)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "olmv1diff:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: olmv1diff fixtures DIR SRC | questions [-release] [-set NAME=DIR[:PRIO],...]... DIR... | answer QUESTIONS | compare QUESTIONS OURS THEIRS")
	os.Exit(2)
}

type setFlag [][]catalogRef

func (s *setFlag) String() string { return "" }

func (s *setFlag) Set(v string) error {
	var refs []catalogRef
	for _, part := range strings.Split(v, ",") {
		name, rest, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("%q: want NAME=DIR[:PRIO]", part)
		}
		r := catalogRef{Name: name, Dir: rest}
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			p, err := strconv.Atoi(rest[i+1:])
			if err != nil {
				return fmt.Errorf("%q: %w", part, err)
			}
			r.Dir, r.Priority = rest[:i], p
		}
		refs = append(refs, r)
	}
	*s = append(*s, refs)
	return nil
}

func load(ctx context.Context, refs []catalogRef) (*action.Catalogs, *olmv1.Resolver, error) {
	cats := make([]action.InstallCatalog, len(refs))
	for i, r := range refs {
		cats[i] = action.InstallCatalog{Name: r.Name, Ref: r.Dir, Priority: r.Priority}
	}
	loaded, err := action.LoadCatalogs(ctx, action.DirResolver{}, cats, 0)
	if err != nil {
		return nil, nil, err
	}
	res, err := olmv1.NewResolver(olmv1.Options{}, loaded.V1...)
	if err != nil {
		loaded.Close() //nolint:errcheck // the resolver's error is the one to report
		return nil, nil, err
	}
	return loaded, res, nil
}

func questions(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("questions", flag.ContinueOnError)
	var sets setFlag
	fs.Var(&sets, "set", "catalogs asked about together: NAME=DIR[:PRIO],... (repeatable)")
	release := fs.Bool("release", false, "ask the resolution questions with the BundleReleaseSupport feature gate on too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var all [][]catalogRef
	for _, d := range fs.Args() {
		all = append(all, []catalogRef{{Name: filepath.Base(filepath.Clean(d)), Dir: d}})
	}
	all = append(all, sets...)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	id := 0
	emit := func(q question) error {
		id++
		q.ID = id
		return enc.Encode(q)
	}
	for _, refs := range all {
		if err := setQuestions(refs, *release, emit); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func setQuestions(refs []catalogRef, release bool, emit func(question) error) error {
	if release {
		// Every resolution question again, with the gate.
		inner := emit
		emit = func(q question) error {
			if err := inner(q); err != nil || q.Kind != "resolve" {
				return err
			}
			q.ReleaseSupport = true
			return inner(q)
		}
	}
	loaded, res, err := load(context.Background(), refs)
	if err != nil {
		return err
	}
	defer loaded.Close() //nolint:errcheck // read only
	pkgs := map[string]bool{}
	for _, c := range res.Catalogs() {
		for _, p := range c.Packages() {
			pkgs[p] = true
		}
	}
	for _, pkg := range slices.Sorted(mapsKeys(pkgs)) {
		var channels, bundles []string
		var versions []semver.Version
		for _, c := range res.Catalogs() {
			p := c.Package(pkg)
			if p == nil {
				continue
			}
			for _, ch := range p.Channels {
				if !slices.Contains(channels, ch.Name) {
					channels = append(channels, ch.Name)
				}
			}
			for _, b := range p.Bundles {
				if !slices.Contains(bundles, b.Name) {
					bundles = append(bundles, b.Name)
				}
				if v, err := semver.Parse(b.Version); err == nil {
					versions = append(versions, v)
				}
			}
		}
		slices.Sort(channels)
		slices.Sort(bundles)
		chanSets := [][]string{nil}
		for _, c := range channels {
			chanSets = append(chanSets, []string{c})
		}
		if len(channels) > 1 {
			chanSets = append(chanSets, channels[:2])
		}
		installed := append([]string{""}, bundles...)
		base := question{Kind: "resolve", Catalogs: refs, Package: pkg}
		for _, chs := range chanSets {
			for _, in := range installed {
				for _, pol := range []string{olmv1.CatalogProvided, olmv1.SelfCertified} {
					q := base
					q.Channels, q.Installed, q.Policy = chs, in, pol
					if err := emit(q); err != nil {
						return err
					}
				}
			}
		}
		for _, rng := range ranges(versions) {
			for _, in := range installed {
				for _, pol := range []string{olmv1.CatalogProvided, olmv1.SelfCertified} {
					q := base
					q.Version, q.Installed, q.Policy = rng, in, pol
					if err := emit(q); err != nil {
						return err
					}
				}
			}
		}
		if len(refs) > 1 {
			for _, r := range refs {
				q := base
				q.Selector = olmv1.NameLabel + "=" + r.Name
				if err := emit(q); err != nil {
					return err
				}
			}
			q := base
			q.Selector = olmv1.NameLabel + " notin (" + refs[0].Name + ")"
			if err := emit(q); err != nil {
				return err
			}
		}
	}
	if len(refs) != 1 {
		return nil
	}
	// Installability, for every bundle with objects.
	for _, c := range res.Catalogs() {
		for _, pkg := range c.Packages() {
			for _, b := range c.Package(pkg).Bundles {
				if !b.HasObjects() {
					continue
				}
				for _, cfg := range installConfigs {
					q := question{Kind: "install", Catalogs: refs, Package: pkg, Bundle: b.Name,
						SingleOwn: cfg.single, InstallNamespace: "operators", WatchNamespace: cfg.watch}
					if err := emit(q); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// installConfigs are the installability questions asked of each bundle:
// the SingleOwnNamespaceInstallSupport gate off and on, without a watch
// namespace, with another namespace than the install namespace
// ("operators"), with the install namespace, and with names the schema
// refuses (too long, not a DNS-1123 label, both).
var installConfigs = []struct {
	single bool
	watch  string
}{
	{false, ""}, {false, "team-a"},
	{true, ""}, {true, "team-a"}, {true, "operators"},
	{true, strings.Repeat("a", 64)}, {true, "Team_A"}, {true, strings.Repeat("A", 64)},
}

// ranges are a few version ranges over a package's versions: the middle
// one exactly, above and below it, its minor and major series, an
// alternative, and one range that does not parse.
func ranges(vs []semver.Version) []string {
	out := []string{"not-a-range"}
	if len(vs) == 0 {
		return out
	}
	slices.SortFunc(vs, func(a, b semver.Version) int { return a.Compare(b) })
	m := vs[len(vs)/2]
	mm := fmt.Sprintf("%d.%d.%d", m.Major, m.Minor, m.Patch)
	return append(out, mm, ">="+mm, "<"+mm, fmt.Sprintf("~%d.%d", m.Major, m.Minor),
		fmt.Sprintf("^%d", m.Major), fmt.Sprintf("<%s || >=%d.0.0", mm, vs[len(vs)-1].Major))
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func readQuestions(path string, fn func(question) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q question
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(q); err != nil {
			return err
		}
	}
	return sc.Err()
}

func answerAll(path string, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	var (
		key    string
		loaded *action.Catalogs
		res    *olmv1.Resolver
	)
	defer func() {
		if loaded != nil {
			loaded.Close() //nolint:errcheck // read only
		}
	}()
	err := readQuestions(path, func(q question) error {
		k, _ := json.Marshal(q.Catalogs)
		if string(k) != key {
			if loaded != nil {
				loaded.Close() //nolint:errcheck // read only
			}
			var err error
			if loaded, res, err = load(context.Background(), q.Catalogs); err != nil {
				return err
			}
			key = string(k)
		}
		var a answer
		switch q.Kind {
		case "resolve":
			r := res
			if q.ReleaseSupport {
				var err error
				if r, err = olmv1.NewResolver(olmv1.Options{BundleReleaseSupport: true}, res.Catalogs()...); err != nil {
					return err
				}
			}
			a = resolve(r, q)
		case "install":
			a = install(res, q)
		default:
			return fmt.Errorf("question %d: unknown kind %q", q.ID, q.Kind)
		}
		return enc.Encode(a)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func resolve(res *olmv1.Resolver, q question) answer {
	a := answer{ID: q.ID}
	var in *olmv1.Installed
	if q.Installed != "" {
		var err error
		if in, err = res.FindInstalled(q.Package, q.Installed, ""); err != nil {
			a.Error = "harness: " + err.Error()
			return a
		}
	}
	spec := olmv1.Spec{Package: q.Package, Channels: q.Channels, Version: q.Version, UpgradeConstraintPolicy: q.Policy, Selector: q.Selector}
	ans, err := res.Resolve(spec, in)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if !ans.Resolved {
		a.Error = ans.Error
		return a
	}
	a.Bundle, a.Catalog = ans.Bundle.Name, ans.Bundle.Catalog
	return a
}

func install(res *olmv1.Resolver, q question) answer {
	a := answer{ID: q.ID, Bundle: q.Bundle}
	var b *olmv1.Bundle
	for _, c := range res.Catalogs() {
		if b = c.Bundle(q.Package, q.Bundle); b != nil {
			break
		}
	}
	if b == nil {
		a.Error = "harness: bundle not found"
		return a
	}
	in := olmv1.Check(b, olmv1.Config{InstallNamespace: q.InstallNamespace, WatchNamespace: q.WatchNamespace, SingleOwnNamespace: q.SingleOwn})
	ok := in.Status == olmv1.Installable
	a.Installable = &ok
	a.Error = strings.Join(in.Reasons, "\n")
	return a
}

func readAnswers(path string) (map[int]answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]answer{}
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var a answer
		if err := dec.Decode(&a); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[a.ID] = a
	}
}

// compare prints every question whose answers differ and a summary, and
// returns the number of differences. Installability answers agree when
// the verdicts do and operator-controller's error (it stops at its first
// failing step; a step may join several errors, one a line) is the first
// of ours, line for line.
func compare(qpath, opath, tpath string, w io.Writer) (int, error) {
	ours, err := readAnswers(opath)
	if err != nil {
		return 0, err
	}
	theirs, err := readAnswers(tpath)
	if err != nil {
		return 0, err
	}
	counts := map[string]int{}
	diffs, total := 0, 0
	err = readQuestions(qpath, func(q question) error {
		total++
		counts[q.Kind]++
		o, ok1 := ours[q.ID]
		t, ok2 := theirs[q.ID]
		if !ok1 || !ok2 {
			return fmt.Errorf("question %d: no answer (ours %v, theirs %v)", q.ID, ok1, ok2)
		}
		if same(q, o, t) {
			return nil
		}
		diffs++
		qj, _ := json.Marshal(q)
		oj, _ := json.Marshal(o)
		tj, _ := json.Marshal(t)
		fmt.Fprintf(w, "DIFF %s\n  ours:   %s\n  theirs: %s\n", qj, oj, tj)
		return nil
	})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "%d questions (%d resolve, %d install), %d differences\n", total, counts["resolve"], counts["install"], diffs)
	return diffs, nil
}

func same(q question, o, t answer) bool {
	if q.Kind == "resolve" {
		return o.Bundle == t.Bundle && o.Error == t.Error &&
			(o.Catalog == t.Catalog || slices.Contains(strings.Split(t.Catalog, "|"), o.Catalog))
	}
	if o.Installable == nil || t.Installable == nil || *o.Installable != *t.Installable {
		return false
	}
	if *o.Installable {
		return true
	}
	ol, tl := strings.Split(o.Error, "\n"), strings.Split(t.Error, "\n")
	return len(tl) <= len(ol) && slices.Equal(ol[:len(tl)], tl)
}
