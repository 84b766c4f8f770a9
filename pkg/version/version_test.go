package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "-buildmode", Value: "exe"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "4f9d6f22c0ffee00112233445566778899aabbcc"},
		{Key: "vcs.time", Value: "2025-06-30T12:34:56Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	for _, tc := range []struct {
		name                string
		main                string
		settings            []debug.BuildSetting
		set                 [3]string // as -ldflags left them
		version, commit, at string
	}{
		{"go build in a clone (Go stamps a pseudo-version and the VCS)", "v0.0.0-20250630123456-4f9d6f22c0ff", vcs, [3]string{unsetVersion, unset, unset},
			"v0.0.0-20250630123456-4f9d6f22c0ff", "4f9d6f22c0ffee00112233445566778899aabbcc", "2025-06-30T12:34:56Z"},
		{"go build of a tagged, modified tree", "v1.2.3+dirty", vcs, [3]string{unsetVersion, unset, unset},
			"v1.2.3+dirty", "4f9d6f22c0ffee00112233445566778899aabbcc", "2025-06-30T12:34:56Z"},
		{"go install module@v1.2.3", "v1.2.3", nil, [3]string{unsetVersion, unset, unset},
			"v1.2.3", unset, unset},
		{"go install module@commit (a pseudo-version)", "v1.2.4-0.20250630123456-4f9d6f22c0ff", nil, [3]string{unsetVersion, unset, unset},
			"v1.2.4-0.20250630123456-4f9d6f22c0ff", "4f9d6f22c0ff", "2025-06-30T12:34:56Z"},
		{"pre-release pseudo-version", "v1.3.0-rc.1.0.20250630123456-4f9d6f22c0ff+incompatible", nil, [3]string{unsetVersion, unset, unset},
			"v1.3.0-rc.1.0.20250630123456-4f9d6f22c0ff+incompatible", "4f9d6f22c0ff", "2025-06-30T12:34:56Z"},
		{"a release candidate is no pseudo-version", "v1.3.0-rc.1", nil, [3]string{unsetVersion, unset, unset},
			"v1.3.0-rc.1", unset, unset},
		{"go build without VCS information (-buildvcs=false, a worktree, go test)", "(devel)", nil, [3]string{unsetVersion, unset, unset},
			unsetVersion, unset, unset},
		{"make build: -ldflags win", "v0.0.0-20250630123456-4f9d6f22c0ff", vcs, [3]string{"v0.3.0-12-gabcdef0", "abcdef0123", "2025-07-01T00:00:00Z"},
			"v0.3.0-12-gabcdef0", "abcdef0123", "2025-07-01T00:00:00Z"},
		{"only the version set by -ldflags", "(devel)", vcs, [3]string{"v0.3.0", unset, unset},
			"v0.3.0", "4f9d6f22c0ffee00112233445566778899aabbcc", "2025-06-30T12:34:56Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/fastopm/fastopm", Version: tc.main}, Settings: tc.settings}
			v, c, d := fromBuildInfo(info, tc.set[0], tc.set[1], tc.set[2])
			if v != tc.version || c != tc.commit || d != tc.at {
				t.Errorf("got %q %q %q, want %q %q %q", v, c, d, tc.version, tc.commit, tc.at)
			}
		})
	}
}

// TestString keeps upstream's format of `opm version`.
func TestString(t *testing.T) {
	s := String()
	if !strings.HasPrefix(s, `Version: version.Version{OpmVersion:"`) || !strings.Contains(s, `", GitCommit:"`) ||
		!strings.Contains(s, `", BuildDate:"`) || !strings.Contains(s, `", GoOs:"`) || !strings.HasSuffix(s, `"}`) {
		t.Errorf("not upstream's format: %s", s)
	}
}
