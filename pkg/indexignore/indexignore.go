// Package indexignore decides which files of a file-based catalog are skipped
// because of .indexignore files, with the same verdicts as upstream opm.
//
// Upstream opm (operator-registry v1.73, alpha/declcfg/load.go) builds its
// matcher with github.com/joelanford/ignore v0.1.2 on top of go-git v5.19.1's
// plumbing/format/gitignore. This package reproduces that behaviour,
// including its departures from git:
//
//   - Every line of a .indexignore is trimmed of surrounding white space
//     (strings.TrimSpace); empty lines and lines starting with "#" are
//     skipped. Escapes are not special there, so "\#x" is a pattern that
//     matches a file named "#x", and "x\ " loses its escaped trailing space
//     and becomes an invalid pattern that matches nothing. A line of more
//     than 65535 bytes is an error (bufio.Scanner's token limit).
//   - A leading "!" makes the pattern re-include what it matches; one
//     trailing "/" makes it directory-only. Each "/"-separated segment is
//     matched against one path element with path.Match (so "[!a]" is not a
//     negated class, "[^a]" is); a segment that path.Match rejects as
//     malformed makes the whole pattern match nothing.
//   - A pattern with no "/" (after dropping the trailing one) matches when
//     any element of the path below its .indexignore matches it, directories
//     included: "foo" ignores "foo", "a/foo" and "a/foo/b.yaml". Directory-only
//     "foo/" matches only when a matching element is not the last one, that
//     is it ignores the files below a directory foo but not a file foo.
//   - A pattern with a "/" is anchored at its .indexignore's directory and
//     matches a prefix of the path, element by element: "a/b" ignores "a/b"
//     and everything below it. "**" as a whole segment skips to the first
//     later element matching the next segment (no backtracking, so
//     "**/objects/*.json" does not ignore "x/objects/objects/a.json"); a
//     trailing "**" matches anything, even nothing, so "a/**" ignores a file
//     named "a"; "/**" and "**/**" match nothing; a segment that contains
//     "**" but is not exactly "**" makes the pattern match nothing.
//     Directory-only patterns with a "/" ignore the files below the
//     directory but not a file of that name.
//   - Patterns are checked from the highest priority down and the first one
//     that matches decides. Priority follows the order in which upstream's
//     fs.WalkDir visits the .indexignore files (later wins), and within a
//     file the line order (later wins). As a consequence a nested
//     .indexignore usually overrides its parent, except below a child whose
//     name sorts before ".indexignore" (such as "-x" or ".github"): WalkDir
//     visits that subtree before the parent's .indexignore, so there the
//     parent's patterns win.
//   - Files named .indexignore are always skipped.
//
// A pattern only applies to paths below the directory of its .indexignore,
// so a loader that walks the catalog once can call [Matcher.Add] for each
// directory's .indexignore before it matches that directory's files and
// still get upstream's verdicts: [Matcher.Match] orders the patterns of the
// relevant directories by upstream's walk order itself, whatever the order
// of the Add calls.
package indexignore

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// FileName is ".indexignore", the name of the files that hold ignore
// patterns.
const FileName = ".indexignore"

// Matcher holds the patterns of the .indexignore files seen so far.
//
// The zero value is an empty Matcher, ready to use. Match may be called
// from several goroutines at once, but not at the same time as Add.
type Matcher struct {
	root *group            // patterns of the catalog root's .indexignore
	dirs map[string]*group // patterns of other directories' .indexignore
	// maxDepth is the largest depth of a directory in dirs.
	maxDepth int
}

// group holds the patterns of one directory's .indexignore.
type group struct {
	depth    int       // number of path elements in the directory's path
	patterns []pattern // in file order: later ones take precedence
}

// Add parses the content of the .indexignore file found in directory dir
// (slash-separated, relative to the catalog root, "." for the root).
//
// Calling Add twice for one directory appends the second content after the
// first. On error the Matcher is left unchanged.
func (m *Matcher) Add(dir string, content []byte) error {
	if !fs.ValidPath(dir) {
		return fmt.Errorf("add %s of directory %q: %w", FileName, dir, fs.ErrInvalid)
	}
	var patterns []pattern
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if p, ok := parsePattern(string(line)); ok {
			patterns = append(patterns, p)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path.Join(dir, FileName), err)
	}
	if len(patterns) == 0 {
		return nil
	}

	if dir == "." {
		if m.root == nil {
			m.root = &group{}
		}
		m.root.patterns = append(m.root.patterns, patterns...)
		return nil
	}
	if m.dirs == nil {
		m.dirs = make(map[string]*group)
	}
	g := m.dirs[dir]
	if g == nil {
		g = &group{depth: strings.Count(dir, "/") + 1}
		m.dirs[dir] = g
		m.maxDepth = max(m.maxDepth, g.depth)
	}
	g.patterns = append(g.patterns, patterns...)
	return nil
}

// Match reports whether the file at path (slash-separated, relative to the
// root) is ignored.
//
// A file named FileName is always ignored. Match gives upstream's verdict
// once the .indexignore of every directory above the file (the root
// included) has been added.
func (m *Matcher) Match(path string) bool {
	if path[strings.LastIndexByte(path, '/')+1:] == FileName {
		return true
	}
	if m.root == nil && len(m.dirs) == 0 {
		return false
	}

	var elemBuf [32]string
	elems := splitPath(elemBuf[:0], path)

	if len(m.dirs) == 0 {
		decided, ignored := m.root.match(elems)
		return decided && ignored
	}

	// groups[k] holds the patterns of the directory made of the first k
	// elements of path. Upstream's walk visits the .indexignore of that
	// directory before everything below elems[k] when
	// FileName < elems[k], and after it otherwise; the later visited
	// patterns win. So the winners are, in order: the directories whose
	// next element sorts before FileName, shallow to deep, then the others,
	// deep to shallow.
	var groupBuf [32]*group
	groups := groupBuf[:0]
	groups = append(groups, m.root)
	last := min(len(elems)-1, m.maxDepth)
	end := 0
	for k := 1; k <= last; k++ {
		end += len(elems[k-1])
		groups = append(groups, m.dirs[path[:end]])
		end++ // the separator
	}
	for k, g := range groups {
		if g != nil && elems[k] < FileName {
			if decided, ignored := g.match(elems); decided {
				return ignored
			}
		}
	}
	for k := len(groups) - 1; k >= 0; k-- {
		if g := groups[k]; g != nil && elems[k] >= FileName {
			if decided, ignored := g.match(elems); decided {
				return ignored
			}
		}
	}
	return false
}

// splitPath appends the "/"-separated elements of p to dst, keeping empty
// elements as strings.Split does.
func splitPath(dst []string, p string) []string {
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(dst, p)
		}
		dst = append(dst, p[:i])
		p = p[i+1:]
	}
}

// match checks the group's patterns, last first, against the path elements
// elems (which start with the group's directory). decided reports whether
// a pattern matched; ignored whether that pattern excludes the file.
func (g *group) match(elems []string) (decided, ignored bool) {
	rel := elems[g.depth:]
	for i := len(g.patterns) - 1; i >= 0; i-- {
		p := &g.patterns[i]
		if p.match(rel) {
			return true, !p.include
		}
	}
	return false, false
}
