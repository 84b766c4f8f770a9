package model

import (
	"path"
	"sort"
	"strings"
)

// attributeFailures decides which packages the files and blobs that could
// not be read concern, and reports the files. A package is not checked
// whole (the rules that need all of its blobs are skipped: they would
// only report what is missing) when, for a file or blob that could not be
// read:
//
//  1. a blob of the file that was read names it (olm.package by name, the
//     others by package), or the blob that could not be decoded does;
//  2. otherwise, the file or one of its directories is named after it
//     (foo/catalog.yaml, foo.yaml);
//  3. otherwise, other files of the file's directory, or of the nearest
//     directory above it that holds blobs, name it, the catalog root
//     excepted (one directory per package, or channels/ and bundles/
//     directories);
//  4. otherwise, it is named by channels, bundles or deprecations while no
//     olm.package blob declares it (its declaration may be in the file).
//
// A file at the catalog root that none of these ties to a package (a
// README with a YAML error, say) leaves every package checked.
func (b *build) attributeFailures() {
	if len(b.failures) == 0 {
		return
	}
	byFile := map[string]map[string]bool{}
	declared := map[string]bool{}
	named := map[string]bool{}
	note := func(file, pkg string) {
		if pkg == "" {
			return
		}
		named[pkg] = true
		if byFile[file] == nil {
			byFile[file] = map[string]bool{}
		}
		byFile[file][pkg] = true
	}
	for _, r := range b.pkgs {
		note(r.src.Path, r.v.Name)
		declared[r.v.Name] = true
	}
	for _, r := range b.chans {
		note(r.src.Path, r.v.Package)
	}
	for _, r := range b.Builder.bundles {
		note(r.src.Path, r.v.pkg)
	}
	for _, r := range b.deps {
		note(r.src.Path, r.v.Package)
	}
	for _, f := range b.failures {
		note(f.path, f.pkg)
	}
	var undeclared []string
	for p := range named {
		if !declared[p] {
			undeclared = append(undeclared, p)
		}
	}

	b.uncheckedPkgs = map[string]bool{}
	for _, f := range b.failures {
		var pkgs []string
		switch {
		case f.pkg != "":
			pkgs = []string{f.pkg}
		case len(byFile[f.path]) > 0:
			pkgs = keys(byFile[f.path])
		default:
			pkgs = namedAfter(f.path, named)
			if len(pkgs) == 0 {
				pkgs = nearestDirectory(f.path, byFile)
			}
			if len(pkgs) == 0 {
				pkgs = undeclared
			}
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			b.uncheckedPkgs[p] = true
		}
		if f.problem >= 0 {
			b.problems[f.problem].Unchecked = pkgs
			continue
		}
		p := ParseProblem(f.err)
		p.Unchecked = pkgs
		b.fileProblems = append(b.fileProblems, p)
	}
}

// namedAfter returns the packages that the file (without its extension)
// or one of its directories is named after.
func namedAfter(file string, named map[string]bool) []string {
	var out []string
	base := path.Base(file)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	parts := append(strings.Split(path.Dir(file), "/"), base)
	seen := map[string]bool{}
	for _, p := range parts {
		if named[p] && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// nearestDirectory returns the packages named by the blobs of the nearest
// directory, from the file's up to the catalog root's (excluded), that
// holds files with blobs.
func nearestDirectory(file string, byFile map[string]map[string]bool) []string {
	for dir := path.Dir(file); dir != "." && dir != "/"; dir = path.Dir(dir) {
		found := map[string]bool{}
		for f, pkgs := range byFile {
			if strings.HasPrefix(f, dir+"/") {
				for p := range pkgs {
					found[p] = true
				}
			}
		}
		if len(found) > 0 {
			return keys(found)
		}
	}
	return nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
