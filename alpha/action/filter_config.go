package action

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blang/semver/v4"
	"go.yaml.in/yaml/v3"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// FilterConfig says what `opm alpha filter` keeps. Its meaning follows
// oc-mirror v2's operator filtering (its ImageSetConfiguration's
// operators entry): without packages, every package; a package without
// channels means its default channel; without versions, a channel keeps
// only its head, unless Full.
type FilterConfig struct {
	// Schema, when set, must be "olm.filter.v1" (a marker for readers).
	Schema string
	// Full keeps every bundle of the selected channels (within the
	// version bounds) instead of heads only.
	Full     bool
	Packages []FilterPackage
}

// FilterPackage selects a package.
type FilterPackage struct {
	Name string
	// DefaultChannel replaces the package's default channel; required
	// when the channels kept leave the default channel out.
	DefaultChannel string
	// MinVersion and MaxVersion bound the default channel's bundles
	// (inclusive); not allowed with Channels, which carry their own.
	MinVersion string
	MaxVersion string
	Channels   []FilterChannel
	// Line is the entry's line in the configuration (0: unknown).
	Line int
}

// FilterChannel selects a channel, with optional inclusive bounds.
type FilterChannel struct {
	Name       string
	MinVersion string
	MaxVersion string
	// Line is the entry's line in the configuration (0: unknown).
	Line int
}

// FilterConfigError is a mistake in a filter configuration, or an entry
// of it that does not fit the catalog: the file and line of the
// configuration, the field in YAML words (packages[1].channels[0].name),
// and what is wrong.
type FilterConfigError struct {
	File  string // set by the caller that read the file
	Line  int    // 0: unknown
	Field string // empty: the whole configuration
	Err   error
}

func (e *FilterConfigError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *FilterConfigError) Unwrap() error { return e.Err }

// The keys of each level of the configuration, in the order help lists
// them.
var (
	filterTopKeys     = []string{"schema", "full", "packages"}
	filterPackageKeys = []string{"name", "defaultChannel", "minVersion", "maxVersion", "channels"}
	filterChannelKeys = []string{"name", "minVersion", "maxVersion"}
)

// yamlAnchor finds the anchor in go-yaml's "unknown anchor" message.
var yamlAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// yamlConfigError turns go-yaml's error for the configuration data into
// a *FilterConfigError at its line. go-yaml leaves the line out of some
// messages: those of its first line, of bytes that are not text (invalid
// UTF-8, control characters) and of an alias to an unknown anchor; they
// are found here.
func yamlConfigError(data []byte, err error) *FilterConfigError {
	line, msg := declcfg.YAMLErrorLine(data, err)
	ce := &FilterConfigError{Line: line}
	switch m := yamlAnchor.FindStringSubmatch(msg); {
	case line > 0: // named by go-yaml
	case m != nil:
		ce.Line = lineOf(data, bytes.Index(data, []byte("*"+m[1])))
	case firstNonText(data) >= 0:
		ce.Line = lineOf(data, firstNonText(data))
	default:
		ce.Line = 1 // go-yaml gives no line for its first
	}
	ce.Err = errors.New("not valid YAML: " + msg)
	return ce
}

// firstNonText returns the offset of the first byte of data that YAML text
// cannot hold (invalid UTF-8, or a character outside YAML's printable set,
// which go-yaml's reader checks: tab, line feed, carriage return,
// U+0020–U+007E, U+0085, U+00A0–U+D7FF, U+E000–U+FFFD, U+10000 and
// above), or -1.
func firstNonText(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		printable := r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
			(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || r >= 0x10000
		if (r == utf8.RuneError && size == 1) || !printable {
			return i
		}
		i += size
	}
	return -1
}

// lineOf is the line (from 1) of the offset i of data; 0 when i < 0.
func lineOf(data []byte, i int) int {
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte{'\n'}) + 1
}

// ParseFilterConfig reads a filter configuration (YAML, or JSON, which is
// YAML). Every mistake is a *FilterConfigError naming the line and the
// field: unknown keys (with the nearest known one), values of the wrong
// kind, a package or channel listed twice, bounds that are not versions.
func ParseFilterConfig(data []byte) (*FilterConfig, error) {
	if err := declcfg.NotUTF8(data); err != nil {
		// go-yaml would decode UTF-16, but the lines of its errors
		// found here would be wrong, and catalogs are refused alike.
		return nil, &FilterConfigError{Err: err}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &FilterConfig{}, nil
		}
		return nil, yamlConfigError(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, &FilterConfigError{Line: line, Err: errors.New("a second YAML document: the configuration is one document")}
	}
	var c FilterConfig
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if cfgIsNull(root) {
		return &c, nil
	}
	err := cfgEachKey(root, "", filterTopKeys, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "schema":
			c.Schema, err = cfgStr(v, key)
			if err == nil && c.Schema != "olm.filter.v1" {
				err = &FilterConfigError{Line: v.Line, Field: key, Err: fmt.Errorf("unknown schema %q: expected olm.filter.v1", c.Schema)}
			}
		case "full":
			c.Full, err = cfgBool(v, key)
		case "packages":
			c.Packages, err = parsePackages(v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func parsePackages(seq *yaml.Node) ([]FilterPackage, error) {
	if err := cfgIsSeq(seq, "packages"); err != nil {
		return nil, err
	}
	var pkgs []FilterPackage
	seen := map[string]int{}
	for i, n := range seq.Content {
		field := fmt.Sprintf("packages[%d]", i)
		p := FilterPackage{Line: n.Line}
		err := cfgEachKey(n, field, filterPackageKeys, func(key string, v *yaml.Node) error {
			var err error
			f := field + "." + key
			switch key {
			case "name":
				p.Name, err = cfgStr(v, f)
			case "defaultChannel":
				p.DefaultChannel, err = cfgStr(v, f)
			case "minVersion":
				p.MinVersion, err = cfgVersion(v, f)
			case "maxVersion":
				p.MaxVersion, err = cfgVersion(v, f)
			case "channels":
				p.Channels, err = parseChannels(v, f)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, &FilterConfigError{Line: n.Line, Field: field, Err: errors.New("name is required")}
		}
		if first, ok := seen[p.Name]; ok {
			return nil, &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("package %q is listed twice (first as packages[%d])", p.Name, first)}
		}
		seen[p.Name] = i
		if len(p.Channels) > 0 && (p.MinVersion != "" || p.MaxVersion != "") {
			return nil, &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("package %q: minVersion and maxVersion go on each channel when channels are listed, not on the package", p.Name)}
		}
		if err := checkBounds(p.MinVersion, p.MaxVersion); err != nil {
			return nil, &FilterConfigError{Line: n.Line, Field: field, Err: err}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func parseChannels(seq *yaml.Node, field string) ([]FilterChannel, error) {
	if err := cfgIsSeq(seq, field); err != nil {
		return nil, err
	}
	var chans []FilterChannel
	seen := map[string]int{}
	for j, n := range seq.Content {
		f := fmt.Sprintf("%s[%d]", field, j)
		ch := FilterChannel{Line: n.Line}
		err := cfgEachKey(n, f, filterChannelKeys, func(key string, v *yaml.Node) error {
			var err error
			switch key {
			case "name":
				ch.Name, err = cfgStr(v, f+"."+key)
			case "minVersion":
				ch.MinVersion, err = cfgVersion(v, f+"."+key)
			case "maxVersion":
				ch.MaxVersion, err = cfgVersion(v, f+"."+key)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if ch.Name == "" {
			return nil, &FilterConfigError{Line: n.Line, Field: f, Err: errors.New("name is required")}
		}
		if first, ok := seen[ch.Name]; ok {
			return nil, &FilterConfigError{Line: n.Line, Field: f, Err: fmt.Errorf("channel %q is listed twice (first as %s[%d])", ch.Name, field, first)}
		}
		seen[ch.Name] = j
		if err := checkBounds(ch.MinVersion, ch.MaxVersion); err != nil {
			return nil, &FilterConfigError{Line: n.Line, Field: f, Err: err}
		}
		chans = append(chans, ch)
	}
	return chans, nil
}

// cfgEachKey calls set for each key of the mapping n, in order; a key not in
// keys, or given twice, is an error naming the nearest known key. Null
// values are left out, as if the key were not there.
func cfgEachKey(n *yaml.Node, field string, keys []string, set func(key string, v *yaml.Node) error) error {
	n = cfgResolve(n)
	if n.Kind != yaml.MappingNode {
		what := "the configuration"
		if field != "" {
			what = "an entry"
		}
		return &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("%s must be a mapping of %s, not %s", what, strings.Join(keys, ", "), cfgKind(n))}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		f := name
		if field != "" {
			f = field + "." + name
		}
		if k.Kind != yaml.ScalarNode || !slices.Contains(keys, name) {
			return &FilterConfigError{Line: k.Line, Field: field, Err: fmt.Errorf("unknown key %q (known keys: %s)%s", name, strings.Join(keys, ", "), suggest.Hint(name, keys))}
		}
		if seen[name] {
			return &FilterConfigError{Line: k.Line, Field: f, Err: errors.New("given twice")}
		}
		seen[name] = true
		if cfgIsNull(v) {
			continue
		}
		if err := set(name, cfgResolve(v)); err != nil {
			return err
		}
	}
	return nil
}

// cfgResolve follows an alias.
func cfgResolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func cfgIsNull(n *yaml.Node) bool {
	n = cfgResolve(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func cfgIsSeq(n *yaml.Node, field string) error {
	if n.Kind != yaml.SequenceNode {
		return &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("must be a list, not %s", cfgKind(n))}
	}
	return nil
}

// cfgKind names a node's kind for a message.
func cfgKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

// cfgStr reads a string: any scalar, as written (a name of digits is still
// a name).
func cfgStr(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("must be a string, not %s", cfgKind(n))}
	}
	return n.Value, nil
}

func cfgBool(n *yaml.Node, field string) (bool, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, nil
		}
	}
	return false, &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("must be true or false, not %s", cfgKind(n))}
}

// cfgVersion reads a bound: a semantic version, as written (1.10 is not the
// number 1.1).
func cfgVersion(n *yaml.Node, field string) (string, error) {
	s, err := cfgStr(n, field)
	if err != nil {
		return "", err
	}
	if _, err := semver.ParseTolerant(s); err != nil {
		return "", &FilterConfigError{Line: n.Line, Field: field, Err: fmt.Errorf("%q is not a semantic version: %w", s, err)}
	}
	return s, nil
}

func checkBounds(lo, hi string) error {
	if lo == "" || hi == "" {
		return nil
	}
	l, _ := semver.ParseTolerant(lo) // checked by version
	h, _ := semver.ParseTolerant(hi)
	if h.LT(l) {
		return fmt.Errorf("maxVersion %s is lower than minVersion %s", hi, lo)
	}
	return nil
}
