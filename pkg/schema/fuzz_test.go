package schema

import (
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// fuzzSchemas are the schema names FuzzCheck checks every input as, so
// that each input reaches every definition.
var fuzzSchemas = []string{declcfg.SchemaPackage, declcfg.SchemaChannel, declcfg.SchemaBundle, declcfg.SchemaDeprecations, "olm.other"}

// FuzzCheck compares Check with the whole-blob reference on mutated blobs.
// Inputs that are not JSON objects are still given to Check (which must not
// panic); JSON objects are canonicalized first, as Check requires.
func FuzzCheck(f *testing.F) {
	for _, b := range fixtures(f) {
		if len(b.data) <= 8<<10 {
			f.Add(b.data)
		}
	}
	for _, tc := range checkCases {
		f.Add([]byte(tc.blob))
	}
	c := sharedChecker(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range fuzzSchemas {
			c.Check(s, data)
		}
		blob, v, err := canonical(data)
		if err != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok {
			return
		}
		names := append([]string{schemaOf(v)}, fuzzSchemas...)
		for _, s := range names {
			checkAgainstReference(t, c, "fuzz input as "+s, s, blob)
		}
	})
}
