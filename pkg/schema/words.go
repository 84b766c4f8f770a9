package schema

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/literal"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/pkg/canonjson"
)

// Finding is one field's violations put in words.
type Finding struct {
	// Path is the field at fault, as in Violation.Path; "" for the blob
	// as a whole.
	Path string
	// Steps is Path as steps into the blob (declcfg.Blob.Locate finds
	// the field's line with them).
	Steps []declcfg.PathStep
	// Words say, starting with the field, what is wrong and what is
	// expected: `icon.base64data is null; expected a base64 string (or
	// leave the icon out)`.
	Words string
}

// Explain puts the violations Check reported for a blob in words: one
// finding per field, in Check's order. CUE's messages are made for the
// writers of schemas ("conflicting values string and null (mismatched
// types string and null)"); these say what the field holds and what the
// schema expects there, naming the fields allowed where a field is
// unknown and the one it most likely misspells. The violations under a
// disjunction that no alternative meets (one per alternative) make one
// finding. It evaluates CUE at most once for the blob (and once for each
// constraint nested in an olm.constraint value with an unknown field), so
// call it for the blobs with violations only.
func (c *Checker) Explain(schemaName string, blob []byte, vs []Violation) []Finding {
	k := blobKind(schemaName)
	x := explainer{c: c, k: k, schema: schemaName, blob: blob}
	// Disjunctions that no alternative meets: the violations below them
	// are each alternative's, and say nothing on their own.
	var disjunctions []string
	for _, v := range vs {
		if disjunctionRE.MatchString(v.Message) {
			disjunctions = append(disjunctions, v.Path)
		}
	}
	under := func(p string) bool {
		for _, d := range disjunctions {
			if strings.HasPrefix(p, d) && len(p) > len(d) && (p[len(d)] == '.' || p[len(d)] == '[') {
				// A constraint nested in the one that failed is
				// checked on its own: its findings stand.
				if x.nodeLen(p) > x.nodeLen(d) {
					continue
				}
				return true
			}
		}
		return false
	}
	var (
		order []string
		msgs  = map[string][]string{}
	)
	for _, v := range vs {
		if under(v.Path) {
			continue
		}
		if _, ok := msgs[v.Path]; !ok {
			order = append(order, v.Path)
		}
		msgs[v.Path] = append(msgs[v.Path], v.Message)
	}
	out := make([]Finding, 0, len(order))
	for _, p := range order {
		steps, ok := parsePath(p)
		f := Finding{Path: p, Steps: steps}
		if !ok {
			f.Words = p + ": " + strings.Join(msgs[p], "; ")
		} else {
			f.Words = x.words(p, steps, msgs[p])
		}
		out = append(out, f)
	}
	// A field reported missing that an unknown field beside it most
	// likely misspells ("defaultchannel ... (did you mean
	// defaultChannel?)") is one mistake: its finding says it already.
	return slices.DeleteFunc(out, func(f Finding) bool {
		return x.misspelt[f.Path] && strings.HasPrefix(f.Words, f.Path+" is missing;")
	})
}

var (
	disjunctionRE = regexp.MustCompile(`^\d+ errors in empty disjunction:?$`)
	literalsRE    = regexp.MustCompile(`^conflicting values ("(?:[^"\\]|\\.)*") and ("(?:[^"\\]|\\.)*")$`)
	mismatchRE    = regexp.MustCompile(`^conflicting values .* \(mismatched types (\S+|\([^)]*\)) and (\S+|\([^)]*\))\)$`)
	incompleteRE  = regexp.MustCompile(`^incomplete value (.*)$`)
	unresolvedRE  = regexp.MustCompile(`^unresolved disjunction (.*) \(type \S+\)$`)
)

// explainer puts one blob's violations in words.
type explainer struct {
	c      *Checker
	k      kind
	schema string
	blob   []byte
	// unified is the blob unified with its definition, evaluated on
	// first use.
	unified   cue.Value
	evaluated bool
	// misspelt holds the paths of the fields that an unknown field
	// most likely misspells.
	misspelt map[string]bool
	// types caches propertyType by property index, nodeLens
	// constraintNode by path: paths can be thousands of steps long.
	types    map[int]string
	nodeLens map[string]int
}

// nodeLen is constraintNode of the path p.
func (x *explainer) nodeLen(p string) int {
	if n, ok := x.nodeLens[p]; ok {
		return n
	}
	steps, _ := parsePath(p)
	n := x.constraintNode(steps)
	if x.nodeLens == nil {
		x.nodeLens = map[string]int{}
	}
	x.nodeLens[p] = n
	return n
}

func (x *explainer) words(p string, steps []declcfg.PathStep, msgs []string) string {
	name := p
	if name == "" {
		name = "the blob"
	}
	val, found := valueAt(x.blob, steps)
	has := func(m string) bool {
		for _, s := range msgs {
			if s == m {
				return true
			}
		}
		return false
	}
	switch {
	case has("field not allowed") && len(steps) > 0 && !steps[len(steps)-1].IsIndex:
		return x.unknownField(name, steps)
	case hasMatch(msgs, disjunctionRE) || allMatch(msgs, literalsRE):
		return x.noAlternative(name, steps, val, msgs)
	}
	m := msgs[0]
	if sm := mismatchRE.FindStringSubmatch(m); sm != nil && found {
		expected := sm[1]
		if cueType(val) == expected || (expected == "number" && canonjson.Kind(val) == '0') {
			expected = sm[2]
		}
		return fmt.Sprintf("%s is %s; expected %s", name, describe(val), x.expected(steps, typeWords(expected)))
	}
	if m == `invalid value "" (out of bound !="")` {
		return fmt.Sprintf("%s is empty; expected %s", name, x.expected(steps, "a non-empty string"))
	}
	if sm := incompleteRE.FindStringSubmatch(m); sm != nil {
		if found {
			return fmt.Sprintf("%s is incomplete; expected %s", name, x.expected(steps, constraintWords(sm[1])))
		}
		return fmt.Sprintf("%s is missing; expected %s", name, x.expected(steps, constraintWords(sm[1])))
	}
	if sm := unresolvedRE.FindStringSubmatch(m); sm != nil {
		// A disjunction that a missing field leaves open: CUE names the
		// object, and the values the field may take.
		return fmt.Sprintf("%s is incomplete; expected %s", name, x.expected(steps, "a field set to one of "+joinWords(strings.Split(sm[1], " | "), "or")))
	}
	if m == "field is required but not present" {
		return fmt.Sprintf("%s is missing; expected %s", name, x.expected(steps, "a non-empty string"))
	}
	return name + ": " + strings.Join(msgs, "; ")
}

// unknownField words a field the definition does not allow, with the
// fields it allows there and the one the name most likely misspells.
func (x *explainer) unknownField(name string, steps []declcfg.PathStep) string {
	field := steps[len(steps)-1].Key
	parent := steps[:len(steps)-1]
	allowed := x.fieldsAt(parent)
	var known []string
	for _, f := range allowed {
		if f != field {
			known = append(known, f)
		}
	}
	sort.Strings(known)
	w := fmt.Sprintf("%s is not a field of %s", name, x.what(parent))
	if len(known) > 0 {
		w += "; its fields are " + joinWords(known, "and")
	}
	if guess := nearest(field, known); guess != "" {
		w += fmt.Sprintf(" (did you mean %s?)", guess)
		if x.misspelt == nil {
			x.misspelt = map[string]bool{}
		}
		x.misspelt[formatSteps(append(slices.Clip(parent), declcfg.PathStep{Key: guess}))] = true
	}
	return w
}

// noAlternative words a value that matches none of the alternatives a
// disjunction allows: one of several strings, or one of several forms of
// object.
func (x *explainer) noAlternative(name string, steps []declcfg.PathStep, val []byte, msgs []string) string {
	var lits []string
	for _, m := range msgs {
		if sm := literalsRE.FindStringSubmatch(m); sm != nil {
			for _, l := range sm[1:] {
				if l != string(val) {
					lits = append(lits, l)
				}
			}
		}
	}
	if len(lits) > 0 && canonjson.Kind(val) == '"' {
		if len(lits) == 1 && lits[0] == `""` {
			return fmt.Sprintf("%s is %s; expected none: leave it out", name, describe(val))
		}
		if len(lits) == 1 {
			return fmt.Sprintf("%s is %s; expected %s", name, describe(val), lits[0])
		}
		sort.Strings(lits)
		return fmt.Sprintf("%s is %s; expected one of %s", name, describe(val), joinWords(lits, "or"))
	}
	switch x.propertyType(steps) {
	case "olm.bundle.object":
		return fmt.Sprintf("%s is not an olm.bundle.object value; expected an object with exactly one of data (a base64-encoded manifest) and ref", name)
	case "olm.constraint":
		what := "an olm.constraint value"
		if x.nestedConstraint(steps) {
			what = "a constraint"
		}
		return fmt.Sprintf("%s is not %s; expected an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage), in OLM's form: package is {packageName, versionRange}, cel is {rule}, all, any and not are {constraints: [...]}", name, what)
	}
	return fmt.Sprintf("%s matches none of the forms the schema allows there", name)
}

// expected returns the words for what a field holds, more precise than
// general for the fields people write by hand.
func (x *explainer) expected(steps []declcfg.PathStep, general string) string {
	pattern := stepsPattern(steps)
	if w, ok := fieldWords[x.k][pattern]; ok {
		return w
	}
	switch {
	case x.propertyType(steps) == "olm.package" && pattern == "properties[*].value.version":
		return "the bundle's semver version, such as 1.2.3"
	case x.propertyType(steps) == "olm.constraint" && pattern == "properties[*].value", x.nestedConstraint(steps):
		return "an object with exactly one of gvk, package, cel, all, any and not (and an optional failureMessage)"
	}
	return general
}

// fieldWords says what the schema expects in the fields people write by
// hand, by kind and path (list indexes as [*]).
var fieldWords = [numKinds]map[string]string{
	kindPackage: {
		"name":            "the package's name",
		"defaultChannel":  "the name of one of the package's channels",
		"icon.base64data": "a base64 string (or leave the icon out)",
		"icon.mediatype":  "a media type such as image/svg+xml (or leave the icon out)",
	},
	kindChannel: {
		"package":              "the name of the channel's package",
		"name":                 "the channel's name",
		"entries[*].name":      "the name of a bundle of the package",
		"entries[*].replaces":  "the name of the bundle this one replaces (or leave replaces out)",
		"entries[*].skips[*]":  "the name of a bundle this one skips",
		"entries[*].skipRange": "a semver range such as <1.2.0 (or leave skipRange out)",
	},
	kindBundle: {
		"package":                "the name of the bundle's package",
		"name":                   "the bundle's name",
		"image":                  "the bundle image's pull spec",
		"relatedImages[*].image": "an image pull spec",
	},
	kindDeprecations: {
		"package":                   "the name of the package deprecated in",
		"entries[*].message":        "the message shown to users of what is deprecated",
		"entries[*].reference.name": "the name of the channel or bundle deprecated",
		"entries[*].reference":      `a reference with a schema ("olm.package", or "olm.channel" or "olm.bundle" with the name of the channel or bundle)`,
	},
}

// what names the object at steps: "an olm.package blob", "an icon", "an
// olm.gvk value", "relatedImages[0]".
func (x *explainer) what(steps []declcfg.PathStep) string {
	if len(steps) == 0 {
		return fmt.Sprintf("%s %s blob", article(x.schema), x.schema)
	}
	switch pattern := stepsPattern(steps); {
	case pattern == "icon":
		return "an icon"
	case pattern == "relatedImages[*]":
		return "a related image"
	case pattern == "entries[*]" && x.k == kindChannel:
		return "a channel entry"
	case pattern == "entries[*]" && x.k == kindDeprecations:
		return "a deprecation entry"
	case pattern == "properties[*]":
		return "a property"
	case pattern == "properties[*].value":
		if t := x.propertyType(steps); t != "" {
			return fmt.Sprintf("%s %s value", article(t), t)
		}
	case x.nestedConstraint(steps):
		return "a constraint"
	}
	return formatSteps(steps)
}

// fieldsAt returns the fields the definition names (or the blob has) in
// the object at steps, in the schema's order. A constraint nested in an
// olm.constraint value is evaluated on its own, and the blob with its
// olm.constraint values cut (constraint.go): CUE cannot evaluate a deeply
// nested constraint whole.
func (x *explainer) fieldsAt(steps []declcfg.PathStep) []string {
	var v cue.Value
	if n := x.constraintNode(steps); n > 3 {
		node, ok := valueAt(x.blob, steps[:n])
		if !ok {
			return nil
		}
		cut, ok := cutConstraint(node)
		if !ok {
			return nil
		}
		x.c.mu.Lock()
		defer x.c.mu.Unlock()
		u, err := x.c.unify(kindConstraint, cut)
		if err != nil {
			return nil
		}
		v, steps = u, steps[n:]
	} else {
		x.c.mu.Lock()
		defer x.c.mu.Unlock()
		if !x.evaluated {
			x.evaluated = true
			if u, err := x.c.unify(x.k, cutConstraints(x.blob)); err == nil {
				x.unified = u
			}
		}
		v = x.unified
	}
	if !v.Exists() {
		return nil
	}
	if len(steps) > 0 {
		v = v.LookupPath(cue.ParsePath(formatSteps(steps)))
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var out []string
	for it.Next() {
		// A list (a field not allowed can be one) has index labels.
		if sel := it.Selector(); sel.IsString() {
			out = append(out, sel.Unquoted())
		}
	}
	return out
}

// propertyType returns the type of the property that steps lead into
// (properties[i]...), or "".
func (x *explainer) propertyType(steps []declcfg.PathStep) string {
	if len(steps) < 2 || steps[0].Key != "properties" || !steps[1].IsIndex {
		return ""
	}
	if t, ok := x.types[steps[1].Index]; ok {
		return t
	}
	prop, ok := valueAt(x.blob, steps[:2])
	if !ok {
		return ""
	}
	t, _ := valueAt(prop, []declcfg.PathStep{{Key: "type"}})
	s, _ := canonjson.String(t)
	if x.types == nil {
		x.types = map[int]string{}
	}
	x.types[steps[1].Index] = s
	return s
}

// constraintNode returns the length of the longest prefix of steps that
// is the path of a constraint in an olm.constraint value: 3 for the value
// (properties[i].value), 3 more for each level of nesting
// (.all.constraints[j]); 0 when steps do not lead into one.
func (x *explainer) constraintNode(steps []declcfg.PathStep) int {
	if x.k == kindDeprecations || len(steps) < 3 || steps[0].IsIndex || steps[0].Key != "properties" ||
		!steps[1].IsIndex || steps[2].IsIndex || steps[2].Key != "value" || x.propertyType(steps) != "olm.constraint" {
		return 0
	}
	n := 3
	for n+2 < len(steps) && !steps[n].IsIndex && slices.Contains(nestedKeys[:], steps[n].Key) &&
		!steps[n+1].IsIndex && steps[n+1].Key == "constraints" && steps[n+2].IsIndex {
		n += 3
	}
	return n
}

// nestedConstraint reports whether steps are the path of a constraint
// nested in an olm.constraint value.
func (x *explainer) nestedConstraint(steps []declcfg.PathStep) bool {
	n := x.constraintNode(steps)
	return n > 3 && n == len(steps)
}

// valueAt returns the value at steps in the JSON blob. It reads each
// level only as far as the step, so a path thousands of levels deep costs
// one pass over the blob.
func valueAt(blob []byte, steps []declcfg.PathStep) ([]byte, bool) {
	i := skipWS(blob, 0)
	for _, s := range steps {
		if i >= len(blob) {
			return nil, false
		}
		if s.IsIndex {
			if blob[i] != '[' || s.Index < 0 {
				return nil, false
			}
			i = skipWS(blob, i+1)
			for n := 0; n < s.Index; n++ {
				end, err := skipValue(blob, i)
				if err != nil {
					return nil, false
				}
				if i = skipWS(blob, end); i >= len(blob) || blob[i] != ',' {
					return nil, false
				}
				i = skipWS(blob, i+1)
			}
			if i >= len(blob) || blob[i] == ']' {
				return nil, false
			}
			continue
		}
		if blob[i] != '{' {
			return nil, false
		}
		found := -1
		w := constraintWalk{src: blob}
		_, err := w.object(i, func(key []byte, j int) (int, error) {
			if keyIs(key, s.Key) {
				found = j
				return j, errFound
			}
			return skipValue(blob, j)
		})
		if found < 0 || err != errFound {
			return nil, false
		}
		i = found
	}
	end, err := skipValue(blob, i)
	if err != nil || end <= i {
		return nil, false
	}
	return blob[i:end], true
}

// errFound stops a walk at the member looked for.
var errFound = errors.New("found")

// describe says what a JSON value is: "null", "empty", `a string ("x")`,
// "a number (1.5)", "an object".
func describe(val []byte) string {
	switch canonjson.Kind(val) {
	case 'n':
		return "null"
	case '"':
		s, _ := canonjson.String(val)
		if s == "" {
			return "empty"
		}
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		return fmt.Sprintf("%s (%q)", "a string", s)
	case '0':
		return fmt.Sprintf("a number (%s)", val)
	case 't', 'f':
		return fmt.Sprintf("a boolean (%s)", val)
	case '[':
		return "a list"
	case '{':
		return "an object"
	}
	return "nothing"
}

// cueType is CUE's name for the type of a JSON value.
func cueType(val []byte) string {
	switch canonjson.Kind(val) {
	case 'n':
		return "null"
	case '"':
		return "string"
	case '0':
		if strings.ContainsAny(string(val), ".eE") {
			return "float"
		}
		return "int"
	case 't', 'f':
		return "bool"
	case '[':
		return "list"
	case '{':
		return "struct"
	}
	return ""
}

// typeWords says a CUE type in words.
func typeWords(t string) string {
	switch t {
	case "string":
		return "a string"
	case "int":
		return "an integer"
	case "float", "number":
		return "a number"
	case "bool":
		return "true or false"
	case "struct":
		return "an object"
	case "list":
		return "a list"
	case "null":
		return "null"
	}
	if strings.HasPrefix(t, "(") {
		return "a value other than null"
	}
	return t
}

// constraintWords says what an incomplete value's constraint asks for.
func constraintWords(c string) string {
	switch c {
	case `!=""`:
		return "a non-empty string"
	case "string":
		return "a string"
	case "!=null":
		return "a value other than null"
	case "{data!:string} | {ref!:string}":
		return "an object with data (a base64-encoded manifest) or ref"
	}
	return "a value (" + c + ")"
}

// parsePath parses a violation's path (labels joined by dots, quoted when
// they are not identifiers; list indexes in brackets).
func parsePath(p string) ([]declcfg.PathStep, bool) {
	var steps []declcfg.PathStep
	for i := 0; i < len(p); {
		switch c := p[i]; {
		case c == '.' && len(steps) > 0:
			i++
		case c == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, false
			}
			n, err := strconv.Atoi(p[i+1 : i+end])
			if err != nil {
				return nil, false
			}
			steps = append(steps, declcfg.PathStep{Index: n, IsIndex: true})
			i += end + 1
			continue
		}
		if i >= len(p) {
			break
		}
		if p[i] == '"' {
			end := i + 1
			for end < len(p) && p[end] != '"' {
				if p[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(p) {
				return nil, false
			}
			s, err := literal.Unquote(p[i : end+1])
			if err != nil {
				return nil, false
			}
			steps = append(steps, declcfg.PathStep{Key: s})
			i = end + 1
			continue
		}
		end := i
		for end < len(p) && p[end] != '.' && p[end] != '[' {
			end++
		}
		steps = append(steps, declcfg.PathStep{Key: p[i:end]})
		i = end
	}
	return steps, true
}

// formatSteps writes steps as a CUE path.
func formatSteps(steps []declcfg.PathStep) string {
	elems := make([]pathElem, len(steps))
	for i, s := range steps {
		if s.IsIndex {
			elems[i] = pathElem{index: s.Index, isIndex: true}
		} else {
			elems[i] = pathElem{label: cue.Str(s.Key).String()}
		}
	}
	return formatPath(elems)
}

// stepsPattern writes steps as a path with every index [*].
func stepsPattern(steps []declcfg.PathStep) string {
	var b strings.Builder
	for _, s := range steps {
		if s.IsIndex {
			b.WriteString("[*]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// nearest returns the field of known that name most likely misspells: one
// that differs in case only, or by at most two edits (one for short
// names), or of which name is a part of four letters or more; "" if none.
func nearest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		limit := 2
		if len(k) < 5 {
			limit = 1
		}
		if d <= limit && d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return best
	}
	for _, k := range known {
		if len(name) >= 4 && (strings.HasSuffix(strings.ToLower(k), strings.ToLower(name)) || strings.HasPrefix(strings.ToLower(k), strings.ToLower(name))) {
			return k
		}
	}
	return ""
}

// editDistance is the Damerau-Levenshtein distance (adjacent
// transpositions count as one edit) of a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func joinWords(ws []string, conj string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " " + conj + " " + ws[len(ws)-1]
}

func hasMatch(msgs []string, re *regexp.Regexp) bool {
	for _, m := range msgs {
		if re.MatchString(m) {
			return true
		}
	}
	return false
}

func allMatch(msgs []string, re *regexp.Regexp) bool {
	for _, m := range msgs {
		if !re.MatchString(m) {
			return false
		}
	}
	return len(msgs) > 0
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
