//go:build !opm_lean

package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/crdsafety"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
)

// OpenCatalog is a catalog's model, with its files still at hand to read
// more of them (the CRDs of its bundles). Close releases them.
type OpenCatalog struct {
	Model model.Model
	// Install is the catalog as alpha/install's resolver reads it, when
	// OpenInstallModel opened it.
	Install     *install.Catalog
	FS          fs.FS
	maxFileSize int64
	// locs are where the bundles are in FS, for CRDs.
	locs  *crdsafety.Locations
	close func() error
}

// OpenModel is LoadModel, keeping the catalog's files until Close; the
// same pass notes where its bundles are, so that CRDs reads only those it
// is asked for.
func OpenModel(ctx context.Context, sources SourceResolver, ref string, maxFileSize int64) (*OpenCatalog, error) {
	c, err := openCatalog(ctx, sources, ref, "", maxFileSize, true)
	var nc *NotCatalogError
	if errors.As(err, &nc) {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return c, err
}

// OpenInstallModel is OpenModel, reading in the same pass what
// alpha/install's resolver needs of the bundles: Install is the catalog,
// named name (a CatalogSource's name, which its answers give). Without
// crds, CRDs reads nothing: only the new catalog of a diff needs them.
func OpenInstallModel(ctx context.Context, sources SourceResolver, ref, name string, maxFileSize int64, crds bool) (*OpenCatalog, error) {
	if name == "" {
		return nil, fmt.Errorf("%s: a catalog for the resolver needs a name", ref)
	}
	return openCatalog(ctx, sources, ref, name, maxFileSize, crds)
}

// openCatalog reads the catalog once: the model (with upstream's rules),
// with locate, where its bundles are, and with a name, the resolver's
// view of it.
func openCatalog(ctx context.Context, sources SourceResolver, ref, name string, maxFileSize int64, locate bool) (*OpenCatalog, error) {
	return openCatalogVisit(ctx, sources, ref, name, maxFileSize, locate, nil)
}

// openCatalogVisit is openCatalog, handing every blob to extra too (nil:
// none) in the same pass.
func openCatalogVisit(ctx context.Context, sources SourceResolver, ref, name string, maxFileSize int64, locate bool, extra func(*declcfg.Blob)) (*OpenCatalog, error) {
	src, err := resolveCatalog(ctx, sources, ref)
	if err != nil {
		return nil, err
	}
	c := &OpenCatalog{FS: src.FS, maxFileSize: maxFileSize, locs: crdsafety.NewLocations(), close: src.Close}
	if src.FS == nil {
		c.Close()
		return nil, fmt.Errorf("%s is not a catalog", ref)
	}
	var collector *install.Collector
	if name != "" {
		collector = install.NewCollector()
	}
	var visit func(*declcfg.Blob)
	switch {
	case locate && collector != nil:
		visit = func(b *declcfg.Blob) {
			c.locs.Add(b)
			collector.AddBlob(b)
		}
	case locate:
		visit = c.locs.Add
	case collector != nil:
		visit = collector.AddBlob
	}
	if v := visit; extra != nil && v != nil {
		visit = func(b *declcfg.Blob) { v(b); extra(b) }
	} else if extra != nil {
		visit = extra
	}
	res, err := Validate{FS: src.FS, SkipSchema: true, MaxFileSize: maxFileSize, Visit: visit}.Run(ctx)
	if err == nil {
		err = res.Err()
	}
	if err == nil && collector != nil {
		c.Install, err = install.NewCatalog(name, 0, res.Model, collector)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Model = res.Model
	return c, nil
}

// Close releases the catalog's files (an image's unpacked tree).
func (c *OpenCatalog) Close() error {
	if c.close == nil {
		return nil
	}
	err := c.close()
	c.close = nil
	return err
}

// CRDs reads the CRDs of the catalog's bundles for which keep (nil: all)
// reports true: only those bundles' blobs are read again.
func (c *OpenCatalog) CRDs(ctx context.Context, keep func(pkg, name string) bool) (*crdsafety.Index, error) {
	return c.locs.LoadIndex(ctx, c.FS, keep, declcfg.WithMaxFileSize(c.maxFileSize))
}

// CompareCRDs returns the comparison of the CRDs of two bundles of ix,
// for updates.Query's CRDs. Once ctx is done, it compares nothing more:
// each comparison it stopped says so (Unknown); the caller checks ctx.
func CompareCRDs(ctx context.Context, ix *crdsafety.Index) (func(pkg, from, to string) crdsafety.Result, error) {
	c, err := crdsafety.NewChecker()
	if err != nil {
		return nil, err
	}
	return func(pkg, from, to string) crdsafety.Result {
		r, err := ix.Compare(ctx, c, pkg, from, to)
		if err != nil {
			return crdsafety.Result{Unknown: "the comparison was stopped: " + err.Error()}
		}
		return r
	}, nil
}

// UpdateEdge is one update OLM v0 takes in a channel: a cluster running
// From moves to To (alpha/updates' answer for From).
type UpdateEdge struct {
	Package, Channel, From, To string
}

// UpdateEdges lists the update `opm alpha query updates` gives every bundle
// of every channel of m (channels without a single replaces chain have
// none), sorted by package, channel and bundle.
func UpdateEdges(m model.Model) []UpdateEdge {
	var out []UpdateEdge
	for _, pkg := range slices.Sorted(maps.Keys(m)) {
		p := m[pkg]
		for _, chName := range slices.Sorted(maps.Keys(p.Channels)) {
			ch := p.Channels[chName]
			g, err := updates.NewGraph(ch)
			if err != nil {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(ch.Bundles)) {
				if st := g.Next(updates.InstalledBundle(ch.Bundles[name])); st != nil {
					out = append(out, UpdateEdge{Package: pkg, Channel: chName, From: name, To: st.To.Name})
				}
			}
		}
	}
	return out
}

// EdgeCRDs is the CRD comparison of one update.
type EdgeCRDs struct {
	UpdateEdge
	crdsafety.Result
}

// CheckEdgeCRDs compares the CRDs of each edge's two bundles, in parallel;
// the answers are in the edges' order. Edges between the same two bundles
// (in several channels) are compared once.
func CheckEdgeCRDs(ctx context.Context, ix *crdsafety.Index, c *crdsafety.Checker, edges []UpdateEdge) ([]EdgeCRDs, error) {
	type pair struct{ pkg, from, to string }
	results := map[pair]*crdsafety.Result{}
	var todo []pair
	for _, e := range edges {
		p := pair{e.Package, e.From, e.To}
		if _, ok := results[p]; !ok {
			results[p] = new(crdsafety.Result)
			todo = append(todo, p)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, p := range todo {
		if gctx.Err() != nil {
			break
		}
		r := results[p]
		g.Go(func() (err error) {
			*r, err = ix.Compare(gctx, c, p.pkg, p.from, p.to)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]EdgeCRDs, len(edges))
	for i, e := range edges {
		out[i] = EdgeCRDs{UpdateEdge: e, Result: *results[pair{e.Package, e.From, e.To}]}
	}
	return out, nil
}

// CheckCRDUpgrades is the crd-upgrade rule of `opm alpha diff --check`: on
// every update OLM v0 takes in NEW that OLD does not take (between the same
// two bundles, with the same images), the CRD changes an OLM refuses. A
// change an OLM surely refuses (every change crdify finds: OLM v1 refuses
// them all), or a comparison not made past a limit (crdsafety.Limits), is
// a violation; one neither refuses (a served version removed, a v1beta1
// CRD not compared) a warning. Only the CRDs of the bundles of new updates are read, from
// NEW's files. Updates whose bundles carry no objects cannot be compared,
// and are not reported: a catalog of olm.csv.metadata bundles would get a
// warning for every new bundle.
//
// A bundle that both catalogs hold under the same name but whose objects
// NEW changed in place (inPlace; a tag pushed again) is what clusters
// that installed it before run, as OLD had it: every update from or to it
// is checked again, from its OLD contents (read from OLD's files) to what
// NEW updates it to, and only the refusals the same update did not have in
// OLD are reported (inPlaceCRDs). inPlace nil: none.
func CheckCRDUpgrades(ctx context.Context, oldCat, newCat *OpenCatalog, inPlace func(pkg, name string) bool) ([]updates.Violation, error) {
	if inPlace == nil {
		inPlace = func(string, string) bool { return false }
	}
	oldM := oldCat.Model
	type key struct{ pkg, from, to, fromImage, toImage string }
	image := func(m model.Model, pkg, name string) string {
		for _, ch := range m[pkg].Channels {
			if b := ch.Bundles[name]; b != nil {
				return b.Image
			}
		}
		return ""
	}
	keyOf := func(m model.Model, e UpdateEdge) key {
		return key{e.Package, e.From, e.To, image(m, e.Package, e.From), image(m, e.Package, e.To)}
	}
	had := map[key]bool{}
	for _, e := range UpdateEdges(oldM) {
		had[keyOf(oldM, e)] = true
	}
	// The new edges, grouped by their two bundles (an update in several
	// channels is reported once, naming them); those with a bundle changed
	// in place apart.
	channels := map[key][]string{}
	var edges, changed []UpdateEdge
	need, needOld := map[[2]string]bool{}, map[[2]string]bool{}
	for _, e := range UpdateEdges(newCat.Model) {
		k := keyOf(newCat.Model, e)
		from, to := [2]string{e.Package, e.From}, [2]string{e.Package, e.To}
		switch {
		case inPlace(e.Package, e.From) || inPlace(e.Package, e.To):
			if _, ok := channels[k]; !ok {
				changed = append(changed, e)
				need[to], needOld[from] = true, true
				if had[k] {
					needOld[to] = true
				} else {
					need[from] = true // when From is not in OLD
				}
			}
		case had[k]:
			continue
		default:
			if _, ok := channels[k]; !ok {
				edges = append(edges, e)
				need[from], need[to] = true, true
			}
		}
		channels[k] = append(channels[k], e.Channel)
	}
	if len(edges) == 0 && len(changed) == 0 {
		return nil, nil
	}
	ix, err := newCat.CRDs(ctx, func(pkg, name string) bool { return need[[2]string{pkg, name}] })
	if err != nil {
		return nil, err
	}
	c, err := crdsafety.NewChecker()
	if err != nil {
		return nil, err
	}
	checked, err := CheckEdgeCRDs(ctx, ix, c, edges)
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		oldIx, err := oldCat.CRDs(ctx, func(pkg, name string) bool { return needOld[[2]string{pkg, name}] })
		if err != nil {
			return nil, err
		}
		more, err := inPlaceCRDs(ctx, c, oldIx, ix, changed, func(e UpdateEdge) bool { return had[keyOf(newCat.Model, e)] })
		if err != nil {
			return nil, err
		}
		checked = append(checked, more...)
	}
	var out []updates.Violation
	for _, e := range checked {
		chs := channels[keyOf(newCat.Model, e.UpdateEdge)]
		var note string
		var names []string
		for _, n := range []string{e.From, e.To} {
			if inPlace(e.Package, n) {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			note = fmt.Sprintf(" (the new catalog changed the objects of %s in place; clusters that installed it run the old ones)", strings.Join(names, " and "))
		}
		for _, ch := range e.Changes {
			out = append(out, updates.Violation{
				Package: e.Package, Channel: strings.Join(chs, ","), Bundle: e.To, Rule: "crd-upgrade",
				Message: fmt.Sprintf("update from %s: %s%s", e.From, ch, note),
				// Not checked, past a limit: not known to be safe.
				Warning: !ch.Refused() && !ch.NotChecked(),
			})
		}
	}
	slices.SortStableFunc(out, func(a, b updates.Violation) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Bundle, b.Bundle))
	})
	return out, nil
}

// inPlaceCRDs compares the CRDs of the updates edges, each with a bundle
// changed in place, from what clusters run (From as OLD holds it, when it
// does) to To as NEW holds it; for an update OLD had too (hadEdge), only
// the changes OLD's own comparison did not find are kept.
func inPlaceCRDs(ctx context.Context, c *crdsafety.Checker, oldIx, newIx *crdsafety.Index, edges []UpdateEdge, hadEdge func(UpdateEdge) bool) ([]EdgeCRDs, error) {
	out := make([]EdgeCRDs, len(edges))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, e := range edges {
		g.Go(func() error {
			fromIx := newIx
			if _, ok := oldIx.Bundle(e.Package, e.From); ok {
				fromIx = oldIx
			}
			r, err := crdsafety.CompareAcross(gctx, c, e.Package, fromIx, e.From, newIx, e.To)
			if err != nil {
				return err
			}
			if hadEdge(e) {
				before, err := oldIx.Compare(gctx, c, e.Package, e.From, e.To)
				if err != nil {
					return err
				}
				seen := map[string]bool{}
				for _, ch := range before.Changes {
					seen[ch.String()] = true
				}
				r.Changes = slices.DeleteFunc(r.Changes, func(ch crdsafety.Change) bool { return seen[ch.String()] })
			}
			out[i] = EdgeCRDs{UpdateEdge: e, Result: r}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, ctx.Err()
}
