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
	b := NewBuilder()
	err := declcfg.Walk(ctx, root, func(blob *declcfg.Blob) error {
		b.AddBlob(blob)
		return nil
	}, opts...)
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return nil, nil, err
	}
	return b.Build(name, priority, walkErrs)
}

// Builder makes a Catalog out of blobs: the upgrade graph's model and the
// resolver's view of the bundles, from one pass. AddBlob may be called
// from several goroutines at once.
type Builder struct {
	model     *model.Builder
	collector *Collector
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{model: model.NewBuilder(), collector: NewCollector()} }

// AddBlob adds one blob; its bytes may be reused after the call.
func (b *Builder) AddBlob(blob *declcfg.Blob) {
	b.model.AddBlob(blob)
	b.collector.AddBlob(blob)
}

// Build makes the catalog. readErrs are the blobs that could not be read;
// they and any broken rule of upstream's fail the build with validate's
// report.
func (b *Builder) Build(name string, priority int, readErrs declcfg.Errors) (*Catalog, model.Model, error) {
	if len(readErrs) > 0 {
		b.model.MarkIncomplete()
	}
	m, problems := b.model.Build()
	var all model.Problems
	for _, e := range readErrs {
		all = append(all, model.ParseProblem(e))
	}
	all = append(all, problems...)
	if err := all.Err(); err != nil {
		return nil, nil, err
	}
	cat, err := NewCatalog(name, priority, m, b.collector)
	if err != nil {
		return nil, nil, err
	}
	return cat, m, nil
}
