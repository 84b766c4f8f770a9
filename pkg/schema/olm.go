package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/cel-go/common"
	celparser "github.com/google/cel-go/parser"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

// OLM's own limits on olm.constraint values.
//
// OLM v0.46 reads a bundle's olm.constraint properties with
// operator-framework/api v0.45.0's constraints.Parse, then compiles each
// cel rule it reaches with a default cel-go v0.29 environment
// (constraints.NewCelEnvironment), and refuses the property when either
// fails:
//
//   - a value of more than maxConstraintSize bytes (2<<16: the comment
//     in constraints.go says 64Kb, the code allows 128 KiB) is refused
//     before it is read (ErrMaxConstraintSizeExceeded);
//   - the value is decoded with encoding/json, unknown fields refused,
//     and nested at most 10000 deep: a catalog whose blobs decode holds
//     no deeper value (its property values are 3 levels down), and the
//     unknown fields and wrong types are the schema's findings, but for
//     none, which the schema accepts as OLM's old name of not
//     (operator-framework/api renamed it in v0.14.0);
//   - a constraint is converted as its first kind of gvk, package, all,
//     any, not, cel; for cel, the rule goes through cel-go's parser, which
//     refuses more than maxCELCodePoints code points and expressions
//     nested deeper than maxCELDepth (two counters: the parse tree's rule
//     nesting, "expression recursion limit exceeded: 250", and the
//     expression's, "max recursion depth exceeded"). Its other limits
//     (error recovery attempts and lookahead) apply to rules with syntax
//     errors only, which OLM refuses anyway.
//
// Upstream opm checks none of them: OLMRefusals reports them for
// validate, as warnings.
const (
	maxConstraintSize = 2 << 16
	maxCELCodePoints  = 100_000
	maxCELDepth       = 250
)

// celVerdicts memoizes what cel-go's parser says of the rules it was
// given, by rule: "" when within its limits.
type celVerdicts struct {
	mu sync.Mutex
	m  map[string]string
}

// constraintSuffix ends the olm.constraint literal.
var constraintSuffix = []byte(`.constraint"`)

// OLMRefusals returns the olm.constraint properties of an olm.bundle blob
// (canonical JSON) that OLM refuses to read for its own limits, one
// finding each, in the words "...; OLM refuses it: ...". It costs a
// search of the blob for the olm.constraint literal when there is none,
// a decoding of each olm.constraint value, and cel-go's parser only for
// a rule that simple bounds cannot decide (celDepthBounds).
func (c *Checker) OLMRefusals(blob []byte) []Finding {
	// Searched from its dot, which base64 data never holds: searching
	// from the quote, which JSON is full of, took 40 ms on a 123 MB
	// catalog, this 7 ms.
	if !bytes.Contains(blob, constraintSuffix) {
		return nil
	}
	var out []Finding
	forEachProperty(blob, func(index, start, end int) {
		value, ok := constraintValue(blob, start, end)
		if !ok {
			return
		}
		vend, err := skipValue(blob, value)
		if err != nil {
			return
		}
		steps := []declcfg.PathStep{{Key: "properties"}, {Index: index, IsIndex: true}, {Key: "value"}}
		out = append(out, c.constraintRefusals(blob[value:vend], steps)...)
	})
	return out
}

// forEachProperty calls fn with the index and span of each element of
// the blob's properties list.
func forEachProperty(blob []byte, fn func(index, start, end int)) {
	w := constraintWalk{src: blob}
	i := skipWS(blob, 0)
	if i >= len(blob) || blob[i] != '{' {
		return
	}
	_, _ = w.object(i, func(key []byte, j int) (int, error) {
		if blob[j] != '[' || !keyIs(key, "properties") {
			return skipValue(blob, j)
		}
		j = skipWS(blob, j+1)
		if j < len(blob) && blob[j] == ']' {
			return j + 1, nil
		}
		for n := 0; ; n++ {
			start := skipWS(blob, j)
			end, err := skipValue(blob, start)
			if err != nil {
				return end, err
			}
			fn(n, start, end)
			next, done, err := afterItem(blob, end, ']')
			if err != nil || done {
				return next, err
			}
			j = next
		}
	})
}

// constraintRefusals checks one olm.constraint value, at steps, as OLM
// reads it.
func (c *Checker) constraintRefusals(value []byte, steps []declcfg.PathStep) []Finding {
	name := formatSteps(steps)
	if len(value) > maxConstraintSize {
		return []Finding{{Path: name, Steps: steps, Words: fmt.Sprintf(
			"%s is an olm.constraint value of %d bytes; OLM refuses it: it reads olm.constraint values of at most %d bytes (operator-framework/api's constraints.Parse)",
			name, len(value), maxConstraintSize)}}
	}
	var oc property.Constraint
	d := json.NewDecoder(bytes.NewReader(value))
	d.DisallowUnknownFields()
	if err := d.Decode(&oc); err != nil {
		// A field OLM does not know, or of the wrong type: the schema
		// says which, but for none, which it accepts.
		if strings.Contains(err.Error(), `unknown field "none"`) {
			if at, ok := noneKey(value, steps); ok {
				p := formatSteps(at)
				return []Finding{{Path: p, Steps: at, Words: fmt.Sprintf(
					"%s is OLM's old name of not; OLM refuses it: operator-framework/api reads not since v0.14.0, and refuses the olm.constraint value with a field it does not know",
					p)}}
			}
		}
		return nil
	}
	var out []Finding
	c.celRefusals(&oc, steps, &out)
	return out
}

// celRefusals appends the findings of the cel rules OLM compiles in the
// constraint at steps: those of the constraints whose first kind, in
// OLM's order (gvk, package, all, any, not, cel), is cel.
func (c *Checker) celRefusals(oc *property.Constraint, steps []declcfg.PathStep, out *[]Finding) {
	if len(*out) >= maxNestedReported {
		return
	}
	var list []property.Constraint
	var key string
	switch {
	case oc.GVK != nil, oc.Package != nil:
		return
	case oc.All != nil:
		list, key = oc.All.Constraints, "all"
	case oc.Any != nil:
		list, key = oc.Any.Constraints, "any"
	case oc.Not != nil:
		list, key = oc.Not.Constraints, "not"
	case oc.Cel != nil:
		if why := c.celRefusal(oc.Cel.Rule); why != "" {
			at := append(slices.Clone(steps), declcfg.PathStep{Key: "cel"}, declcfg.PathStep{Key: "rule"})
			p := formatSteps(at)
			*out = append(*out, Finding{Path: p, Steps: at, Words: p + why})
		}
		return
	}
	// steps is a stack: the path is copied only into a finding.
	for i := range list {
		at := append(steps, declcfg.PathStep{Key: key}, declcfg.PathStep{Key: "constraints"}, declcfg.PathStep{Index: i, IsIndex: true})
		c.celRefusals(&list[i], at, out)
	}
}

// celRefusal returns why cel-go's parser refuses rule, as the end of a
// finding's words, or "".
func (c *Checker) celRefusal(rule string) string {
	if n := utf8.RuneCountInString(rule); n > maxCELCodePoints {
		return fmt.Sprintf(" is a CEL rule of %d characters; OLM refuses it: its CEL parser (cel-go) reads rules of at most %d characters", n, maxCELCodePoints)
	}
	low, high := celDepthBounds(rule)
	if low > maxCELDepth {
		return fmt.Sprintf(" is a CEL rule nesting brackets %d deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most %d deep", low, maxCELDepth)
	}
	if high <= maxCELDepth {
		return ""
	}
	c.cel.mu.Lock()
	why, ok := c.cel.m[rule]
	c.cel.mu.Unlock()
	if !ok {
		why = parseCELLimits(rule)
		c.cel.mu.Lock()
		if c.cel.m == nil {
			c.cel.m = map[string]string{}
		}
		c.cel.m[rule] = why
		c.cel.mu.Unlock()
	}
	return why
}

// celParser parses rules as OLM's environment does, as far as its limits
// go: cel-go's default limits and macros. (cel-go v0.30 added a limit on
// the expression nodes macros expand to, which v0.29 does not have.)
var celParser = sync.OnceValues(func() (*celparser.Parser, error) {
	return celparser.NewParser(celparser.Macros(celparser.AllMacros...), celparser.MaxExpressionNodeCount(-1))
})

// parseCELLimits parses rule and returns the finding's words when the
// parser stopped at one of its limits.
func parseCELLimits(rule string) string {
	p, err := celParser()
	if err != nil {
		return ""
	}
	_, iss := p.Parse(common.NewTextSource(rule))
	if iss == nil {
		return ""
	}
	for _, e := range iss.GetErrors() {
		if strings.Contains(e.Message, "recursion") {
			return fmt.Sprintf(" is a CEL rule nested more than %d deep; OLM refuses it: its CEL parser (cel-go) reads expressions nested at most %d deep", maxCELDepth, maxCELDepth)
		}
	}
	return ""
}

// noneKey returns the path of the first none key of a constraint in the
// value (at steps), in document order.
func noneKey(value []byte, steps []declcfg.PathStep) ([]declcfg.PathStep, bool) {
	var w constraintWalk
	var found []declcfg.PathStep
	var visit func(i int, at []declcfg.PathStep) (int, error)
	visit = func(i int, at []declcfg.PathStep) (int, error) {
		i = skipWS(value, i)
		if i >= len(value) || value[i] != '{' {
			return skipValue(value, i)
		}
		return w.object(i, func(key []byte, j int) (int, error) {
			if found != nil {
				return skipValue(value, j)
			}
			if keyIs(key, "none") {
				found = append(slices.Clone(at), declcfg.PathStep{Key: "none"})
				return skipValue(value, j)
			}
			if value[j] != '{' || !isNestedKey(key) {
				return skipValue(value, j)
			}
			name := decodeKey(key)
			return w.object(j, func(key []byte, j int) (int, error) {
				if value[j] != '[' || !keyIs(key, "constraints") {
					return skipValue(value, j)
				}
				j = skipWS(value, j+1)
				if j < len(value) && value[j] == ']' {
					return j + 1, nil
				}
				for n := 0; ; n++ {
					// at is a stack: the path is copied only when found.
					end, err := visit(j, append(at, declcfg.PathStep{Key: name}, declcfg.PathStep{Key: "constraints"}, declcfg.PathStep{Index: n, IsIndex: true}))
					if err != nil {
						return end, err
					}
					j = skipWS(value, end)
					if j >= len(value) {
						return j, errSyntax
					}
					if value[j] == ']' {
						return j + 1, nil
					}
					if value[j] != ',' {
						return j, errSyntax
					}
					j++
				}
			})
		})
	}
	w.src = value
	if _, err := visit(0, steps); err != nil && found == nil {
		return nil, false
	}
	return found, found != nil
}

// errCELLex reports text the bounds' lexer does not read as CEL.
var errCELLex = errors.New("not CEL")

// celDepthBounds bounds how deep cel-go's parser nests when it reads
// rule, without parsing it: low is how deep brackets nest (each bracket
// holds an expression below the one around it, so the parser nests at
// least that deep), high the nesting its counters could reach. The parse
// tree nests once for each bracket, and, within one, once for each binary
// operator of a chain of them (relations, arithmetic, member selections
// and calls, indexes), and once for each conditional (?:); || and && and
// the commas of a list are loops of siblings. high is 1 (the top) plus,
// at each level of brackets, the number of ? and the largest number of
// operators in a piece between ||, &&, commas and colons, plus the
// highest of the brackets in that piece. TestCELDepthBounds checks both
// against the parser's own counters on random rules. Text the lexer does
// not read (an unterminated string, a character CEL does not use) gets
// high = maxInt: the parser decides.
func celDepthBounds(rule string) (low, high int) {
	type group struct {
		open          byte
		q, best       int // conditionals; highest finished piece
		ops, children int // operators and highest bracket of the current piece
	}
	stack := []group{{}}
	depth := 0
	endPiece := func(g *group) {
		g.best = max(g.best, g.ops+g.children)
		g.ops, g.children = 0, 0
	}
	fail := func() (int, int) { return low, int(^uint(0) >> 1) }
	for i := 0; i < len(rule); {
		g := &stack[len(stack)-1]
		c := rule[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '/' && i+1 < len(rule) && rule[i+1] == '/':
			for i < len(rule) && rule[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			end, err := celString(rule, i, false)
			if err != nil {
				return fail()
			}
			i = end
		case isIdentStart(c):
			j := i
			for j < len(rule) && (isIdentStart(rule[j]) || (rule[j] >= '0' && rule[j] <= '9')) {
				j++
			}
			word := rule[i:j]
			if j < len(rule) && (rule[j] == '"' || rule[j] == '\'') && isStringPrefix(word) {
				end, err := celString(rule, j, strings.ContainsAny(word, "rR"))
				if err != nil {
					return fail()
				}
				i = end
				continue
			}
			if word == "in" {
				g.ops++
			}
			i = j
		case c >= '0' && c <= '9':
			for i < len(rule) && (isIdentStart(rule[i]) || (rule[i] >= '0' && rule[i] <= '9') || rule[i] == '.') {
				if (rule[i] == 'e' || rule[i] == 'E') && i+1 < len(rule) && (rule[i+1] == '+' || rule[i+1] == '-') {
					i++
				}
				i++
			}
		case c == '(' || c == '[' || c == '{':
			g.ops++ // a call or an index nests like an operator
			stack = append(stack, group{open: c})
			depth++
			low = max(low, depth)
			i++
		case c == ')' || c == ']' || c == '}':
			if len(stack) == 1 || stack[len(stack)-1].open != opener(c) {
				return fail()
			}
			endPiece(g)
			h := 1 + g.q + g.best
			stack = stack[:len(stack)-1]
			depth--
			p := &stack[len(stack)-1]
			p.children = max(p.children, h)
			i++
		case c == '|' || c == '&':
			if i+1 >= len(rule) || rule[i+1] != c {
				return fail()
			}
			endPiece(g)
			i += 2
		case c == ',' || c == ':':
			endPiece(g)
			i++
		case c == '?':
			g.q++
			endPiece(g)
			i++
		case strings.IndexByte("=!<>+-*/%.", c) >= 0:
			if c != '!' || (i+1 < len(rule) && rule[i+1] == '=') {
				g.ops++
			}
			i++
			if i < len(rule) && rule[i] == '=' {
				i++
			}
		default:
			return fail()
		}
	}
	if len(stack) != 1 {
		return fail()
	}
	g := &stack[0]
	endPiece(g)
	return low, 1 + g.q + g.best
}

// opener is the bracket that c closes.
func opener(c byte) byte {
	switch c {
	case ')':
		return '('
	case ']':
		return '['
	}
	return '{'
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// isStringPrefix reports whether word prefixes a string literal: r (raw),
// b (bytes), or both, in either case and order.
func isStringPrefix(word string) bool {
	switch strings.ToLower(word) {
	case "r", "b", "rb", "br":
		return true
	}
	return false
}

// celString returns the index just past the CEL string literal whose
// quote is at rule[i]: in single or double quotes, tripled (which may
// hold line breaks) or not, with backslash escapes unless raw.
func celString(rule string, i int, raw bool) (int, error) {
	q := rule[i]
	triple := strings.HasPrefix(rule[i:], strings.Repeat(string(q), 3))
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(rule) {
		switch c := rule[j]; {
		case c == '\\' && !raw:
			j += 2
		case c == q && !triple:
			return j + 1, nil
		case c == q && strings.HasPrefix(rule[j:], strings.Repeat(string(q), 3)):
			return j + 3, nil
		case (c == '\n' || c == '\r') && !triple:
			return j, errCELLex
		default:
			j++
		}
	}
	return j, errCELLex
}
