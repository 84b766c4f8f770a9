//go:build !opm_lean

package action

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/install"
	"github.com/fastopm/fastopm/alpha/updates"
)

// DiffCatalogs is `opm alpha diff`: what changed from the catalog Old to
// the catalog New (directories or catalog images) and, with Check, the
// update rules the change breaks.
type DiffCatalogs struct {
	Sources     SourceResolver
	Old, New    string
	MaxFileSize int64
	// Check applies the rules: alpha/updates' Check (stranded bundles,
	// heads going back, ...), crd-upgrade (CheckCRDUpgrades) and
	// uninstallable (Uninstallable).
	Check bool
	// Budget bounds each install question of the uninstallable rule
	// (install.Resolver.Budget; zero: no bound), MaxTerms the size of its
	// problem (install.Resolver.MaxTerms).
	Budget   time.Duration
	MaxTerms int
}

// DiffResult is what DiffCatalogs found.
type DiffResult struct {
	Changes []updates.Change
	// Violations are the check's findings, sorted by package, channel and
	// bundle (each rule's own order kept among equals); nil without
	// Check.
	Violations []updates.Violation
}

// Run reads both catalogs, in parallel, each once: the model, where each
// bundle is with a fingerprint of its blob (the bundles whose blobs
// differ are read back for what they carry: updates.CompareContents), and
// with Check, the resolver's view of the bundles and where their objects
// are, for the CRDs of the new updates, which are read back alone. An
// error reading a catalog names its reference.
func (d DiffCatalogs) Run(ctx context.Context) (*DiffResult, error) {
	refs := [2]string{d.Old, d.New}
	var cats [2]*OpenCatalog
	// What each bundle carries, read in the same pass.
	contents := [2]*updates.ContentCollector{updates.NewContentCollector(), updates.NewContentCollector()}
	defer func() {
		for _, c := range cats {
			if c != nil {
				c.Close()
			}
		}
	}()
	var eg errgroup.Group
	for i, ref := range refs {
		eg.Go(func() error {
			var err error
			if d.Check {
				// Both located: the CRDs of a bundle NEW changed in
				// place are read from OLD too (CheckCRDUpgrades).
				cats[i], err = openCatalogVisit(ctx, d.Sources, ref, InstallCatalogName(ref), d.MaxFileSize, true, contents[i].AddBlob)
			} else {
				// The catalog's files stay open until the bundles
				// whose blobs differ are read back.
				cats[i], err = openCatalogVisit(ctx, d.Sources, ref, "", d.MaxFileSize, false, contents[i].AddBlob)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	old, new := cats[0], cats[1]
	cd, err := updates.CompareContents(ctx, contents[0].Contents(refs[0], old.FS), contents[1].Contents(refs[1], new.FS))
	if err != nil {
		return nil, err
	}
	res := &DiffResult{Changes: updates.DiffWith(old.Model, new.Model, cd)}
	if !d.Check {
		return res, nil
	}
	// The rules that need more than the models run side by side.
	var crds, uninstallable []updates.Violation
	eg = errgroup.Group{}
	eg.Go(func() (err error) {
		crds, err = CheckCRDUpgrades(ctx, old, new, cd.ObjectsChanged)
		return err
	})
	eg.Go(func() (err error) {
		uninstallable, err = Uninstallable(ctx, old.Install, new.Install, install.Limits{Budget: d.Budget, MaxTerms: d.MaxTerms})
		return err
	})
	vs := updates.Check(old.Model, new.Model)
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	vs = append(append(vs, crds...), uninstallable...)
	slices.SortStableFunc(vs, func(a, b updates.Violation) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Bundle, b.Bundle))
	})
	if vs == nil {
		vs = []updates.Violation{}
	}
	res.Violations = vs
	return res, nil
}

// Uninstallable is the uninstallable rule of `opm alpha diff --check`: a
// new Subscription to a channel, or starting at one of its bundles, that
// OLM v0 resolves from the old catalog and not from the new one, each
// catalog its only CatalogSource (install.Uninstallable). One that was
// not installable from the old catalog either is not reported.
//
// Each question gets the limits.
func Uninstallable(ctx context.Context, old, new *install.Catalog, limits install.Limits) ([]updates.Violation, error) {
	gs, err := install.Uninstallable(ctx, old, new, limits)
	if err != nil {
		return nil, fmt.Errorf("uninstallable: %w", err)
	}
	var out []updates.Violation
	for _, g := range gs {
		what := "a new Subscription to the channel"
		if g.StartingCSV != "" {
			what = "a new Subscription starting at " + g.StartingCSV
		}
		if g.Status == install.Undecided {
			out = append(out, updates.Violation{Package: g.Package, Channel: g.Channel, Bundle: g.StartingCSV, Rule: "uninstallable",
				Warning: true, Undecided: true, Message: fmt.Sprintf("not decided whether %s resolves in both catalogs: %s", what, g.Why)})
			continue
		}
		now := "it is unsatisfiable"
		if g.Status == install.Failed {
			now = "OLM fails to resolve it"
		}
		msg := fmt.Sprintf("%s resolves in the old catalog; in the new one %s", what, now)
		if g.Why != "" {
			msg += ": " + g.Why
		}
		out = append(out, updates.Violation{Package: g.Package, Channel: g.Channel, Bundle: g.StartingCSV, Rule: "uninstallable", Message: msg})
	}
	return out, nil
}
