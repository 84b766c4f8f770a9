package install

import (
	"context"
	"errors"
	"io/fs"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
)

// Load reads a catalog tree in one pass: its upgrade graph (alpha/model,
// with upstream's load and graph rules) and what the resolver needs of
// its bundles. A catalog that breaks upstream's rules (which opm serve
// refuses, so no cluster sees it) is an error with validate's report.
func Load(ctx context.Context, root fs.FS, name string, priority int, opts ...declcfg.WalkOption) (*Catalog, model.Model, error) {
	mb, col := model.NewBuilder(), NewCollector()
	err := declcfg.Walk(ctx, root, func(b *declcfg.Blob) error {
		mb.AddBlob(b)
		col.AddBlob(b)
		return nil
	}, opts...)
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return nil, nil, err
	}
	if len(walkErrs) > 0 {
		mb.MarkIncomplete()
	}
	m, problems := mb.Build()
	var all model.Problems
	for _, e := range walkErrs {
		all = append(all, model.ParseProblem(e))
	}
	all = append(all, problems...)
	if err := all.Err(); err != nil {
		return nil, nil, err
	}
	cat, err := NewCatalog(name, priority, m, col)
	if err != nil {
		return nil, nil, err
	}
	return cat, m, nil
}
