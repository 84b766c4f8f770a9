package action

import (
	"context"
	"fmt"
	"io"

	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/updates"
)

// LoadModel reads the catalog ref (a directory or a catalog image) into the
// upgrade-graph model. A catalog that breaks upstream's rules is refused
// with validate's report.
func LoadModel(ctx context.Context, sources SourceResolver, ref string, maxFileSize int64) (model.Model, error) {
	src, err := sources.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	if src.FS == nil {
		return nil, fmt.Errorf("%s is not a catalog", ref)
	}
	res, err := Validate{FS: src.FS, SkipSchema: true, MaxFileSize: maxFileSize}.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return res.Model, nil
}

// The answers of `opm alpha query updates` (alpha/updates): an Answer for
// --from, a Summary of each bundle for --all.
type (
	QueryUpdates   = updates.Query
	UpdatesAnswer  = updates.Answer
	UpdatesSummary = updates.Summary
)

// WriteUpdatesTable writes --all's table (updates.WriteTable).
func WriteUpdatesTable(w io.Writer, as []*UpdatesSummary) error { return updates.WriteTable(w, as) }
