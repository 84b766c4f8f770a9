// Command cligolden records the commands and flags an opm binary's help
// shows (internal/clitree), with HELP_ALPHA=true, for the test that checks
// ours has every one of upstream's (TestCommandsAndFlagsOfUpstream in
// cmd/opm/internal/cli):
//
//	go run ./hack/cligolden -opm /tmp/upstream/bin/opm > testdata/cli-golden/upstream.txt
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/fastopm/fastopm/internal/clitree"
)

func main() {
	opm := flag.String("opm", "/tmp/upstream/bin/opm", "the opm binary to record")
	flag.Parse()
	lines, err := clitree.Walk("opm", func(path []string) ([]byte, error) {
		cmd := exec.Command(*opm, append(path, "--help")...)
		cmd.Env = append(os.Environ(), "HELP_ALPHA=true")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%w: %s", err, stderr.Bytes())
		}
		return out, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}
