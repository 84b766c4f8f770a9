package bundle

import (
	"errors"
	"fmt"
	"strings"
)

// The rules a bundle directory can break. Every error Render returns wraps
// exactly one of them (test with errors.Is) in an *Error that names the
// bundle directory and, where there is one, the file.
var (
	// ErrNotBundle: the directory lacks a readable manifests/ or metadata/
	// directory.
	ErrNotBundle = errors.New("not a registry+v1 bundle directory")
	// ErrNoObjects: manifests/ holds no decodable object.
	ErrNoObjects = errors.New("no bundle objects found")
	// ErrNoCSV: no object in manifests/ is a ClusterServiceVersion.
	ErrNoCSV = errors.New("no ClusterServiceVersion in bundle")
	// ErrMultipleCSVs: more than one ClusterServiceVersion (upstream keeps
	// the first and silently drops the others; see Options.Lenient).
	ErrMultipleCSVs = errors.New("more than one ClusterServiceVersion in bundle")
	// ErrInvalidCSV: the ClusterServiceVersion does not decode.
	ErrInvalidCSV = errors.New("invalid ClusterServiceVersion")
	// ErrInvalidCRD: a CustomResourceDefinition does not decode.
	ErrInvalidCRD = errors.New("invalid CustomResourceDefinition")
	// ErrOwnedCRDMissing: the CSV owns a CRD (name, version, kind) that no
	// CustomResourceDefinition of the bundle provides.
	ErrOwnedCRDMissing = errors.New("owned CRD not provided by the bundle")
	// ErrOwnedVersionNotServed: an owned CRD version is defined by the
	// bundle's CRD but not served (see Options.Lenient).
	ErrOwnedVersionNotServed = errors.New("owned CRD version not served")
	// ErrNoAnnotations: metadata/ holds no file with bundle annotations.
	ErrNoAnnotations = errors.New("no annotations file")
	// ErrNoPackage: the annotations name no package (see Options.Lenient).
	ErrNoPackage = errors.New("no package in annotations")
	// ErrNoChannels: the annotations name no channel (see Options.Lenient).
	ErrNoChannels = errors.New("no channel in annotations")
	// ErrNoCSVName: the ClusterServiceVersion has no metadata.name (see
	// Options.Lenient).
	ErrNoCSVName = errors.New("ClusterServiceVersion has no name")
	// ErrInvalidProperty: a property (from properties.yaml or the CSV's
	// olm.properties annotation) or a dependency does not parse for its
	// type.
	ErrInvalidProperty = errors.New("invalid property")
	// ErrImageTemplate: the image reference template failed.
	ErrImageTemplate = errors.New("image reference template failed")
)

// Error is an error about one bundle directory: the rule broken (one of
// the Err* values), where, and the cause.
type Error struct {
	Dir    string // the bundle directory as given to Render
	File   string // slash-separated path inside Dir; empty for the whole bundle
	Rule   error  // one of the Err* values
	Detail string // what exactly is wrong; may be empty
	Err    error  // the underlying error; may be nil
}

// Error formats the error as "bundle DIR: FILE: RULE: DETAIL: ERR".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bundle %q", e.Dir)
	if e.File != "" {
		b.WriteString(": ")
		b.WriteString(e.File)
	}
	b.WriteString(": ")
	b.WriteString(e.Rule.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the rule and the cause, so errors.Is and errors.As see
// both.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Rule}
	}
	return []error{e.Rule, e.Err}
}

// Warning is something about a bundle that upstream opm accepts silently
// (or only logs) but that is probably a mistake.
type Warning struct {
	Dir     string // the bundle directory as given to Render
	File    string // slash-separated path inside Dir; empty for the whole bundle
	Message string
}

// String formats the warning as "bundle DIR: FILE: MESSAGE".
func (w Warning) String() string {
	if w.File == "" {
		return fmt.Sprintf("bundle %q: %s", w.Dir, w.Message)
	}
	return fmt.Sprintf("bundle %q: %s: %s", w.Dir, w.File, w.Message)
}
