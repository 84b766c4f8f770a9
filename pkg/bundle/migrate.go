package bundle

import (
	"fmt"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/csv"
)

// MigrateBundleObjectToCSVMetadata applies the bundle-object-to-csv-metadata
// migration (opm --migrate-level bundle-object-to-csv-metadata) to b, with
// the semantics of upstream's convertObjectsToCSVMetadata
// (alpha/action/render.go):
//
//   - a bundle without an image or without a CSV (b.CsvJSON) is left alone;
//   - a bundle that already has an olm.csv.metadata property is left alone;
//   - otherwise every olm.bundle.object property is dropped, the other
//     properties keep their order and one olm.csv.metadata property built
//     from the CSV is appended.
//
// b.CsvJSON and b.Objects are not changed. The CSV must decode as upstream's
// v1alpha1.ClusterServiceVersion would (spec.version must be a semantic
// version, for instance); otherwise the error names the bundle and b is not
// changed.
func MigrateBundleObjectToCSVMetadata(b *declcfg.Bundle) error {
	if b.Image == "" || b.CsvJSON == "" {
		return nil
	}
	for _, p := range b.Properties {
		if p.Type == property.TypeCSVMetadata {
			return nil
		}
	}
	c, err := csv.Parse([]byte(b.CsvJSON))
	if err != nil {
		return fmt.Errorf("bundle %q: migrate to %s: %w", b.Name, property.TypeCSVMetadata, err)
	}
	meta, err := property.BuildCSVMetadata(c)
	if err != nil {
		return fmt.Errorf("bundle %q: migrate to %s: %w", b.Name, property.TypeCSVMetadata, err)
	}
	props := make([]property.Property, 0, len(b.Properties)+1)
	for _, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			props = append(props, p)
		}
	}
	b.Properties = append(props, meta)
	return nil
}
