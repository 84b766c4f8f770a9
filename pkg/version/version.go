// Package version reports the build's version, commit and date, which the
// Makefile sets with -ldflags -X.
package version

import (
	"fmt"
	"runtime"
)

// Set at build time by the Makefile.
var (
	Version   = "v0.0.0-dev"
	GitCommit = "unknown"
	BuildDate = "unknown"
)

// String renders the version the way upstream `opm version` prints it, so
// scripts that parse it keep working.
func String() string {
	return fmt.Sprintf("Version: version.Version{OpmVersion:%q, GitCommit:%q, BuildDate:%q, GoOs:%q, GoArch:%q}",
		Version, GitCommit, BuildDate, runtime.GOOS, runtime.GOARCH)
}
