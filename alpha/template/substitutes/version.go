package substitutes

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/csv"
)

// substitutesForAnnotation is the CSV annotation of the legacy way of
// releasing a rebuilt bundle: the release is the version's build metadata.
const substitutesForAnnotation = "olm.substitutesFor"

// versionRelease is a bundle's version and release, ordered by version,
// then release (a bundle without a release comes first).
type versionRelease struct {
	version semver.Version
	release model.Release
}

func (a versionRelease) compare(b versionRelease) int {
	if c := a.version.Compare(b.version); c != 0 {
		return c
	}
	switch {
	case len(a.release) == 0 && len(b.release) > 0:
		return -1
	case len(b.release) == 0 && len(a.release) > 0:
		return 1
	}
	return semver.Version{Pre: a.release}.Compare(semver.Version{Pre: b.release})
}

// bundleVersionRelease reads a bundle's version and release from its
// olm.package property as upstream's Bundle.VersionRelease does: exactly one
// such property; without a release, a bundle whose CSV carries the
// olm.substitutesFor annotation has its version's build metadata as its
// release. Errors carry upstream's words.
func bundleVersionRelease(b *declcfg.Bundle) (versionRelease, error) {
	var (
		vr    versionRelease
		found bool
	)
	for _, p := range b.Properties {
		if p.Type != property.TypePackage {
			continue
		}
		if found {
			return vr, fmt.Errorf("must be exactly one property of type %q", property.TypePackage)
		}
		found = true
		var pkg property.Package
		if err := json.Unmarshal(p.Value, &pkg); err != nil {
			return vr, fmt.Errorf("unable to unmarshal %q property for bundle %q: %v", property.TypePackage, b.Name, err)
		}
		v, err := semver.Parse(pkg.Version)
		if err != nil {
			return vr, fmt.Errorf("invalid semver version %q in %q property for bundle %q: %v", pkg.Version, property.TypePackage, b.Name, err)
		}
		r, err := model.ParseRelease(pkg.Release)
		if err != nil {
			return vr, fmt.Errorf("invalid release %q in %q property for bundle %q: %v", pkg.Release, property.TypePackage, b.Name, err)
		}
		vr = versionRelease{v, r}
	}
	if !found {
		return vr, fmt.Errorf("no %q property found for bundle %q", property.TypePackage, b.Name)
	}
	if len(vr.release) == 0 && vr.version.Build != nil && usesLegacyRelease(b) {
		r, err := model.ParseRelease(strings.Join(vr.version.Build, "."))
		if err != nil {
			return vr, fmt.Errorf("unable to convert build metadata to release for bundle %q: %v", b.Name, err)
		}
		vr.release, vr.version.Build = r, nil
	}
	return vr, nil
}

// usesLegacyRelease reports whether the bundle's CSV has a non-empty
// olm.substitutesFor annotation, looking where upstream looks, in its
// order: the CSV among the bundle's manifests; an olm.csv.metadata
// property; the first olm.bundle.object property holding a JSON object
// (whatever its kind).
func usesLegacyRelease(b *declcfg.Bundle) bool {
	if b.CsvJSON != "" {
		if ann, ok := substitutesFor([]byte(b.CsvJSON)); ok {
			return ann != ""
		}
	}
	for _, p := range b.Properties {
		switch p.Type {
		case property.TypeCSVMetadata:
			var md property.CSVMetadata
			if err := json.Unmarshal(p.Value, &md); err != nil {
				continue
			}
			if md.Annotations[substitutesForAnnotation] != "" {
				return true
			}
		case property.TypeBundleObject:
			data, err := property.BundleObjectData(nil, p.Value)
			if err != nil {
				continue
			}
			if ann, ok := substitutesFor(data); ok {
				return ann != ""
			}
		}
	}
	return false
}

// substitutesFor decodes a manifest as upstream's registry type for a
// CSV and returns its olm.substitutesFor annotation; ok is false when the
// manifest does not decode (it is not a JSON object of that shape).
func substitutesFor(manifest []byte) (string, bool) {
	var obj struct {
		csv.TypeMeta `json:",inline"`
		Metadata     csv.ObjectMeta  `json:"metadata"`
		Spec         json.RawMessage `json:"spec"`
		Status       json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(manifest, &obj); err != nil {
		return "", false
	}
	return obj.Metadata.Annotations[substitutesForAnnotation], true
}
