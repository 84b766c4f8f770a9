package fastopm_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case
	args string
	line int
}

func parseDockerfile(t *testing.T, file string) []instruction {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out  []instruction
		cur  strings.Builder
		from int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			from = n
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: from})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// makeVars reads simple variable assignments (VAR ?= v, VAR := v, VAR = v)
// of a Makefile.
func makeVars(text string) map[string]string {
	vars := map[string]string{}
	re := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(\?=|:=|=)\s*(.*)$`)
	for _, line := range strings.Split(text, "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			if _, set := vars[m[1]]; !set || m[2] != "?=" {
				vars[m[1]] = strings.TrimSpace(m[3])
			}
		}
	}
	return vars
}

// buildOutputs returns the files the Makefile's build target writes: the
// -o arguments of its recipe, variables expanded.
func buildOutputs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	vars := makeVars(text)
	expand := func(s string) string {
		return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(v string) string {
			return vars[v[2:len(v)-1]]
		})
	}
	var outs []string
	inBuild := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "build:"):
			inBuild = true
			continue
		case inBuild && !strings.HasPrefix(line, "\t"):
			inBuild = false
		}
		if !inBuild {
			continue
		}
		if !strings.Contains(line, "CGO_ENABLED=0") {
			t.Errorf("Makefile build recipe line %q does not build a static binary (CGO_ENABLED=0)", strings.TrimSpace(line))
		}
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "-o" {
				outs = append(outs, path.Clean(expand(f[i+1])))
			}
		}
	}
	if len(outs) == 0 {
		t.Fatal("found no -o outputs in the Makefile's build target")
	}
	return outs
}

// TestCatalogDockerfile checks that catalog.Dockerfile builds the opm image
// from what `make build` produces: every file it copies is a build output,
// both binaries land in /bin, it runs as a non-root user on a minimal base,
// and its entrypoint is /bin/opm.
func TestCatalogDockerfile(t *testing.T) {
	t.Parallel()
	outputs := map[string]bool{}
	for _, o := range buildOutputs(t) {
		outputs[o] = true
	}
	var (
		from, user, entrypoint string
		dests                  = map[string]bool{}
	)
	for _, in := range parseDockerfile(t, "catalog.Dockerfile") {
		switch in.cmd {
		case "FROM":
			from = in.args
		case "COPY", "ADD":
			f := strings.Fields(in.args)
			var srcs []string
			for _, a := range f[:len(f)-1] {
				if strings.HasPrefix(a, "--from") {
					t.Errorf("line %d: copies from another stage; the opm image is built from `make build` outputs", in.line)
				}
				if !strings.HasPrefix(a, "--") {
					srcs = append(srcs, a)
				}
			}
			if len(srcs) == 0 {
				t.Errorf("line %d: %s without a source", in.line, in.cmd)
			}
			for _, s := range srcs {
				if !outputs[path.Clean(s)] {
					t.Errorf("line %d: %s %s is not built by `make build` (its outputs: %v)", in.line, in.cmd, s, buildOutputs(t))
				}
			}
			dests[f[len(f)-1]] = true
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	switch {
	case strings.HasPrefix(from, "gcr.io/distroless/static"), from == "scratch":
	default:
		t.Errorf("base image %q, want distroless static or scratch", from)
	}
	for _, d := range []string{"/bin/opm", "/bin/opm-full", "/bin/grpc_health_probe"} {
		if !dests[d] {
			t.Errorf("nothing is copied to %s", d)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if uid == "" || uid == "0" || uid == "root" {
		t.Errorf("USER %q: the image must run as a non-root user", user)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) != 1 || ep[0] != "/bin/opm" {
		t.Errorf(`ENTRYPOINT %s, want ["/bin/opm"]`, entrypoint)
	}

	// /bin/opm is the lean opm, which runs /bin/opm-full for the
	// commands it leaves out (alpha/action/full.go).
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out  string
		lean bool
	}{{"-o $(BIN)/opm ./cmd/opm", true}, {"-o $(BIN)/opm-full ./cmd/opm", false}} {
		found := false
		for _, line := range strings.Split(string(makefile), "\n") {
			if strings.HasSuffix(line, tc.out) {
				found = true
				if lean := strings.Contains(line, "-tags opm_lean"); lean != tc.lean {
					t.Errorf("Makefile %q: built with the opm_lean tag %v, want %v", strings.TrimSpace(line), lean, tc.lean)
				}
			}
		}
		if !found {
			t.Errorf("the Makefile has no line ending %q", tc.out)
		}
	}

	// The build context keeps exactly what the Dockerfile copies.
	ignore, err := os.ReadFile("catalog.Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "!"); ok {
			allowed[path.Clean(p)] = true
		}
	}
	for o := range outputs {
		if !allowed[o] {
			t.Errorf("catalog.Dockerfile.dockerignore excludes %s", o)
		}
	}
}
