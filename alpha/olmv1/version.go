package olmv1

import (
	"fmt"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/model"
)

// VersionRelease is a bundle's version and release as OLM v1 compares
// them (operator-registry's declcfg.VersionRelease): the semver version
// first (build metadata ignored), then the release, a bundle with a
// release being above one without.
type VersionRelease struct {
	Version semver.Version
	Release model.Release
}

// Compare returns -1, 0 or 1 as v is below, equal to or above o.
func (v VersionRelease) Compare(o VersionRelease) int {
	if c := v.Version.Compare(o.Version); c != 0 {
		return c
	}
	return compareRelease(v.Release, o.Release)
}

func compareRelease(a, b model.Release) int {
	switch {
	case len(a) == 0 && len(b) > 0:
		return -1
	case len(b) == 0 && len(a) > 0:
		return 1
	}
	return semver.Version{Pre: a}.Compare(semver.Version{Pre: b})
}

// String is the version as operator-controller reports it in a
// ClusterExtension's status without the BundleReleaseSupport feature gate:
// the release, when there is one, as the version's build metadata.
func (v VersionRelease) String() string {
	out := semver.Version{Major: v.Version.Major, Minor: v.Version.Minor, Patch: v.Version.Patch, Pre: v.Version.Pre, Build: v.Version.Build}
	if len(v.Release) > 0 {
		out.Build = strings.Split(v.Release.String(), ".")
	}
	return out.String()
}

// ParseLegacyVersionRelease reads a registry+v1 version, whose build
// metadata may carry the bundle's release (bundleutil.ParseLegacyVersionRelease):
// when the build metadata reads as a release, it becomes the release and
// the version loses it; otherwise the version keeps it and there is no
// release.
func ParseLegacyVersionRelease(s string) (VersionRelease, error) {
	v, err := semver.Parse(s)
	if err != nil {
		return VersionRelease{}, err
	}
	vr := VersionRelease{Version: v}
	if rel, err := model.ParseRelease(strings.Join(v.Build, ".")); err == nil && len(rel) > 0 {
		vr.Release = rel
		vr.Version.Build = nil
	}
	return vr, nil
}

// ParseExplicitRelease reads a version and a release given apart
// (bundleutil.ParseExplicitRelease): the version keeps its build metadata.
func ParseExplicitRelease(version, release string) (VersionRelease, error) {
	v, err := semver.Parse(version)
	if err != nil {
		return VersionRelease{}, fmt.Errorf("error parsing version %q: %w", version, err)
	}
	rel, err := model.ParseRelease(release)
	if err != nil {
		return VersionRelease{}, fmt.Errorf("error parsing release %q: %w", release, err)
	}
	return VersionRelease{Version: v, Release: rel}, nil
}

// bundleVersionRelease is bundleutil.GetVersionAndRelease: the version of
// the bundle's first olm.package property, its release read from an
// explicit release field only with the BundleReleaseSupport feature gate
// (release is nil when the property has none), from the version's build
// metadata otherwise.
func bundleVersionRelease(version string, release *string, releaseSupport bool) (VersionRelease, error) {
	if releaseSupport && release != nil {
		return ParseExplicitRelease(version, *release)
	}
	return ParseLegacyVersionRelease(version)
}

// VersionRange is a ClusterExtension's spec.source.catalog.version: a
// Masterminds semver constraint ("1.2.3", ">=1.0.0 <2.0.0", "~1.2",
// "1.x || >=3.0.0"), as compare.NewVersionRange reads it.
type VersionRange struct {
	text string
	c    *mmsemver.Constraints
}

// NewVersionRange parses a version range. The error has Masterminds' words
// (`improper constraint: "foobar"`).
func NewVersionRange(s string) (*VersionRange, error) {
	c, err := mmsemver.NewConstraint(s)
	if err != nil {
		return nil, err
	}
	return &VersionRange{text: s, c: c}, nil
}

// String is the range as it was written.
func (r *VersionRange) String() string { return r.text }

// Contains reports whether v is in the range: the version is handed to
// Masterminds with its pre-release and build metadata, so a pre-release
// matches only a range that names a pre-release of the same
// major.minor.patch, as Masterminds decides.
func (r *VersionRange) Contains(v semver.Version) bool {
	pre := make([]string, len(v.Pre))
	for i, p := range v.Pre {
		pre[i] = p.String()
	}
	mv := mmsemver.New(v.Major, v.Minor, v.Patch, strings.Join(pre, "."), strings.Join(v.Build, "."))
	return r.c.Check(mv)
}
