package crdsafety

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	versionhelper "k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validations/property"
	crdvalidator "sigs.k8s.io/crdify/pkg/validators/crd"
	kjson "sigs.k8s.io/json"

	"github.com/fastopm/fastopm/pkg/canonjson"
)

// crdifyConfig is operator-controller's (v1.11.0, crdupgradesafety.go
// defaultConfig): every crdify validation enforced as an error but the
// description one, enum values may be added, served-version checks skipped
// for a CRD that converts through a webhook, and a change no validation
// handles is an error.
func crdifyConfig() *config.Config {
	return &config.Config{
		Conversion:           config.ConversionPolicyIgnore,
		UnhandledEnforcement: config.EnforcementPolicyError,
		Validations: []config.ValidationConfig{
			{Name: "description", Enforcement: config.EnforcementPolicyNone},
			{Name: "enum", Enforcement: config.EnforcementPolicyError,
				Configuration: map[string]any{"additionPolicy": property.AdditionPolicyAllow}},
		},
	}
}

// Checker compares the CRDs of two bundles. It remembers the answer for
// each pair of CRD manifests it compared, so that a catalog's many updates
// that carry the same CRDs cost one comparison. It is safe for concurrent
// use.
//
// The checks are crdify's, configured as operator-controller configures
// them; the Checker runs them as crdify's runner does (the CRD-wide
// validations, each version against the same version of the old CRD, each
// pair of served versions of the new CRD less the issues the old CRD
// already had between the same pair), skipping the comparisons whose
// schemas did not change, which cannot report anything: a CRD's schema is
// often megabytes, and crdify copies every property's subtree.
type Checker struct {
	crd        *crdvalidator.Validator
	properties []validations.Comparator[apiextensionsv1.JSONSchemaProps]

	mu    sync.Mutex
	pairs map[[2]Digest]*pairResult
}

// NewChecker returns a Checker with operator-controller's crdify
// configuration.
func NewChecker() (*Checker, error) {
	reg := runner.DefaultRegistry()
	vals, err := validations.LoadValidationsFromRegistry(reg)
	if err != nil {
		return nil, fmt.Errorf("crdify: %w", err)
	}
	if vals, err = validations.ConfigureValidations(vals, reg, *crdifyConfig()); err != nil {
		return nil, fmt.Errorf("crdify: %w", err)
	}
	// In name order, so that every run is the same (crdify's runner takes
	// them in map order).
	var list []validations.Validation
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		list = append(list, vals[name])
	}
	return &Checker{
		crd:        crdvalidator.New(crdvalidator.WithComparators(validations.ComparatorsForValidations[apiextensionsv1.CustomResourceDefinition](list...)...)),
		properties: validations.ComparatorsForValidations[apiextensionsv1.JSONSchemaProps](list...),
		pairs:      map[[2]Digest]*pairResult{},
	}, nil
}

// Compare returns the incompatible changes from the CRDs of the old bundle
// to those of the new one, sorted. A CRD is compared with the CRD of the
// same name in old; a CRD that old does not have, or that new no longer
// carries, is not a change either OLM's check refuses.
func (c *Checker) Compare(old, new []CRD) []Change {
	var out []Change
	for _, n := range new {
		i := slices.IndexFunc(old, func(o CRD) bool { return o.Name == n.Name })
		if i < 0 || old[i].Digest == n.Digest {
			continue
		}
		out = append(out, c.pair(old[i], n)...)
	}
	sortChanges(out)
	return out
}

func (c *Checker) pair(old, new CRD) []Change {
	key := [2]Digest{old.Digest, new.Digest}
	c.mu.Lock()
	p, ok := c.pairs[key]
	if !ok {
		p = &pairResult{done: make(chan struct{})}
		c.pairs[key] = p
	}
	c.mu.Unlock()
	if ok {
		<-p.done // another goroutine compares them, or has
		return p.changes
	}
	defer close(p.done)
	p.changes = c.compare(old, new)
	return p.changes
}

// pairResult is the comparison of two manifests, once done is closed.
type pairResult struct {
	done    chan struct{}
	changes []Change
}

// compare runs the checks on one CRD of the old and the new bundle.
func (c *Checker) compare(oldCRD, newCRD CRD) []Change {
	at := Change{CRD: newCRD.Name}
	if newCRD.APIVersion != APIVersionV1 || oldCRD.APIVersion != APIVersionV1 {
		return compareV1beta1(oldCRD, newCRD)
	}
	newJS, err := canonjson.Canonicalize(newCRD.JSON)
	if err != nil {
		at.Check, at.Message, at.V0, at.V1 = "invalid", fmt.Sprintf("the new CRD cannot be read: %v", err), Refuses, Refuses
		return []Change{at}
	}
	oldJS, err := canonjson.Canonicalize(oldCRD.JSON)
	if err != nil || bytes.Equal(oldJS, newJS) {
		// The same CRD, written another way; or an old CRD that could
		// never have been applied: nothing on a cluster to compare with.
		return nil
	}
	nw, newSchemas, err := decodeSpec(newJS)
	if err != nil {
		at.Check, at.Message, at.V0, at.V1 = "invalid", fmt.Sprintf("the new CRD cannot be read: %v", err), Refuses, Refuses
		return []Change{at}
	}
	old, oldSchemas, err := decodeSpec(oldJS)
	if err != nil {
		// The old bundle's CRD could never have been applied: nothing on
		// a cluster to compare with.
		return nil
	}
	res, err := c.run(old, nw, oldSchemas, newSchemas)
	if err != nil {
		at.Check, at.Message, at.V0, at.V1 = "invalid", err.Error(), Refuses, Refuses
		return []Change{at}
	}
	return changes(at, old, nw, res)
}

// decodeSpec reads a CRD manifest as the API server does (field names
// matched exactly), without its versions' schemas, which it returns as
// canonical JSON by version name: they are decoded only where they
// differ.
func decodeSpec(js []byte) (*apiextensionsv1.CustomResourceDefinition, map[string][]byte, error) {
	schemas := map[string][]byte{}
	stripped := editMember(js, "spec", func(spec []byte) []byte {
		return editMember(spec, "versions", func(versions []byte) []byte {
			if canonjson.Kind(versions) != '[' {
				return versions
			}
			out := []byte{'['}
			canonjson.ForEachElement(versions, func(v []byte) bool {
				if len(out) > 1 {
					out = append(out, ',')
				}
				name, _ := canonjson.String(member(v, "name"))
				if s := member(member(v, "schema"), "openAPIV3Schema"); canonjson.Kind(s) == '{' {
					schemas[name] = s
				}
				out = append(out, editMember(v, "schema", func([]byte) []byte { return nil })...)
				return true
			})
			return append(out, ']')
		})
	})
	var crd apiextensionsv1.CustomResourceDefinition
	if err := kjson.UnmarshalCaseSensitivePreserveInts(stripped, &crd); err != nil {
		return nil, nil, err
	}
	return &crd, schemas, nil
}

// storedVersions stands for the cluster's status.storedVersions: the
// cluster has stored objects in the old CRD's storage version (and maybe
// in earlier ones, which only the cluster tells).
func storedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			out = append(out, v.Name)
		}
	}
	return out
}

// changes turns crdify's findings on old → nw into Changes, with the
// checks crdify does not run, and the verdicts of each OLM.
func changes(at Change, old, nw *apiextensionsv1.CustomResourceDefinition, res results) []Change {
	var out []Change
	stored := storedVersions(old)
	// What the API server refuses on any update (apiextensions
	// validateCustomResourceDefinitionSpecUpdate): the kind of an
	// established CRD is immutable. crdify does not look at names.
	if old.Spec.Names.Kind != nw.Spec.Names.Kind {
		ch := at
		ch.Check, ch.V0, ch.V1 = "kind", Refuses, Refuses
		ch.Message = fmt.Sprintf("kind changed : %q -> %q (the API server refuses it: the kind of an established CRD is immutable)", old.Spec.Names.Kind, nw.Spec.Names.Kind)
		out = append(out, ch)
	}
	// OLM's documentation asks every served version to stay; OLM v0's
	// code stopped refusing this in 2020 (it checks stored versions), but
	// clients of the version break.
	for _, v := range old.Spec.Versions {
		nv := version(nw, v.Name)
		if !v.Served || nv == nil && slices.Contains(stored, v.Name) {
			continue // a stored version removed is reported as such
		}
		if nv == nil || !nv.Served {
			ch := at
			ch.Version, ch.Check = v.Name, "servedVersionRemoval"
			ch.Message = fmt.Sprintf("version %s is no longer served: clients that use it break (neither OLM refuses it)", v.Name)
			out = append(out, ch)
		}
	}
	webhook := nw.Spec.Conversion != nil && nw.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
	removed := map[string]bool{} // version + field of removed fields
	for _, r := range res.crd {
		for _, msg := range r.Errors {
			ch := at
			ch.Check, ch.Message, ch.V1 = r.Name, msg, Refuses
			switch r.Name {
			case "scope":
				// The API server refuses it too: scope is immutable.
				ch.V0 = Refuses
			case "storedVersionRemoval":
				// OLM v0's SafeStorageVersionUpgrade: "risk of data loss".
				ch.V0 = Refuses
			case "existingFieldRemoval":
				// "removed field : v1.^.spec.foo". OLM v0 does not refuse
				// it: unknown fields still validate, and are pruned.
				if v, f, ok := strings.Cut(strings.TrimPrefix(msg, "removed field : "), ".^"); ok {
					ch.Version, ch.Field, ch.Message = v, "^"+f, "removed field"
					removed[v+" "+ch.Field] = true
				}
			}
			out = append(out, ch)
		}
	}
	out = compactRemovedFields(out)
	for _, vr := range res.same {
		ov, nv := version(old, vr.version), version(nw, vr.version)
		servedBoth := ov != nil && nv != nil && ov.Served && nv.Served
		for _, pr := range vr.properties {
			if underRemoved(removed, vr.version, pr.Property) {
				continue // the removal says it all
			}
			for _, r := range pr.ComparisonResults {
				for _, msg := range r.Errors {
					ch := at
					ch.Version, ch.Field, ch.Check, ch.Message, ch.V1 = vr.version, pr.Property, r.Name, tidyMessage(r.Name, msg), Refuses
					if servedBoth && !webhook && tightens(r.Name, ch.Message) {
						// validateV1CRDCompatibility validates existing
						// resources of versions served before and after.
						ch.V0 = IfResourcesBreak
					}
					out = append(out, ch)
				}
			}
		}
	}
	for _, vr := range res.served {
		// A property the later version of the pair does not have is
		// reported with crdify's findings on it; the properties inside it
		// are not listed.
		for _, pr := range vr.properties {
			if p := parent(pr.Property); p != "" && !vr.later[pr.Property] && !vr.later[p] {
				continue
			}
			for _, r := range pr.ComparisonResults {
				for _, msg := range r.Errors {
					ch := at
					ch.Version, ch.Field, ch.Check, ch.Message, ch.V1 = vr.version, pr.Property, r.Name, tidyMessage(r.Name, msg), Refuses
					out = append(out, ch)
				}
			}
		}
	}
	return out
}

// results are crdify's findings, as its runner.Results holds them.
type results struct {
	crd    []validations.ComparisonResult
	same   []versionResult
	served []versionResult
}

type versionResult struct {
	version    string // "v1", or "v1 -> v2"
	properties []validations.PropertyComparisonResult
	// later are the properties of the second version of a served pair.
	later map[string]bool
}

// run runs crdify's validations on the old and the new CRD, as its
// runner.Run does (see Checker), on schemas pruned against each other
// (pruneSchemas), turning a panic of crdify on an unusual CRD into an
// error. old and nw have no schemas: oldSchemas and newSchemas hold them,
// by version, as canonical JSON.
func (c *Checker) run(old, nw *apiextensionsv1.CustomResourceDefinition, oldSchemas, newSchemas map[string][]byte) (res results, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("crdify could not compare the CRDs: %v", p)
		}
	}()
	// The CRDs that crdify's CRD-wide validations see: each version both
	// have, with its two schemas pruned against each other (which keeps
	// every field one removes), the others without schema.
	oldP, newP := old.DeepCopy(), nw.DeepCopy()
	oldP.Status.StoredVersions = storedVersions(old)
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{oldP, newP} {
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Schema = &apiextensionsv1.CustomResourceValidation{}
		}
	}
	var changed []string
	for i := range oldP.Spec.Versions {
		ov := &oldP.Spec.Versions[i]
		nv := version(newP, ov.Name)
		if nv == nil || bytes.Equal(oldSchemas[ov.Name], newSchemas[ov.Name]) {
			continue
		}
		pa, pb := pruneSchemas(oldSchemas[ov.Name], newSchemas[ov.Name])
		if ov.Schema.OpenAPIV3Schema, err = decodeSchema(pa); err != nil {
			return res, fmt.Errorf("the old CRD's version %s: %w", ov.Name, err)
		}
		if nv.Schema.OpenAPIV3Schema, err = decodeSchema(pb); err != nil {
			return res, fmt.Errorf("the new CRD's version %s: %w", nv.Name, err)
		}
		changed = append(changed, ov.Name)
	}
	res.crd = c.crd.Validate(oldP, newP)
	// Same versions (crdify's validators/version/same).
	for _, name := range changed {
		res.same = append(res.same, versionResult{version: name,
			properties: validations.CompareVersions(*version(oldP, name), *version(newP, name), config.EnforcementPolicyError, c.properties...)})
	}
	// Served versions (crdify's validators/version/served, with
	// ConversionPolicyIgnore): skipped when the new CRD converts through a
	// webhook; else each pair of served versions of the new CRD, less what
	// the same pair of the old CRD already reported.
	if nw.Spec.Conversion != nil && nw.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter {
		return res, nil
	}
	unchanged := func(name string) bool {
		_, ok := oldSchemas[name]
		return ok == (newSchemas[name] != nil) && bytes.Equal(oldSchemas[name], newSchemas[name])
	}
	oldPairs := servedPairs(old)
	newPairs := servedPairs(nw)
	for _, name := range slices.Sorted(maps.Keys(newPairs)) {
		p := newPairs[name]
		op, had := oldPairs[name]
		if had && unchanged(p.a.Name) && unchanged(p.b.Name) {
			continue // the same issues as before, all subtracted
		}
		found, later, err := c.comparePair(p, newSchemas)
		if err != nil {
			return res, fmt.Errorf("the new CRD's versions %s: %w", name, err)
		}
		if had && len(found) > 0 {
			known, _, err := c.comparePair(op, oldSchemas)
			if err != nil {
				return res, fmt.Errorf("the old CRD's versions %s: %w", name, err)
			}
			found = subtract(found, known)
		}
		res.served = append(res.served, versionResult{name, found, later})
	}
	return res, nil
}

// comparePair compares the two versions of a served pair, and returns
// the properties of the second.
func (c *Checker) comparePair(p versionPair, schemas map[string][]byte) ([]validations.PropertyComparisonResult, map[string]bool, error) {
	sa, sb := schemas[p.a.Name], schemas[p.b.Name]
	if bytes.Equal(sa, sb) {
		return nil, nil, nil
	}
	pa, pb := pruneSchemas(sa, sb)
	da, err := decodeSchema(pa)
	if err != nil {
		return nil, nil, err
	}
	db, err := decodeSchema(pb)
	if err != nil {
		return nil, nil, err
	}
	a, b := p.a, p.b
	a.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: da}
	b.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: db}
	return validations.CompareVersions(a, b, config.EnforcementPolicyError, c.properties...), fields(&b), nil
}

type versionPair struct {
	name string
	a, b apiextensionsv1.CustomResourceDefinitionVersion
}

// servedPairs are the pairs of served versions of a CRD, in Kubernetes'
// version order, by name ("v1 -> v2"), as crdify makes them.
func servedPairs(crd *apiextensionsv1.CustomResourceDefinition) map[string]versionPair {
	var served []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = append(served, v)
		}
	}
	slices.SortFunc(served, func(a, b apiextensionsv1.CustomResourceDefinitionVersion) int {
		return versionhelper.CompareKubeAwareVersionStrings(a.Name, b.Name)
	})
	out := map[string]versionPair{}
	for i := range served {
		for j := i + 1; j < len(served); j++ {
			name := served[i].Name + " -> " + served[j].Name
			out[name] = versionPair{name, served[i], served[j]}
		}
	}
	return out
}

// subtract removes from found the errors that known has for the same
// property and check (crdify's subtractExistingIssues), comparing tidied
// messages, which do not depend on map order.
func subtract(found, known []validations.PropertyComparisonResult) []validations.PropertyComparisonResult {
	had := map[string]bool{}
	for _, p := range known {
		for _, r := range p.ComparisonResults {
			for _, e := range r.Errors {
				had[p.Property+"\x00"+r.Name+"\x00"+tidyMessage(r.Name, e)] = true
			}
		}
	}
	out := make([]validations.PropertyComparisonResult, 0, len(found))
	for _, p := range found {
		q := validations.PropertyComparisonResult{Property: p.Property}
		for _, r := range p.ComparisonResults {
			r.Errors = slices.DeleteFunc(slices.Clone(r.Errors), func(e string) bool {
				return had[p.Property+"\x00"+r.Name+"\x00"+tidyMessage(r.Name, e)]
			})
			q.ComparisonResults = append(q.ComparisonResults, r)
		}
		out = append(out, q)
	}
	return out
}

// fields are the properties of a version's schema, as crdify names them.
func fields(v *apiextensionsv1.CustomResourceDefinitionVersion) map[string]bool {
	out := map[string]bool{}
	if v == nil || v.Schema == nil {
		return out
	}
	validations.SchemaHas(v.Schema.OpenAPIV3Schema, field.NewPath("^"), field.NewPath("^"), nil,
		func(_ *apiextensionsv1.JSONSchemaProps, _, loc *field.Path, _ []*apiextensionsv1.JSONSchemaProps) bool {
			out[loc.String()] = true
			return false
		})
	return out
}

func version(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

// compactRemovedFields keeps, of the fields removed from a version, the
// outermost ones: a removed object takes its fields with it.
func compactRemovedFields(cs []Change) []Change {
	removed := map[string]bool{}
	for _, c := range cs {
		if c.Check == "existingFieldRemoval" && c.Field != "" {
			removed[c.Version+" "+c.Field] = true
		}
	}
	return slices.DeleteFunc(cs, func(c Change) bool {
		return c.Check == "existingFieldRemoval" && c.Field != "" && underRemoved(removed, c.Version, parent(c.Field))
	})
}

// underRemoved reports whether field, or a property it is inside, is
// among the removed fields of version.
func underRemoved(removed map[string]bool, version, field string) bool {
	for f := field; f != ""; f = parent(f) {
		if removed[version+" "+f] {
			return true
		}
	}
	return false
}

// parent is the property a crdify field path is in ("^.spec.a" → "^.spec",
// "^.spec.list[0]" → "^.spec.list"), or "" at the root.
func parent(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i <= 0 {
		return ""
	}
	return field[:i]
}

// tightens reports whether a change crdify found can make an existing
// custom resource fail the new schema's OpenAPI validation, which is what
// OLM v0 checks (validateExistingCRs, with apiextensions'
// NewSchemaValidator): not a default or a description, nor a pattern or
// null constraint lifted, nor a change crdify does not classify that only
// touches what that validation ignores (titles and examples; pruning,
// list and map types, CEL rules).
func tightens(check, msg string) bool {
	switch check {
	case "default", "description":
		return false
	case "pattern":
		return !strings.HasPrefix(msg, "pattern removed")
	case "nullable":
		return strings.HasPrefix(msg, "nullable removed")
	case "unhandled":
		_, list, ok := strings.Cut(msg, "(")
		if !ok {
			return true
		}
		for _, part := range strings.Split(strings.TrimSuffix(list, ")"), "; ") {
			name, _, _ := strings.Cut(part, " ")
			switch name {
			case "Title", "Example", "ExternalDocs", "ID", "Schema", "XPreserveUnknownFields", "XMapType", "XListType", "XListMapKeys", "XValidations":
			default:
				return true
			}
		}
		return false
	}
	return true
}

// tidyMessage makes crdify's messages stable: the new required fields
// come in map order, and an unhandled change is reported as go-cmp's
// diff, whose spacing go-cmp varies on purpose. They become a sorted list
// and "field old -> new" pairs.
func tidyMessage(check, msg string) string {
	switch check {
	case "required":
		if head, list, ok := strings.Cut(msg, "["); ok {
			names := strings.Fields(strings.TrimSuffix(list, "]"))
			slices.Sort(names)
			return head + "[" + strings.Join(names, " ") + "]"
		}
	case "unhandled":
		return unhandledSummary(msg)
	}
	return msg
}

// unhandledSummary turns crdify's "unhandled changes found :" followed by
// go-cmp's diff of two JSONSchemaProps into "unhandled changes found
// (Format "" -> "email"; OneOf changed)": the schema's fields that changed,
// with their old and new values when each fits on one line.
func unhandledSummary(msg string) string {
	head, diff, ok := strings.Cut(msg, "\n")
	if !ok {
		return msg
	}
	head = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(head), ":"))
	type change struct {
		old, new  string
		multiline bool
	}
	var order []string
	changes := map[string]*change{}
	get := func(f string) *change {
		c, ok := changes[f]
		if !ok {
			c = &change{}
			changes[f] = c
			order = append(order, f)
		}
		return c
	}
	current := "" // the JSONSchemaProps field the lines are in
	for _, line := range strings.Split(diff, "\n") {
		if line == "" {
			continue
		}
		// go-cmp writes a sign column ('-', '+', or a space), a space,
		// then one tab per level; either space may be a non-breaking one.
		sign, rest := byte(' '), line
		switch {
		case rest[0] == '-' || rest[0] == '+':
			sign, rest = rest[0], rest[1:]
		default:
			rest = trimSpace1(rest)
		}
		rest = trimSpace1(rest)
		depth := len(rest) - len(strings.TrimLeft(rest, "\t"))
		rest = strings.TrimSpace(rest)
		if depth == 1 {
			if name, value, ok := strings.Cut(rest, ":"); ok && isIdent(name) {
				current = name
				if sign == '-' || sign == '+' {
					c := get(name)
					value = strings.TrimSuffix(strings.TrimSpace(value), ",")
					if strings.HasSuffix(value, "{") {
						c.multiline = true
					} else if sign == '-' {
						c.old = value
					} else {
						c.new = value
					}
				}
				continue
			}
		}
		if depth > 1 && (sign == '-' || sign == '+') && current != "" {
			get(current).multiline = true
		}
	}
	if len(order) == 0 {
		return head
	}
	parts := make([]string, 0, len(order))
	for _, f := range order {
		c := changes[f]
		if c.multiline || c.old == "" && c.new == "" {
			parts = append(parts, f+" changed")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s -> %s", f, orNone(c.old), orNone(c.new)))
	}
	return fmt.Sprintf("%s (%s)", head, strings.Join(parts, "; "))
}

// trimSpace1 removes one leading space, normal or non-breaking.
func trimSpace1(s string) string {
	if t, ok := strings.CutPrefix(s, " "); ok {
		return t
	}
	return strings.TrimPrefix(s, "\u00a0")
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// compareV1beta1 answers for a CRD that either bundle writes as
// apiextensions.k8s.io/v1beta1, which Kubernetes stopped serving in 1.22:
// neither OLM can apply such a CRD on a current cluster, and crdify
// compares v1 CRDs only. The change is reported, without a verdict.
func compareV1beta1(oldCRD, newCRD CRD) []Change {
	return []Change{{CRD: newCRD.Name, Check: "apiVersion",
		Message: fmt.Sprintf("not compared: a %s CRD (%s -> %s), which Kubernetes 1.22 and later do not serve", APIVersionV1beta1, oldCRD.APIVersion, newCRD.APIVersion)}}
}
