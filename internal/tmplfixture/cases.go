package tmplfixture

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// A Case is one run of opm compared with upstream's.
type Case struct {
	Name string
	// Args are opm's arguments; "{templates}" stands for the directory of
	// the expanded template fixtures, "{testdata}" for testdata/.
	Args []string
	// Stdin, if not empty, is a template fixture (relative to
	// testdata/templates) given on standard input, expanded.
	Stdin string
	// ErrPrefix, if not empty, says that only this much of the error
	// line is compared (the rest comes from the image client, whose words
	// differ).
	ErrPrefix string
}

// Result is what a run gave, normalized.
type Result struct {
	Name   string `json:"name"`
	Exit   int    `json:"exit"`
	Stdout string `json:"stdoutSHA256"`
	Len    int    `json:"stdoutBytes"`
	// Stderr is the first line of standard error, normalized (the
	// registry's address, the fixture directory, log timestamps).
	Stderr string `json:"stderr"`
}

// Cases lists every case: for each template fixture under
// testdataDir/templates, rendering with the type given and detected, from
// a file and from standard input, as JSON and YAML; migrations; command
// line errors; convert-template on every catalog file of testdata.
func Cases(testdataDir string) ([]Case, error) {
	var cs []Case
	add := func(name string, stdin string, args ...string) {
		if args[1] == "render-template" {
			// The test registry speaks plain HTTP.
			args = append(args, "--use-http")
		}
		cs = append(cs, Case{Name: name, Args: args, Stdin: stdin})
	}
	tmplDir := filepath.Join(testdataDir, "templates")
	for _, typ := range []string{"basic", "semver"} {
		files, err := filepath.Glob(filepath.Join(tmplDir, typ, "*"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			rel := typ + "/" + filepath.Base(f)
			p := "{templates}/" + rel
			n := typ + "-" + filepath.Base(f)
			add(n+".type.json", "", "alpha", "render-template", typ, p)
			add(n+".type.yaml", "", "alpha", "render-template", typ, p, "-o", "yaml")
			add(n+".detect.json", "", "alpha", "render-template", p)
			add(n+".detect.yaml", "", "alpha", "render-template", "-o=yaml", p)
			add(n+".stdin-type.json", rel, "alpha", "render-template", typ)
			add(n+".stdin-dash.json", rel, "alpha", "render-template", typ, "-")
			add(n+".stdin-detect.yaml", rel, "alpha", "render-template", "--output", "yaml")
		}
	}
	files, err := filepath.Glob(filepath.Join(tmplDir, "detect", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		rel := "detect/" + filepath.Base(f)
		n := "detect-" + filepath.Base(f)
		add(n+".detect.json", "", "alpha", "render-template", "{templates}/"+rel)
		add(n+".stdin-detect.json", rel, "alpha", "render-template")
		add(n+".basic.json", "", "alpha", "render-template", "basic", "{templates}/"+rel)
		add(n+".semver.json", "", "alpha", "render-template", "semver", "{templates}/"+rel)
	}
	// The wrong type for the input.
	add("mismatch-semver-for-basic", "", "alpha", "render-template", "semver", "{templates}/basic/microcks.yaml")
	add("mismatch-basic-for-semver", "", "alpha", "render-template", "basic", "{templates}/semver/microcks-minor.yaml")
	// Migrations.
	for _, f := range []string{"basic/microcks.yaml", "semver/microcks-minor.yaml", "semver/dvo-skips.yaml"} {
		n := "migrate-" + strings.ReplaceAll(f, "/", "-")
		add(n+".json", "", "alpha", "render-template", "--migrate-level", "bundle-object-to-csv-metadata", "{templates}/"+f)
		add(n+".yaml", "", "alpha", "render-template", "--migrate-level=bundle-object-to-csv-metadata", "-o", "yaml", "{templates}/"+f)
		add(n+".none.json", "", "alpha", "render-template", "--migrate-level", "none", "{templates}/"+f)
	}
	add("migrate-unknown", "", "alpha", "render-template", "--migrate-level", "everything", "{templates}/basic/microcks.yaml")
	// Command line errors.
	add("cli-invalid-type", "", "alpha", "render-template", "fancy", "{templates}/basic/microcks.yaml")
	add("cli-missing-file", "", "alpha", "render-template", "{templates}/basic/no-such-file.yaml")
	add("cli-missing-file-typed", "", "alpha", "render-template", "semver", "{templates}/semver/no-such-file.yaml")
	add("cli-bad-output", "", "alpha", "render-template", "-o", "toml", "{templates}/basic/microcks.yaml")
	add("cli-too-many-args", "", "alpha", "render-template", "basic", "a", "b")
	add("cli-stdin-empty", "", "alpha", "render-template")
	add("cli-stdin-empty-basic", "", "alpha", "render-template", "basic")
	add("cli-stdin-empty-semver", "", "alpha", "render-template", "semver")
	add("cli-type-name-reads-stdin", "semver/aws-efs.json", "alpha", "render-template", "semver")
	add("cli-substitutes-on-basic", "", "alpha", "render-template", "substitutes", "{templates}/no-such-file.yaml")

	// convert-template basic on every catalog file of testdata.
	var catalogs []string
	for _, root := range []string{"catalogs", "catalog-samples"} {
		err := filepath.WalkDir(filepath.Join(testdataDir, root), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch path.Ext(p) {
			case ".json", ".yaml", ".yml":
				rel, err := filepath.Rel(testdataDir, p)
				if err != nil {
					return err
				}
				catalogs = append(catalogs, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(catalogs)
	for _, c := range catalogs {
		n := "convert-" + strings.NewReplacer("/", "-").Replace(c)
		add(n+".json", "", "alpha", "convert-template", "basic", "{testdata}/"+c)
		add(n+".yaml", "", "alpha", "convert-template", "basic", "-o", "yaml", "{testdata}/"+c)
	}
	add("convert-stdin.json", "basic/microcks.yaml", "alpha", "convert-template", "basic")
	add("convert-stdin-dash.yaml", "semver/dvo-skips.yaml", "alpha", "convert-template", "basic", "-", "-o", "yaml")
	add("convert-missing-file", "", "alpha", "convert-template", "basic", "{templates}/no-such-file.yaml")
	add("convert-bad-output", "", "alpha", "convert-template", "basic", "-o", "xml", "{templates}/basic/microcks.yaml")
	add("convert-bad-yaml", "", "alpha", "convert-template", "basic", "{templates}/basic/err-bad-yaml.yaml")
	add("convert-not-object", "", "alpha", "convert-template", "basic", "{templates}/basic/err-not-object.yaml")
	add("convert-too-many-args", "", "alpha", "convert-template", "basic", "a", "b")

	// convert-template substitutes: every catalog file, every template
	// fixture read as a catalog stream (several are not valid ones), each
	// way of giving the input and the format, and the command line errors.
	for _, c := range catalogs {
		n := "convert-substitutes-" + strings.NewReplacer("/", "-").Replace(c)
		add(n+".json", "", "alpha", "convert-template", "substitutes", "{testdata}/"+c)
		// YAML on the files under 200 KiB only: the large ones cost the
		// test suite seconds and show nothing the others do not.
		st, err := os.Stat(filepath.Join(testdataDir, c))
		if err != nil {
			return nil, err
		}
		if st.Size() < 200<<10 {
			add(n+".yaml", "", "alpha", "convert-template", "substitutes", "-o", "yaml", "{testdata}/"+c)
		}
	}
	for _, typ := range []string{"basic", "detect", "semver", "substitutes"} {
		files, err := filepath.Glob(filepath.Join(tmplDir, typ, "*.*"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			if ext := filepath.Ext(f); ext != ".json" && ext != ".yaml" {
				continue
			}
			rel := typ + "/" + filepath.Base(f)
			add("convert-substitutes-template-"+typ+"-"+filepath.Base(f)+".json", "", "alpha", "convert-template", "substitutes", "{templates}/"+rel)
		}
	}
	add("convert-substitutes-stdin.json", "basic/microcks.yaml", "alpha", "convert-template", "substitutes")
	add("convert-substitutes-stdin-dash.yaml", "semver/dvo-skips.yaml", "alpha", "convert-template", "substitutes", "-", "-o", "yaml")
	add("convert-substitutes-stdin-output-eq.yaml", "basic/two-packages.json", "alpha", "convert-template", "substitutes", "--output=yaml")
	add("convert-substitutes-stdin-json-explicit.json", "basic/two-packages.json", "alpha", "convert-template", "substitutes", "--output", "json", "-")
	add("convert-substitutes-stdin-empty.json", "", "alpha", "convert-template", "substitutes")
	add("convert-substitutes-stdin-empty.yaml", "", "alpha", "convert-template", "substitutes", "-o", "yaml")
	add("convert-substitutes-missing-file", "", "alpha", "convert-template", "substitutes", "{templates}/no-such-file.yaml")
	add("convert-substitutes-directory", "", "alpha", "convert-template", "substitutes", "{templates}/substitutes")
	add("convert-substitutes-bad-output", "", "alpha", "convert-template", "substitutes", "-o", "xml", "{templates}/basic/microcks.yaml")
	add("convert-substitutes-bad-output-missing-file", "", "alpha", "convert-template", "substitutes", "-o", "mermaid", "{templates}/no-such-file.yaml")
	add("convert-substitutes-too-many-args", "", "alpha", "convert-template", "substitutes", "a", "b")
	add("convert-substitutes-unknown-flag", "", "alpha", "convert-template", "substitutes", "--migrate-level", "none", "{templates}/basic/microcks.yaml")
	// Catalog streams written for convert-template (testdata/templates/
	// convert): a top-level list, a null document, a bad second document,
	// JSON numbers and HTML characters, mixed-case keys, a bundle that
	// does not decode; both types, JSON and YAML.
	files, err = filepath.Glob(filepath.Join(tmplDir, "convert", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		for _, typ := range []string{"basic", "substitutes"} {
			n := "convert-" + typ + "-stream-" + filepath.Base(f)
			add(n+".json", "", "alpha", "convert-template", typ, "{templates}/convert/"+filepath.Base(f))
			add(n+".yaml", "", "alpha", "convert-template", typ, "-o", "yaml", "{templates}/convert/"+filepath.Base(f))
		}
	}

	// Where the image client's own words follow, only the prefix counts.
	for i := range cs {
		if cs[i].Args[1] == "render-template" && strings.Contains(cs[i].Name, "err-missing-image") {
			ref := "REGISTRY/no-such-operator:1.0.0"
			cs[i].ErrPrefix = `Error: rendering template: render reference "` + ref + `": `
		}
	}
	return cs, nil
}

// ExpandTemplates copies the template fixtures of testdataDir/templates
// into dir with the registry's host substituted.
func ExpandTemplates(testdataDir, dir, host string) error {
	src := filepath.Join(testdataDir, "templates")
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, Expand(data, host), 0o644)
	})
}

// ResolveArgs replaces the tokens of c.Args.
func (c Case) ResolveArgs(templatesDir, testdataDir string) []string {
	r := strings.NewReplacer("{templates}", templatesDir, "{testdata}", testdataDir)
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		out[i] = r.Replace(a)
	}
	return out
}

var logTime = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} `)

// NormalizeStderr returns the first line of stderr with the host, the
// directories and a leading log timestamp replaced by placeholders.
func NormalizeStderr(stderr []byte, host, templatesDir, testdataDir string) string {
	line, _, _ := bytes.Cut(stderr, []byte("\n"))
	s := string(Normalize(line, host))
	s = strings.ReplaceAll(s, templatesDir, "{templates}")
	s = strings.ReplaceAll(s, testdataDir, "{testdata}")
	return logTime.ReplaceAllString(s, "TIME ")
}
