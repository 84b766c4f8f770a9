//go:build !opm_lean

package action

import (
	"io"

	"github.com/fastopm/fastopm/alpha/updates"
)

// The answers of `opm alpha query updates` (alpha/updates): an Answer for
// --from, a Summary of each bundle for --all.
type (
	QueryUpdates   = updates.Query
	UpdatesAnswer  = updates.Answer
	UpdatesSummary = updates.Summary
)

// WriteUpdatesTable writes --all's table (updates.WriteTable).
func WriteUpdatesTable(w io.Writer, as []*UpdatesSummary) error { return updates.WriteTable(w, as) }
