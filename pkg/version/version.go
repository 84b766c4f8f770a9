// Package version reports the build's version, commit and date. `make
// build` sets them with -ldflags -X; a plain `go build` or `go install`
// leaves them unset, and they are then read from the build information Go
// embeds in the binary (runtime/debug.ReadBuildInfo): the module's
// version, and the VCS revision and commit time when Go recorded them.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// The defaults, which mean "not set at build time".
const (
	unsetVersion = "v0.0.0-dev"
	unset        = "unknown"
)

// Set at build time by the Makefile; otherwise filled from the build
// information when the program starts.
var (
	Version   = unsetVersion
	GitCommit = unset
	BuildDate = unset
)

func init() {
	info, ok := debug.ReadBuildInfo()
	if ok {
		Version, GitCommit, BuildDate = fromBuildInfo(info, Version, GitCommit, BuildDate)
	}
}

// fromBuildInfo fills the values still at their defaults from info: the
// main module's version (not Go's "(devel)" placeholder), the revision
// ("vcs.revision") and the commit time ("vcs.time", as Go records no build
// time). For a module installed by version, which carries no VCS
// settings, a pseudo-version's revision and time are used
// (v0.0.0-20250102030405-abcdef123456). Values set with -ldflags win.
func fromBuildInfo(info *debug.BuildInfo, version, commit, date string) (string, string, string) {
	if version == unsetVersion {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev, when := settings["vcs.revision"], settings["vcs.time"]
	if rev == "" {
		rev, when = pseudoVersion(info.Main.Version)
	}
	if commit == unset && rev != "" {
		commit = rev
	}
	if date == unset && when != "" {
		date = when
	}
	return version, commit, date
}

// pseudoVersion returns the revision and time a Go pseudo-version names
// (vX.Y.Z-[pre.]yyyymmddhhmmss-abcdefabcdef, optionally +incompatible
// or +dirty), or nothing when v is not one. The time is written as
// `make build` writes the build date.
func pseudoVersion(v string) (rev, when string) {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return "", ""
	}
	rev = v[i+1:]
	rest := v[:i]
	j := strings.LastIndexAny(rest, "-.")
	if j < 0 {
		return "", ""
	}
	t, err := time.Parse("20060102150405", rest[j+1:])
	if err != nil || strings.Trim(rev, "0123456789abcdef") != "" {
		return "", ""
	}
	return rev, t.UTC().Format(time.RFC3339)
}

// String renders the version the way upstream `opm version` prints it, so
// scripts that parse it keep working.
func String() string {
	return fmt.Sprintf("Version: version.Version{OpmVersion:%q, GitCommit:%q, BuildDate:%q, GoOs:%q, GoArch:%q}",
		Version, GitCommit, BuildDate, runtime.GOOS, runtime.GOARCH)
}
