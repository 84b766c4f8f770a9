// Package model is a catalog's upgrade graph: packages, their channels, the
// bundles in each channel with their replaces, skips and skipRange edges,
// and deprecations. A Builder makes a Model from declcfg blobs and reports
// every problem it finds (not just the first), with upstream opm's messages
// and the file and line of the blob at fault.
package model

import (
	"fmt"

	"github.com/blang/semver/v4"
)

// Model maps package names to packages.
type Model map[string]*Package

// Source locates a blob: file (slash path relative to the catalog root) and
// 1-based line.
type Source struct {
	Path string
	Line int
}

func (s Source) String() string {
	if s.Path == "" {
		return ""
	}
	if s.Line == 0 {
		return s.Path
	}
	return fmt.Sprintf("%s:%d", s.Path, s.Line)
}

// Package is an operator package. Its description and icon are not kept:
// no rule reads them, and icons are most of a package blob's bytes.
type Package struct {
	Name           string
	DefaultChannel *Channel
	Channels       map[string]*Channel
	Deprecation    *Deprecation
	Source         Source
}

// Channel is an upgrade stream of a package. Each entry of the olm.channel
// blob is a Bundle of the channel.
type Channel struct {
	Package     *Package
	Name        string
	Bundles     map[string]*Bundle
	Deprecation *Deprecation
	Source      Source
}

// Bundle is a bundle as an entry of one channel: a bundle that is in two
// channels is two Bundles sharing the blob's data.
type Bundle struct {
	Package   *Package
	Channel   *Channel
	Name      string
	Replaces  string
	Skips     []string
	SkipRange string

	// From the olm.bundle blob (zero when the channel names a bundle
	// that has no blob). The model keeps what its rules read; the blob's
	// properties and objects are checked as it is read, not kept.
	Image   string
	Version semver.Version
	Release Release
	// ObjectCount is the number of olm.bundle.object properties.
	ObjectCount int
	Deprecation *Deprecation
	Source      Source
	// HasBlob is false for a channel entry without a valid olm.bundle
	// blob; Invalid is true when the blob exists but broke a load rule.
	HasBlob, Invalid bool
	// LegacyDeprecated is true when the blob has the olm.deprecated
	// property (catalogs migrated from sqlite, where `opm index
	// deprecatetruncate` set it): OLM v0's resolver never installs such a
	// bundle. Deprecation is the olm.deprecations blob's message, which
	// OLM only reports.
	LegacyDeprecated bool
}

// Deprecation is a deprecation message for a package, channel or bundle.
type Deprecation struct {
	Message string `json:"message"`
}

// Head returns the channel head: the one bundle that no replaces or skips
// of the channel points at (skipRange does not count).
func (c *Channel) Head() (*Bundle, error) {
	incoming := map[string]int{}
	for _, b := range c.Bundles {
		if b.Replaces != "" {
			incoming[b.Replaces]++
		}
		for _, s := range b.Skips {
			incoming[s]++
		}
	}
	var heads []string
	for _, b := range c.Bundles {
		if _, ok := incoming[b.Name]; !ok {
			heads = append(heads, b.Name)
		}
	}
	switch len(heads) {
	case 0:
		return nil, fmt.Errorf("no channel head found in graph")
	case 1:
		return c.Bundles[heads[0]], nil
	}
	sortStrings(heads)
	return nil, fmt.Errorf("multiple channel heads found in graph: %s", joinComma(heads))
}
