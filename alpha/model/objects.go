package model

// ManifestJSON converts a decoded olm.bundle.object manifest to the JSON
// text upstream opm serves for it (apimachinery's yaml.ToJSON): text that
// starts with '{' is returned as it is, anything else is read as YAML and
// written as JSON. It is the conversion the Builder applies, exported for
// consumers that stream bundle objects instead of keeping them (the serve
// index).
func ManifestJSON(data []byte) ([]byte, error) { return manifestJSON(data) }

// IsCSV reports whether a manifest, as returned by ManifestJSON, is a
// ClusterServiceVersion: the test upstream uses to pick a bundle's csvJson
// among its objects.
func IsCSV(js []byte) bool { return isCSV(js) }
