package indexignore

import (
	"path"
	"strings"
)

// pattern is one compiled line of a .indexignore.
type pattern struct {
	// segs holds the "/"-separated segments; a pattern without "/" (simple)
	// has exactly one.
	segs    []segment
	anchor  bool // the pattern has a "/" and matches a prefix of the path
	include bool // the line started with "!"
	dirOnly bool // the line ended with "/"
}

// parsePattern compiles one trimmed, non-comment line. It reports false for
// a pattern that can never match anything, which the caller drops.
func parsePattern(line string) (pattern, bool) {
	var p pattern
	if rest, ok := strings.CutPrefix(line, "!"); ok {
		p.include = true
		line = rest
	}
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRight(line, " ")
	}
	if rest, ok := strings.CutSuffix(line, "/"); ok {
		p.dirOnly = true
		line = rest
	}

	if !strings.Contains(line, "/") {
		s, ok := compileSegment(line)
		if !ok {
			return pattern{}, false
		}
		p.segs = []segment{s}
		return p, true
	}

	p.anchor = true
	parts := strings.Split(line, "/")
	p.segs = make([]segment, len(parts))
	matchable := false
	for i, part := range parts {
		switch {
		case part == "":
			p.segs[i] = segment{kind: segSkip}
		case part == "**":
			p.segs[i] = segment{kind: segStarStar}
		case strings.Contains(part, "**"):
			// go-git gives up on such a segment.
			return pattern{}, false
		default:
			s, ok := compileSegment(part)
			if !ok {
				return pattern{}, false
			}
			p.segs[i] = s
			matchable = true
		}
	}
	// Without a segment that consumes a path element ("/**", "**/**", "//")
	// go-git never reports a match.
	return p, matchable
}

// match reports whether the pattern matches the path elements rel (never
// empty) below its .indexignore's directory, for a file.
func (p *pattern) match(rel []string) bool {
	if !p.anchor {
		s := &p.segs[0]
		for i, name := range rel {
			if s.match(name) {
				// A directory-only pattern matching the file itself does
				// not count, and stops the search.
				return !p.dirOnly || i < len(rel)-1
			}
		}
		return false
	}

	traverse := false
segments:
	for i := range p.segs {
		s := &p.segs[i]
		switch s.kind {
		case segSkip:
			traverse = false
			continue
		case segStarStar:
			if i == len(p.segs)-1 {
				// A trailing "**" accepts whatever remains, even nothing.
				break segments
			}
			traverse = true
			continue
		}
		if len(rel) == 0 {
			return false
		}
		if !traverse {
			if !s.match(rel[0]) {
				return false
			}
			rel = rel[1:]
			continue
		}
		// After "**": consume elements up to and including the first one
		// that matches, without backtracking.
		traverse = false
		for {
			name := rel[0]
			rel = rel[1:]
			if s.match(name) {
				break
			}
			if len(rel) == 0 {
				return false
			}
		}
	}
	// Every segment matched (parsePattern guarantees that at least one
	// consumed an element). A directory-only pattern needs an element left
	// over: the file is below the directory, not the directory itself.
	return !p.dirOnly || len(rel) > 0
}

// segKind says how a segment is matched against one path element.
type segKind uint8

const (
	segGeneral  segKind = iota // path.Match(text, name)
	segLiteral                 // name == text
	segAny                     // any name
	segPrefix                  // strings.HasPrefix(name, text)
	segSuffix                  // strings.HasSuffix(name, text)
	segContains                // strings.Contains(name, text)
	segSkip                    // empty segment of an anchored pattern
	segStarStar                // "**" segment of an anchored pattern
)

// segment is a compiled "/"-free piece of a pattern.
type segment struct {
	kind segKind
	text string
}

// compileSegment compiles a path.Match pattern, choosing a plain string test
// when that gives the same verdict for every "/"-free name. It reports false
// when path.Match rejects the pattern as malformed; path.Match then returns
// that error for every name, so the segment never matches.
func compileSegment(s string) (segment, bool) {
	lead := 0
	for lead < len(s) && s[lead] == '*' {
		lead++
	}
	if lead == len(s) && lead > 0 {
		return segment{kind: segAny}, true
	}
	// Unescape the literal run that follows; stop at the first wildcard.
	var lit strings.Builder
	i := lead
	for ; i < len(s); i++ {
		c := s[i]
		if c == '*' || c == '?' || c == '[' {
			break
		}
		if c == '\\' {
			i++
			if i == len(s) {
				return segment{}, false // trailing backslash: malformed
			}
			c = s[i]
		}
		lit.WriteByte(c)
	}
	trail := 0
	for i+trail < len(s) && s[i+trail] == '*' {
		trail++
	}
	if i+trail == len(s) {
		switch {
		case lead == 0 && trail == 0:
			return segment{kind: segLiteral, text: lit.String()}, true
		case lead == 0:
			return segment{kind: segPrefix, text: lit.String()}, true
		case trail == 0:
			return segment{kind: segSuffix, text: lit.String()}, true
		default:
			return segment{kind: segContains, text: lit.String()}, true
		}
	}
	if _, err := path.Match(s, ""); err != nil {
		return segment{}, false
	}
	return segment{kind: segGeneral, text: s}, true
}

// match reports whether the segment matches one path element.
func (s *segment) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return name == s.text
	case segAny:
		return true
	case segPrefix:
		return strings.HasPrefix(name, s.text)
	case segSuffix:
		return strings.HasSuffix(name, s.text)
	case segContains:
		return strings.Contains(name, s.text)
	default:
		ok, _ := path.Match(s.text, name)
		return ok
	}
}
