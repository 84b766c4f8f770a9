package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/kubetest"
	"github.com/fastopm/fastopm/internal/shapecat"
	"github.com/fastopm/fastopm/internal/testutil"
)

// TestDocExamples runs the shell examples of README.md and docs/*.md as
// a reader would, from the repository's root, and compares what each
// prints with what the page shows. docs/tests.md ("The documentation's
// examples") gives the rules for the pages; in short:
//
// An example is a fenced block (```, ```sh, ```console, ```shell,
// ```bash) holding opm commands: either a session, whose commands start
// with "$ " and are followed by what they print (stdout and stderr as a
// terminal shows them, in the order written), or a script, one command a
// line, printing nothing the page shows (each must exit 0); a block whose
// first line is not a command is output, not a script. A line ending in
// "\" goes on on the next. The blocks of one page are one shell session,
// in order: the working directory and the files written carry over; each
// page starts again at the repository's root. Examples write under /tmp:
// one that writes into the clone (its root, testdata/, testdata/docs/)
// fails the test, and what it wrote is removed.
//
// Commands run in process: opm (also written bin/opm and go run
// ./cmd/opm) through Main; cd, cp -r, mkdir -p, cat, echo and go run
// ./hack/shapecat as the shell and the program would. Pipes between
// them and "> FILE" work; a pipe into another program runs the opm side
// only (its output is checked to be there). Commands of other programs
// (make, docker, kubectl, go build, curl, the project's scripts) are not
// run, and listed. A line with a placeholder (INDEX, DIR, [-o
// json|yaml], ...) is a synopsis, not a command.
//
// A block marked on the line before its fence with
// "<!-- example: not run: REASON -->" (a cluster, the network) is not
// run, nor under the race suite one marked "<!-- example: corpus only:
// REASON -->" (costly by design; the corpus run runs it). The test ends
// by logging every command it did not run, by page, line and reason.
//
// What must vary is replaced, in the commands and back in the output,
// and nothing else is normalized:
//   - /tmp/... is a directory of the test's own, and ~ is
//     /home/me in it (~/.kube/config points at the in-process API server
//     of internal/kubetest, for opm alpha bundle extract);
//   - /configs, the catalog directory of a catalog image, is
//     testdata/example;
//   - quay.io/example/... is an in-process registry (internal/imagetest)
//     holding the images listed in testdata/docs/README.md, in commands
//     and in the files of testdata/ they read (read as copies);
//   - opm serve listens on a port of its own choosing (-p 0, --http-addr
//     :0), written back as the example's port; it is checked with
//     gRPC's health check (what grpc_health_probe asks; the probe's own
//     line is that check), and over HTTP with /healthz, then stopped at
//     the end of its block; its output is what it printed until then;
//   - $(git log -1 --format=%ct) is 1700000000.
//
// In the printed output a line "..." or "…" stands for any number of
// lines and "…" within a line for any text in it (times, digests, left
// out to keep the page short); spaces at the end of a line are not
// compared; everything else must be equal. When an example's output
// differs, the failure shows the difference and the whole output, to
// paste into the page.
func TestDocExamples(t *testing.T) {
	// Graphviz first: isolating the credentials moves HOME, and with it
	// the go build cache UseGraphviz builds with.
	testutil.UseGraphviz(t)
	isolateCredentials(t)
	clearExtractEnv(t)
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	// generate image without --base-image puts the running opm in the
	// image: here a stand-in (the test binary is tens of MB).
	bin := t.TempDir()
	for _, f := range []string{"opm", "grpc_health_probe"} {
		if err := os.WriteFile(filepath.Join(bin, f), []byte("#!/bin/sh\n# a stand-in for "+f+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opmBinaryForImages = filepath.Join(bin, "opm")
	t.Cleanup(func() { opmBinaryForImages = "" })

	pages := append([]string{"README.md"}, globDocs(t, root)...)
	var skipped []string
	for _, page := range pages {
		blocks := parseDocBlocks(t, filepath.Join(root, page), page)
		t.Run(strings.TrimPrefix(page, "docs/"), func(t *testing.T) {
			sh := newDocShell(t, root)
			for _, b := range blocks {
				t.Run(strconv.Itoa(b.line), func(t *testing.T) {
					skipped = append(skipped, sh.runBlock(t, b)...)
				})
				sh.stopServers(t)
			}
			sh.checkClone(t)
		})
	}
	// What was not run, by name: a reader of -v sees what the pages
	// show that this test does not check.
	if len(skipped) > 0 {
		t.Logf("not run (%d commands):\n%s", len(skipped), strings.Join(skipped, "\n"))
	}
}

// docMarker is the HTML comment, on the line before a block's fence,
// that says why the block's commands are not run: "not run" (a
// cluster, the network, a program the test does not have) or "corpus
// only" (costly by design: the corpus run runs it).
var docMarker = regexp.MustCompile(`^<!-- example: (not run|corpus only): (.+?) -->$`)

func globDocs(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(f, root+string(filepath.Separator))))
	}
	slices.Sort(out)
	return out
}

// docBlock is a fenced block of a page with at least one command.
type docBlock struct {
	page    string
	line    int // of the block's first line
	session bool
	cmds    []docCmd
	skip    string // "not run" or "corpus only", from the block's marker
	why     string // the marker's reason
}

type docCmd struct {
	line int
	text string   // the command, continuation lines joined
	want []string // what it prints (a session's command)
}

var docFence = regexp.MustCompile("^```(sh|console|shell|bash)?\\s*$")

// parseDocBlocks reads the blocks of a page that hold commands.
func parseDocBlocks(t *testing.T, path, page string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		shell := docFence.MatchString(lines[i])
		var m []string
		if i > 0 {
			m = docMarker.FindStringSubmatch(strings.TrimSpace(lines[i-1]))
		}
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		var b *docBlock
		if shell {
			b = parseDocBlock(page, i+2, lines[i+1:j])
		}
		switch {
		case b != nil && m != nil:
			b.skip, b.why = m[1], m[2]
			fallthrough
		case b != nil:
			blocks = append(blocks, *b)
		case m != nil:
			t.Errorf("%s:%d: %q marks a block with no opm command", page, i, lines[i-1])
		}
		i = j
	}
	return blocks
}

func parseDocBlock(page string, first int, lines []string) *docBlock {
	b := &docBlock{page: page, line: first}
	for _, l := range lines {
		if strings.HasPrefix(l, "$ ") {
			b.session = true
		}
	}
	if !b.session && !startsScript(lines) {
		return nil // output, or a file's text
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if b.session && !strings.HasPrefix(l, "$ ") {
			if len(b.cmds) > 0 {
				c := &b.cmds[len(b.cmds)-1]
				c.want = append(c.want, l)
			}
			continue
		}
		if !b.session && (strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		c := docCmd{line: first + i, text: strings.TrimPrefix(l, "$ ")}
		for strings.HasSuffix(c.text, "\\") && i+1 < len(lines) {
			i++
			c.text = strings.TrimSuffix(c.text, "\\") + " " + strings.TrimSpace(lines[i])
		}
		b.cmds = append(b.cmds, c)
	}
	for i := range b.cmds {
		w := b.cmds[i].want
		for len(w) > 0 && strings.TrimSpace(w[len(w)-1]) == "" {
			w = w[:len(w)-1]
		}
		b.cmds[i].want = w
	}
	for _, c := range b.cmds {
		if words, err := shellWords(c.text); err == nil && len(words) > 0 && isOpm(stripEnv(words)) != nil {
			return b
		}
	}
	return nil
}

// commandName is the first word of a script's line: a program's name.
var commandName = regexp.MustCompile(`^[a-z][a-z0-9_./-]*$`)

// startsScript tells a script from output: its first line (blank lines
// and comments aside) starts with a program's name, in lower case, or
// with VAR=value.
func startsScript(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		words, err := shellWords(l)
		if err != nil {
			return false
		}
		words = stripEnv(words)
		return len(words) > 0 && commandName.MatchString(words[0])
	}
	return false
}

// ---- the shell ----------------------------------------------------------

// shellWords splits a command into words and the operators | and >, as
// sh does for the commands of the pages: quotes, backslashes, $(...) kept
// whole, and # starting a comment.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false // a word has started
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !in:
			flush()
			return words, nil
		case c == '|' || c == '>':
			flush()
			words = append(words, string(c))
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			in = true
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("unterminated quote in %q", s)
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == '$' && strings.HasPrefix(s[i:], "$("):
			j := strings.IndexByte(s[i:], ')')
			if j < 0 {
				return nil, fmt.Errorf("unterminated $( in %q", s)
			}
			cur.WriteString(s[i : i+j+1])
			in = true
			i += j
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	return words, nil
}

var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

func stripEnv(words []string) []string {
	for len(words) > 0 && envAssign.MatchString(words[0]) {
		words = words[1:]
	}
	return words
}

// isOpm returns the arguments of an opm command, or nil.
func isOpm(words []string) []string {
	switch {
	case len(words) > 0 && (words[0] == "opm" || words[0] == "bin/opm"):
		return words[1:]
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/opm":
		return words[3:]
	}
	return nil
}

// placeholder is a word of a synopsis: INDEX, DIR/, PATH..., [-o X], ...
var placeholder = regexp.MustCompile(`(^|\s)([A-Z][A-Z_]{1,}[A-Z](\.\.\.)?/?|\[\S*|\.\.\.|…)(\s|$)`)

// isSynopsis tells a synopsis (a placeholder among its words, not in
// its comment) from a command.
func isSynopsis(line string) bool {
	words, err := shellWords(line)
	return err == nil && placeholder.MatchString(strings.Join(words, " "))
}

type docShell struct {
	t       *testing.T // the block's test
	pt      *testing.T // the page's: what lives as long as the page
	root    string     // the repository
	scratch string     // the test's directory: /tmp and ~ are in it
	before  map[string]bool
	tmp     string // /tmp
	home    string // ~
	lastRC  int

	registry string // host:port of the in-process registry, once started
	kube     bool   // ~/.kube/config written

	servers []*docServer
	ports   map[string]string // actual port → the example's
}

func newDocShell(t *testing.T, root string) *docShell {
	s := &docShell{t: t, pt: t, root: root, scratch: t.TempDir(), ports: map[string]string{}}
	s.tmp = filepath.Join(s.scratch, "tmp")
	s.home = filepath.Join(s.scratch, "home", "me")
	for _, d := range []string{s.tmp, s.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.before = s.listClone()
	t.Chdir(root)
	return s
}

// cloneDirs are the directories of the clone whose entries are watched:
// what an example writes with a relative path or beside a catalog of
// testdata lands there.
var cloneDirs = []string{".", "testdata", "testdata/docs"}

func (s *docShell) listClone() map[string]bool {
	names := map[string]bool{}
	for _, d := range cloneDirs {
		entries, err := os.ReadDir(filepath.Join(s.root, d))
		if err != nil {
			s.pt.Fatal(err)
		}
		for _, e := range entries {
			names[filepath.Join(d, e.Name())] = true
		}
	}
	return names
}

// checkClone fails the test for anything the page's examples wrote into
// the clone (rather than under /tmp), and removes it.
func (s *docShell) checkClone(t *testing.T) {
	t.Helper()
	for name := range s.listClone() {
		if !s.before[name] {
			t.Errorf("an example wrote %s into the clone: examples write under /tmp", name)
			if err := os.RemoveAll(filepath.Join(s.root, name)); err != nil {
				t.Error(err)
			}
		}
	}
}

// mapArg turns a path or reference of a page into the test's.
func (s *docShell) mapArg(a string) string {
	if a == "/configs" {
		return "testdata/example"
	}
	a = tmpPath.ReplaceAllString(a, "${1}"+s.tmp+"${2}")
	if a == "~" || strings.HasPrefix(a, "~/") {
		a = s.home + a[1:]
	}
	if strings.Contains(a, "quay.io/example/") {
		s.startRegistry()
		a = strings.ReplaceAll(a, "quay.io/example/", s.registry+"/example/")
	}
	// A file of testdata that names images of quay.io/example (a
	// template) is read as a copy naming the in-process registry's.
	if strings.HasPrefix(a, "testdata/") {
		if b, err := os.ReadFile(filepath.Join(s.root, a)); err == nil && bytes.Contains(b, []byte("quay.io/example/")) {
			s.startRegistry()
			c := filepath.Join(s.scratch, "files", a)
			b = bytes.ReplaceAll(b, []byte("quay.io/example/"), []byte(s.registry+"/example/"))
			if err := os.MkdirAll(filepath.Dir(c), 0o755); err != nil {
				s.pt.Fatal(err)
			}
			if err := os.WriteFile(c, b, 0o644); err != nil {
				s.pt.Fatal(err)
			}
			a = c
		}
	}
	if strings.HasPrefix(a, s.home+"/.kube/") {
		s.startKube()
	}
	return a
}

// tmpPath is /tmp at the start of a word or of a flag's value.
var tmpPath = regexp.MustCompile(`(^|[=:])/tmp(/|$)`)

// normalize turns what a command printed back into the page's terms.
func (s *docShell) normalize(out string) string {
	out = strings.ReplaceAll(out, filepath.Join(s.scratch, "files")+"/", "")
	out = strings.ReplaceAll(out, s.tmp, "/tmp")
	out = strings.ReplaceAll(out, s.home, "/home/me")
	out = strings.ReplaceAll(out, s.root+"/", "")
	if s.registry != "" {
		out = strings.ReplaceAll(out, s.registry, "quay.io")
	}
	for actual, doc := range s.ports {
		out = regexp.MustCompile(`([:=])`+actual+`\b`).ReplaceAllString(out, "${1}"+doc)
	}
	return out
}

// startRegistry starts the in-process registry with the images the
// pages name (testdata/docs/README.md).
func (s *docShell) startRegistry() {
	if s.registry != "" {
		return
	}
	t := s.pt
	s.registry = imagetest.Registry(t)
	td := filepath.Join(s.root, "testdata")
	etcd := imagetest.BundleImage(t, filepath.Join(td, "docs", "etcd", "0.9.4"))
	imagetest.Push(t, s.registry+"/example/etcd-bundle:v0.9.4", etcd)
	cat := imagetest.Image(t, map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
		imagetest.LayerFromDir(t, filepath.Join(td, "docs", "catalog"), "configs"))
	for _, tag := range []string{"v1", "latest"} {
		imagetest.Push(t, s.registry+"/example/catalog:"+tag, cat)
	}
	for _, v := range []string{"1.5.1", "1.5.2"} {
		imagetest.Push(t, s.registry+"/example/microcks-bundle:"+v, imagetest.BundleImage(t, filepath.Join(td, "bundles", "microcks-"+v)))
	}
	imagetest.Push(t, s.registry+"/example/opm:v1", imagetest.Image(t, nil, imagetest.LayerFromFiles(t, map[string]string{"bin/opm": "a stand-in for opm"})))
}

// startKube writes ~/.kube/config for an in-process API server.
func (s *docShell) startKube() {
	if s.kube {
		return
	}
	s.kube = true
	srv := httptest.NewServer(kubetest.New())
	s.pt.Cleanup(srv.Close)
	kc := filepath.Join(s.home, ".kube", "config")
	if err := os.MkdirAll(filepath.Dir(kc), 0o755); err != nil {
		s.pt.Fatal(err)
	}
	if err := os.WriteFile(kc, kubetest.Kubeconfig(srv.URL, nil, ""), 0o600); err != nil {
		s.pt.Fatal(err)
	}
}

// runBlock runs a block's commands and returns those it did not run,
// by page, line and command, with the reason.
func (s *docShell) runBlock(t *testing.T, b docBlock) (skipped []string) {
	s.t = t
	for _, c := range b.cmds {
		name := fmt.Sprintf("%s:%d: %s", b.page, c.line, c.text)
		if b.skip == "not run" || b.skip == "corpus only" && !testutil.Corpus {
			skipped = append(skipped, name+" ("+b.skip+": "+b.why+")")
			continue
		}
		if !b.session && isSynopsis(c.text) {
			skipped = append(skipped, name+" (a synopsis)")
			continue
		}
		var term bytes.Buffer
		ran, err := s.run(c.text, &term)
		if err != nil {
			t.Errorf("%s:%d: %s: %v", b.page, c.line, c.text, err)
			continue
		}
		if !ran {
			skipped = append(skipped, name+" (another program)")
			continue
		}
		got := s.normalize(term.String())
		if !b.session {
			if s.lastRC != 0 {
				t.Errorf("%s:%d: %s\nexit %d:\n%s", b.page, c.line, c.text, s.lastRC, got)
			}
			continue
		}
		if !outputMatches(c.want, got) {
			t.Errorf("%s:%d: $ %s\nprints what the page does not show (- page, + got):\n%s\nthe whole output, to paste into the page:\n%s", b.page, c.line, c.text, lineDiff(c.want, splitLines(got)), got)
		}
	}
	return skipped
}

// run runs one command line, writing what the terminal would show into
// term. ran is false for a command of another program.
func (s *docShell) run(line string, term *bytes.Buffer) (ran bool, err error) {
	words, err := shellWords(line)
	if err != nil {
		return false, err
	}
	// Split into pipeline stages and an output redirection.
	var stages [][]string
	var redirect string
	cur := []string{}
	for i := 0; i < len(words); i++ {
		switch words[i] {
		case "|":
			stages = append(stages, cur)
			cur = []string{}
		case ">":
			if i+1 >= len(words) {
				return false, errors.New("> without a file")
			}
			redirect = s.mapArg(words[i+1])
			i++
		default:
			cur = append(cur, words[i])
		}
	}
	stages = append(stages, cur)

	var in io.Reader = strings.NewReader("")
	for i, st := range stages {
		var out io.Writer = term
		var buf bytes.Buffer
		last := i == len(stages)-1
		switch {
		case !last:
			out = &buf
		case redirect != "":
			out = &buf
		}
		env := map[string]string{}
		for len(st) > 0 && envAssign.MatchString(st[0]) {
			k, v, _ := strings.Cut(st[0], "=")
			if v == "$(git log -1 --format=%ct)" {
				v = "1700000000"
			}
			env[k] = s.mapArg(v)
			st = st[1:]
		}
		if len(st) == 0 {
			return false, errors.New("no command")
		}
		ok, err := s.runOne(st, env, in, out, term)
		if err != nil {
			return false, err
		}
		if !ok {
			if i == 0 {
				return false, nil // another program's command
			}
			// A pipe into another program: the opm side printed something.
			if in.(*bytes.Buffer).Len() == 0 {
				return true, fmt.Errorf("%s: nothing for %s to read", strings.Join(stages[0], " "), st[0])
			}
			return true, nil
		}
		if !last {
			in = &buf
			continue
		}
		if redirect != "" {
			if err := os.WriteFile(redirect, buf.Bytes(), 0o644); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// runOne runs a command, false when it is another program's.
func (s *docShell) runOne(words []string, env map[string]string, in io.Reader, out, term io.Writer) (bool, error) {
	for k, v := range env {
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		defer func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		}()
	}
	if args := isOpm(words); args != nil {
		for i := range args {
			args[i] = s.mapArg(args[i])
		}
		if len(args) > 0 && args[0] == "serve" && !slices.Contains(args, "--cache-only") {
			return true, s.serve(args, term)
		}
		s.lastRC = Main(context.Background(), Streams{In: in, Out: out, Err: term}, args)
		return true, nil
	}
	prevRC := s.lastRC
	s.lastRC = 0
	arg := func(i int) string { return s.mapArg(words[i]) }
	switch {
	case words[0] == "cd" && len(words) == 2:
		return true, os.Chdir(arg(1))
	case words[0] == "mkdir" && len(words) > 2 && words[1] == "-p":
		for i := 2; i < len(words); i++ {
			if err := os.MkdirAll(arg(i), 0o755); err != nil {
				return true, err
			}
		}
		return true, nil
	case words[0] == "cp" && len(words) == 4 && words[1] == "-r":
		src, dst := arg(2), arg(3)
		if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
			dst = filepath.Join(dst, filepath.Base(src))
		}
		return true, os.CopyFS(dst, os.DirFS(src))
	case words[0] == "cat":
		for i := 1; i < len(words); i++ {
			b, err := os.ReadFile(arg(i))
			if err != nil {
				return true, err
			}
			out.Write(b)
		}
		return true, nil
	case words[0] == "echo":
		var a []string
		for _, w := range words[1:] {
			if w == "$?" {
				w = strconv.Itoa(prevRC)
			}
			a = append(a, w)
		}
		fmt.Fprintln(out, strings.Join(a, " "))
		return true, nil
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./hack/shapecat":
		return true, s.shapecat(words[3:])
	case words[0] == "bin/grpc_health_probe" || words[0] == "grpc_health_probe":
		return true, s.probe(words[1:])
	}
	return false, nil
}

// shapecat is `go run ./hack/shapecat -out DIR [-n N] SHAPE...`.
func (s *docShell) shapecat(args []string) error {
	var out string
	n := 0
	var names []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-out":
			i++
			out = s.mapArg(args[i])
		case "-n":
			i++
			v, err := strconv.Atoi(args[i])
			if err != nil {
				return err
			}
			n = v
		default:
			names = append(names, args[i])
		}
	}
	for _, name := range names {
		sh, ok := shapecat.LookupAny(name)
		if !ok {
			return fmt.Errorf("no shape %q", name)
		}
		file := filepath.Join(out, name, filepath.FromSlash(shapecat.File))
		if _, err := os.Stat(file); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		if err := sh.Write(f, n); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// ---- opm serve ----------------------------------------------------------

type docServer struct {
	cancel context.CancelFunc
	done   chan int
	grpc   string // the example's port
	port   string // the actual one
}

// lockedBuffer is a terminal two goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var (
	servingRegistry = regexp.MustCompile(`msg="serving registry".* port=(\d+)`)
	servingHTTP     = regexp.MustCompile(`msg="serving HTTP".* address=(\S+) scheme=(\S+)`)
)

// serve runs opm serve on ports of its own, waits until it serves,
// checks it as its clients would and leaves it running until the end
// of the block; term gets what it printed until then.
func (s *docShell) serve(args []string, term io.Writer) error {
	port, httpAddr := "50051", ""
	var a []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-p" || args[i] == "--port":
			port = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--port="):
			port = strings.TrimPrefix(args[i], "--port=")
		case args[i] == "--http-addr":
			httpAddr = args[i+1]
			a = append(a, args[i], ":0")
			i++
		default:
			a = append(a, args[i])
		}
	}
	a = append(a, "-p", "0", "-t", "")
	ctx, cancel := context.WithCancel(context.Background())
	var logs lockedBuffer
	srv := &docServer{cancel: cancel, done: make(chan int, 1), grpc: port}
	go func() { srv.done <- Main(ctx, Streams{In: strings.NewReader(""), Out: &logs, Err: &logs}, a) }()
	s.servers = append(s.servers, srv)
	// Wait for the log lines that say it serves (a hang guard only).
	deadline := time.Now().Add(5 * time.Minute)
	for {
		out := logs.String()
		m := servingRegistry.FindStringSubmatch(out)
		h := servingHTTP.FindStringSubmatch(out)
		if m != nil && (httpAddr == "" || h != nil) {
			srv.port = m[1]
			s.ports[m[1]] = port
			if err := healthCheck("127.0.0.1:" + m[1]); err != nil {
				return err
			}
			if h != nil {
				hp := h[1][strings.LastIndex(h[1], ":")+1:]
				dp := httpAddr[strings.LastIndex(httpAddr, ":")+1:]
				s.ports[hp] = dp
				if err := httpCheck(h[2] + "://127.0.0.1:" + hp + "/healthz"); err != nil {
					return err
				}
			}
			io.WriteString(term, out)
			return nil
		}
		select {
		case rc := <-srv.done:
			srv.done <- rc
			io.WriteString(term, logs.String())
			s.lastRC = rc
			return fmt.Errorf("opm serve exited %d before serving", rc)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("opm serve: not serving after 5 minutes")
		}
	}
}

// probe is grpc_health_probe -addr HOST:PORT against a server started
// above, by its example's port.
func (s *docShell) probe(args []string) error {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-addr" {
			_, port, _ := strings.Cut(args[i+1], ":")
			for j := len(s.servers) - 1; j >= 0; j-- {
				if s.servers[j].grpc == port && s.servers[j].port != "" {
					return healthCheck("127.0.0.1:" + s.servers[j].port)
				}
			}
			return fmt.Errorf("grpc_health_probe: no server of the examples above listens on port %s", port)
		}
	}
	return errors.New("grpc_health_probe without -addr")
}

// stopServers stops the servers of a block; t is the page's test (the
// block's has ended).
func (s *docShell) stopServers(t *testing.T) {
	for _, srv := range s.servers {
		srv.cancel()
		// One that exited before serving has been reported already.
		if rc := <-srv.done; rc != 0 && srv.port != "" {
			t.Errorf("opm serve exited %d when stopped", rc)
		}
	}
	s.servers = nil
}

func healthCheck(addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fmt.Errorf("health check of %s: %w", addr, err)
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health check of %s: %v", addr, resp.Status)
	}
	return nil
}

func httpCheck(u string) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Minute}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return nil
}

// ---- comparing ----------------------------------------------------------

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// outputMatches compares what a command printed with the page, "..." and
// "…" lines matching any lines and "…" within a line any text; spaces at
// the end of a line are not compared (editors trim them).
func outputMatches(want []string, got string) bool {
	var re strings.Builder
	re.WriteString(`\A`)
	for _, w := range want {
		w = strings.TrimRight(w, " \t")
		if t := strings.TrimSpace(w); t == "..." || t == "…" {
			re.WriteString(`(?:[^\n]*\n)*?`)
			continue
		}
		parts := strings.Split(w, "…")
		for i, p := range parts {
			if i > 0 {
				re.WriteString(`[^\n]*?`)
			}
			re.WriteString(regexp.QuoteMeta(p))
		}
		re.WriteString(`\n`)
	}
	re.WriteString(`\z`)
	lines := splitLines(got)
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	got = strings.Join(lines, "\n")
	if got != "" {
		got += "\n"
	}
	return regexp.MustCompile(re.String()).MatchString(got)
}

// lineDiff is a line diff of the page's lines and the output's.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var w bytes.Buffer
	bw := bufio.NewWriter(&w)
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			fmt.Fprintf(bw, "  %s\n", a[i])
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(bw, "+ %s\n", b[j])
			j++
		default:
			fmt.Fprintf(bw, "- %s\n", a[i])
			i++
		}
	}
	bw.Flush()
	return w.String()
}
