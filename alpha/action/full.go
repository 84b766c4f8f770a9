package action

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/fastopm/fastopm/pkg/version"
)

// The lean and the full opm.
//
// Every process of a catalog image runs `opm serve`, and CI runs `opm
// validate` on every change: Go runs the initializer of every package a
// binary links, whatever the command, so what those two commands cost at
// start follows everything opm links. The packages that only some
// commands need (Kubernetes' types and client-go, CEL, crdify, the SAT
// solver, the web page's Markdown and metrics) are therefore kept out of
// the lean opm, built with the opm_lean build tag (make build's bin/opm):
// its command line runs opm-full, the same program built without the tag
// (bin/opm-full), for the commands that need them. The files of this
// package that use those packages carry `//go:build !opm_lean`; a build
// without the tag (go test, go install) is one complete opm.

// Lean says whether this is the lean opm.
const Lean = lean

// ErrNeedsFull is returned by the lean opm's actions that need a package
// only opm-full links.
var ErrNeedsFull = errors.New("this needs opm-full, the opm that links every package (this opm is the lean one)")

// The environment of a run of opm-full.
const (
	// EnvFull names the opm-full program to run, in place of the one
	// beside opm or on the PATH.
	EnvFull = "OPM_FULL"
	// EnvFullRanFrom is set, to the lean opm's path, in the environment of
	// the opm-full it runs: an opm-full that turns out to be a lean opm too
	// stops there rather than running itself. opm-full removes it (and
	// EnvFullBuild) from its environment when it starts.
	EnvFullRanFrom = "OPM_FULL_RAN_FROM"
	// EnvFullBuild is set, to the lean opm's Build, in the environment of
	// the opm-full it runs, which warns when it is another build.
	EnvFullBuild = "OPM_FULL_BUILD"
)

// Build names this opm's build: its version and commit.
func Build() string { return version.Version + " " + version.GitCommit }

// FullProgram is opm-full's file name.
var FullProgram = "opm-full" + exeSuffix()

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// FindFull locates opm-full: $OPM_FULL, then beside the running opm
// (self; the directory of the executable file, symbolic links resolved),
// then on the PATH. It must be an executable file.
func FindFull(self string) (string, error) {
	if p := os.Getenv(EnvFull); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvFull, p, err)
		}
		return p, nil
	}
	if self != "" {
		p := filepath.Join(filepath.Dir(self), FullProgram)
		if executable(p) == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(FullProgram); err == nil {
		return p, nil
	}
	return "", errors.New(FullProgram + " not found: put it beside opm or on the PATH (make build builds bin/" + FullProgram + "), or set " + EnvFull + " to its path; " +
		"an opm built without the opm_lean tag (go install github.com/fastopm/fastopm/cmd/opm@VERSION) runs every command itself")
}

// executable says why p is not an executable file, or returns nil.
func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return errors.New("not a file")
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}
