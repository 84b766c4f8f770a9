package indexignore

import (
	"slices"
	"testing"
)

// perconaEverest is the .indexignore of the percona-everest catalog (also in
// testdata/percona-everest.indexignore).
const perconaEverest = `# Ignore everything except non-object .json and .yaml files
**/*
!*.json
!*.yaml
**/objects/*.json
**/objects/*.yaml
`

// matchCase gives .indexignore contents by directory and the expected
// verdicts. Every verdict was checked against upstream opm's matcher
// (joelanford/ignore v0.1.2 with go-git v5.19.1).
type matchCase struct {
	name  string
	files map[string]string // directory → content of its .indexignore
	want  map[string]bool   // file path → ignored
}

var matchCases = []matchCase{
	{
		name:  "name without slash matches at any depth",
		files: map[string]string{".": "foo"},
		want:  map[string]bool{"foo": true, "a/b/foo": true, "foobar": false, "a/xfoo": false},
	},
	{
		name:  "name without slash matches a directory element",
		files: map[string]string{".": "foo"},
		want:  map[string]bool{"foo/bar.yaml": true, "a/foo/b/c.yaml": true, "a/b/c.yaml": false},
	},
	{
		name:  "suffix wildcard",
		files: map[string]string{".": "*.md"},
		want:  map[string]bool{"README.md": true, "docs/x/README.md": true, "README.mdx": false, "catalog.yaml": false},
	},
	{
		name:  "prefix and infix wildcards",
		files: map[string]string{".": "tmp*\n*bak*"},
		want:  map[string]bool{"tmp": true, "tmpfile": true, "a/x.bak.yaml": true, "bak": true, "atmp": false, "ba": false},
	},
	{
		name:  "negation after the pattern wins",
		files: map[string]string{".": "*.yaml\n!keep.yaml"},
		want:  map[string]bool{"x/keep.yaml": false, "keep.yaml": false, "x/drop.yaml": true},
	},
	{
		name:  "negation before the pattern loses",
		files: map[string]string{".": "!keep.yaml\n*.yaml"},
		want:  map[string]bool{"keep.yaml": true, "keep.json": false},
	},
	{
		name:  "negation alone ignores nothing",
		files: map[string]string{".": "!a\n!"},
		want:  map[string]bool{"a": false, "b": false},
	},
	{
		name:  "leading slash anchors",
		files: map[string]string{".": "/foo"},
		want:  map[string]bool{"foo": true, "foo/b.yaml": true, "a/foo": false, "a/foo/b.yaml": false},
	},
	{
		name:  "trailing slash: files below the directory, not a file of that name",
		files: map[string]string{".": "foo/"},
		want:  map[string]bool{"foo": false, "a/foo": false, "foo/x": true, "a/foo/x": true, "a/foo/b/x": true},
	},
	{
		name:  "anchored directory-only",
		files: map[string]string{".": "/foo/"},
		want:  map[string]bool{"foo": false, "foo/x": true, "a/foo/x": false},
	},
	{
		name:  "pattern with a slash is anchored and matches a prefix",
		files: map[string]string{".": "a/b"},
		want:  map[string]bool{"a/b": true, "a/b/c": true, "x/a/b": false, "a": false, "a/bc": false},
	},
	{
		name:  "leading double star",
		files: map[string]string{".": "**/foo"},
		want:  map[string]bool{"foo": true, "a/b/foo": true, "a/foo/c": true, "a/xfoo": false},
	},
	{
		name:  "double star in the middle",
		files: map[string]string{".": "a/**/b"},
		want:  map[string]bool{"a/b": true, "a/x/y/b": true, "a/x/b/c": true, "x/a/b": false, "a/x": false},
	},
	{
		name:  "double star stops at the first match, no backtracking",
		files: map[string]string{".": "**/objects/*.json"},
		want: map[string]bool{
			"objects/a.json":           true,
			"x/objects/a.json":         true,
			"x/objects/a.yaml":         false,
			"x/objects/objects/a.json": false,
			"x/objects/sub/a.json":     false,
		},
	},
	{
		name:  "trailing double star",
		files: map[string]string{".": "a/**"},
		want:  map[string]bool{"a/x": true, "a/x/y": true, "a": true, "b/a/x": false},
	},
	{
		name:  "trailing double star, directory-only",
		files: map[string]string{".": "a/**/"},
		want:  map[string]bool{"a": false, "a/x": true},
	},
	{
		name:  "patterns that match nothing",
		files: map[string]string{".": "/**\n**/**\n//\na/**b\n[\nx[\\"},
		want:  map[string]bool{"x": false, "a/xb": false, "a/b": false, "[": false},
	},
	{
		name:  "double star everywhere",
		files: map[string]string{".": "**/*"},
		want:  map[string]bool{"x": true, "a/b": true},
	},
	{
		name:  "lone double star and double star in a name",
		files: map[string]string{".": "**b\n**/"},
		want:  map[string]bool{"xb": true, "y": false, "d/y": true},
	},
	{
		name:  "empty segments",
		files: map[string]string{".": "a//b\nfoo//"},
		want:  map[string]bool{"a/b": true, "x/a/b": false, "foo/x": true, "a/foo/x": false, "foo": false},
	},
	{
		name:  "comments and blank lines",
		files: map[string]string{".": "# foo\n\n   \n\t\n  #bar\nbaz\n"},
		want:  map[string]bool{"# foo": false, "foo": false, "#bar": false, "bar": false, "baz": true},
	},
	{
		name:  "escaped hash and bang",
		files: map[string]string{".": "\\#foo\n\\!bar"},
		want:  map[string]bool{"#foo": true, "foo": false, "!bar": true, "bar": false},
	},
	{
		name:  "surrounding white space is trimmed",
		files: map[string]string{".": "  foo \t \n\tbar\n !baz\n"},
		want:  map[string]bool{"foo": true, "bar": true, " baz": false, "baz": false},
	},
	{
		name:  "escaped trailing space leaves an invalid pattern",
		files: map[string]string{".": "foo\\ "},
		want:  map[string]bool{"foo ": false, "foo": false, "foo\\": false},
	},
	{
		name:  "CRLF line endings",
		files: map[string]string{".": "foo\r\nbar\r\n"},
		want:  map[string]bool{"foo": true, "bar": true, "baz": false},
	},
	{
		name:  "character classes follow path.Match",
		files: map[string]string{".": "[ab].yaml\nx[!y]\nz[^y]\n\\*"},
		want: map[string]bool{
			"a.yaml": true, "c.yaml": false,
			"x!": true, "xy": true, "xz": false,
			"zy": false, "zz": true,
			"*": true, "s": false,
		},
	},
	{
		name:  "question mark is one character",
		files: map[string]string{".": "?.yaml"},
		want:  map[string]bool{"a.yaml": true, "é.yaml": true, "ab.yaml": false, ".yaml": false},
	},
	{
		name:  "negation matches through a directory element",
		files: map[string]string{".": "*\n!keep"},
		want:  map[string]bool{"keep/x": false, "a/keep/x": false, "x": true},
	},
	{
		name:  "nested file overrides the parent",
		files: map[string]string{".": "*.yaml", "sub": "!keep.yaml"},
		want:  map[string]bool{"sub/keep.yaml": false, "sub/x/keep.yaml": false, "sub/drop.yaml": true, "keep.yaml": true, "other/keep.yaml": true},
	},
	{
		name:  "nested patterns stay in their directory",
		files: map[string]string{"sub": "foo\n/bar\na/b"},
		want: map[string]bool{
			"foo": false, "x/foo": false, "subx/foo": false,
			"sub/foo": true, "sub/x/foo": true,
			"sub/bar": true, "sub/x/bar": false, "bar": false,
			"sub/a/b": true, "a/b": false, "sub/x/a/b": false,
		},
	},
	{
		name:  "nested directory-only pattern",
		files: map[string]string{"a/b": "c/"},
		want:  map[string]bool{"a/b/c": false, "a/b/c/x": true, "a/b/d/c/x": true, "a/c/x": false},
	},
	{
		name:  "three levels alternate",
		files: map[string]string{".": "*.yaml", "a": "!*.yaml", "a/b": "*.yaml"},
		want:  map[string]bool{"x.yaml": true, "a/x.yaml": false, "a/b/x.yaml": true, "a/c/x.yaml": false},
	},
	{
		name:  "parent wins below a child that sorts before .indexignore",
		files: map[string]string{".": "foo", "-sub": "!foo", "sub": "!foo", ".github": "!foo", ".j": "!foo"},
		want:  map[string]bool{"-sub/foo": true, ".github/foo": true, "sub/foo": false, ".j/foo": false},
	},
	{
		name:  "walk order mixes across levels",
		files: map[string]string{".": "x", "a": "!x", "a/-b": "x"},
		// Upstream's order: .indexignore, a/-b/.indexignore, a/.indexignore.
		want: map[string]bool{"a/-b/x": false, "a/x": false, "x": true},
	},
	{
		name:  "walk order: a deeper child after a shallow early one",
		files: map[string]string{".": "x", "-a": "!x", "-a/b": "x"},
		// Order: -a/.indexignore, -a/b/.indexignore, .indexignore.
		want: map[string]bool{"-a/b/x": true, "-a/x": true},
	},
	{
		name:  ".indexignore files are always ignored",
		files: map[string]string{".": "!.indexignore"},
		want:  map[string]bool{".indexignore": true, "a/.indexignore": true, ".indexignore/x": false, "a.indexignore": false},
	},
	{
		name:  "no patterns",
		files: map[string]string{".": "# nothing\n"},
		want:  map[string]bool{"a": false, "a/b.yaml": false},
	},
	{
		name:  "percona-everest",
		files: map[string]string{".": perconaEverest},
		want: map[string]bool{
			"everest-operator/catalog.yaml":                false,
			"everest-operator/veneer.yaml":                 false,
			"percona-postgresql-operator/catalog.yaml":     false,
			"percona-postgresql-operator/veneer.yaml":      false,
			"percona-server-mongodb-operator/catalog.yaml": false,
			"percona-server-mongodb-operator/veneer.yaml":  false,
			"percona-xtradb-cluster-operator/catalog.yaml": false,
			"percona-xtradb-cluster-operator/veneer.yaml":  false,
			"victoriametrics-operator/catalog.yaml":        false,
			"victoriametrics-operator/veneer.yaml":         false,
			"catalog.yaml":                                 false,
			"x/y/z.json":                                   false,
			"README.md":                                    true,
			"x/README.md":                                  true,
			"Makefile":                                     true,
			"x/objects/a.yaml":                             true,
			"x/objects/a.json":                             true,
			"objects/a.yaml":                               true,
			"x/objects/sub/a.yaml":                         false,
			"x.json/README.md":                             false,
		},
	},
	{
		name:  "fixture-deprecations-all-indexignored",
		files: map[string]string{".": "deprecations.yaml\n"},
		want:  map[string]bool{"deprecations.yaml": true, "x/deprecations.yaml": true, "catalog.yaml": false},
	},
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range matchCases {
		dirs := make([]string, 0, len(tc.files))
		for dir := range tc.files {
			dirs = append(dirs, dir)
		}
		slices.Sort(dirs)
		reversed := slices.Clone(dirs)
		slices.Reverse(reversed)
		orders := map[string][]string{"sorted": dirs, "reversed": reversed}
		for orderName, order := range orders {
			t.Run(tc.name+"/"+orderName, func(t *testing.T) {
				t.Parallel()
				var m Matcher
				for _, dir := range order {
					if err := m.Add(dir, []byte(tc.files[dir])); err != nil {
						t.Fatalf("Add(%q): %v", dir, err)
					}
				}
				for p, want := range tc.want {
					if got := m.Match(p); got != want {
						t.Errorf("Match(%q) = %v, want %v", p, got, want)
					}
				}
			})
		}
	}
}
