package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// maxReleaseLength is the longest release the ClusterServiceVersion CRD
// accepts.
const maxReleaseLength = 20

// Release is a bundle's release within its version: dot-separated
// identifiers with semver pre-release syntax (alphanumerics and hyphens, no
// leading zeros in numbers). nil means no release.
type Release []semver.PRVersion

// String joins the identifiers with dots.
func (r Release) String() string {
	parts := make([]string, len(r))
	for i, p := range r {
		parts[i] = p.String()
	}
	return strings.Join(parts, ".")
}

// ParseRelease parses the release of an olm.package property; "" is no
// release.
func ParseRelease(s string) (Release, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > maxReleaseLength {
		return nil, fmt.Errorf("invalid release %q: exceeds maximum length of %d characters", s, maxReleaseLength)
	}
	var (
		r    Release
		errs []error
	)
	for i, seg := range strings.Split(s, ".") {
		pr, err := semver.NewPRVersion(seg)
		if err != nil {
			errs = append(errs, fmt.Errorf("segment %d: %v", i, err))
			continue
		}
		r = append(r, pr)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid release %q: %v", s, err)
	}
	return r, nil
}

// VersionString is the bundle's version, with its release after a dash
// when it has one.
func (b *Bundle) VersionString() string {
	if len(b.Release) > 0 {
		return b.Version.String() + "-" + b.Release.String()
	}
	return b.Version.String()
}

// normalizedName is the name a bundle with a release must have:
// <package>-v<version>-<release>. Bundles without a release keep theirs.
func (b *Bundle) normalizedName() string {
	if len(b.Release) > 0 {
		return b.Package.Name + "-v" + b.VersionString()
	}
	return b.Name
}
