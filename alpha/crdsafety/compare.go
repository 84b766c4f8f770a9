package crdsafety

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	versionhelper "k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validations/crd/existingfieldremoval"
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
// schemas did not change, which cannot report anything, and comparing two
// schemas node by node (schemaTree) rather than through crdify's copies of
// every property's subtree: linear in the schemas' size. Comparing every
// pair of served versions is quadratic in their number; past
// Limits.ServedProperties, it is not done, and past Limits.SchemaBytes a
// comparison stops: the answer then has a change of check "limit" that
// says so, whose verdicts are NotChecked.
type Checker struct {
	crd        *crdvalidator.Validator
	properties []validations.Comparator[apiextensionsv1.JSONSchemaProps]
	limits     Limits

	mu    sync.Mutex
	pairs map[pairKey]*pairResult
}

// pairKey identifies a comparison: the two manifests, and whether OLM v1
// renders the new one with a webhook conversion (CRD.ConversionWebhook).
type pairKey struct {
	old, new Digest
	webhook  bool
}

// Limits bound the work of comparing one pair of CRD manifests.
type Limits struct {
	// ServedProperties bounds the comparison of the served versions of
	// the new CRD with each other (and of the old CRD's, whose issues are
	// left out): the sum, over the pairs of versions to compare, of the
	// number of properties of the first version of the pair, each of
	// which is looked up in the second.
	ServedProperties int
	// SchemaBytes bounds the bytes of schema decoded and compared: each
	// property that differs from its counterpart is decoded, without its
	// properties and items, and compared (which counts 512 bytes more); a
	// property whose allOf, anyOf, oneOf, not or additionalProperties nest
	// deep is so decoded whole at each level.
	SchemaBytes int64
}

// DefaultLimits are NewChecker's limits (docs/crd-safety.md, "Limits").
var DefaultLimits = Limits{ServedProperties: 20_000_000, SchemaBytes: 64 << 20}

// NewChecker returns a Checker with operator-controller's crdify
// configuration and DefaultLimits.
func NewChecker() (*Checker, error) {
	return NewCheckerWithLimits(DefaultLimits)
}

// NewCheckerWithLimits returns a Checker with operator-controller's crdify
// configuration and the given limits.
func NewCheckerWithLimits(limits Limits) (*Checker, error) {
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
		limits:     limits,
		pairs:      map[pairKey]*pairResult{},
	}, nil
}

// Compare returns the incompatible changes from the CRDs of the old bundle
// to those of the new one, sorted. A CRD is compared with the CRD of the
// same name in old; a CRD that old does not have, or that new no longer
// carries, is not a change either OLM's check refuses. The only error is
// ctx's, when it is done before the comparison is.
func (c *Checker) Compare(ctx context.Context, old, new []CRD) ([]Change, error) {
	byName := make(map[string]*CRD, len(old))
	for i := range old {
		if _, ok := byName[old[i].Name]; !ok {
			byName[old[i].Name] = &old[i]
		}
	}
	var out []Change
	for _, n := range new {
		o := byName[n.Name]
		if o == nil || o.Digest == n.Digest && !hasOneOf(n.JSON) {
			continue
		}
		cs, err := c.pair(ctx, *o, n)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	sortChanges(out)
	return out, nil
}

func (c *Checker) pair(ctx context.Context, old, new CRD) ([]Change, error) {
	key := pairKey{old.Digest, new.Digest, new.ConversionWebhook}
	for {
		c.mu.Lock()
		p, ok := c.pairs[key]
		if !ok {
			p = &pairResult{done: make(chan struct{})}
			c.pairs[key] = p
		}
		c.mu.Unlock()
		if !ok {
			p.changes, p.err = c.compare(ctx, old, new)
			if p.err != nil {
				// Stopped: not an answer to remember.
				c.mu.Lock()
				delete(c.pairs, key)
				c.mu.Unlock()
			}
			close(p.done)
			return p.changes, p.err
		}
		select {
		case <-p.done: // another goroutine compared them, or stopped
			if p.err == nil {
				return p.changes, nil
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// pairResult is the comparison of two manifests, once done is closed;
// err is set when it was stopped.
type pairResult struct {
	done    chan struct{}
	changes []Change
	err     error
}

// compare runs the checks on one CRD of the old and the new bundle.
func (c *Checker) compare(ctx context.Context, oldCRD, newCRD CRD) ([]Change, error) {
	at := Change{CRD: newCRD.Name}
	if newCRD.APIVersion != APIVersionV1 || oldCRD.APIVersion != APIVersionV1 {
		return compareV1beta1(oldCRD, newCRD), nil
	}
	newJS, err := canonjson.Canonicalize(newCRD.JSON)
	if err != nil {
		at.Check, at.Message, at.V0, at.V1 = "invalid", fmt.Sprintf("the new CRD cannot be read: %v", err), Refuses, Refuses
		return []Change{at}, nil
	}
	oldJS, err := canonjson.Canonicalize(oldCRD.JSON)
	if err != nil || bytes.Equal(oldJS, newJS) && !hasOneOf(newJS) {
		// The same CRD, written another way; or an old CRD that could
		// never have been applied: nothing on a cluster to compare with.
		return nil, nil
	}
	nw, newSchemas, err := decodeSpec(newJS)
	if err != nil {
		at.Check, at.Message, at.V0, at.V1 = "invalid", fmt.Sprintf("the new CRD cannot be read: %v", err), Refuses, Refuses
		return []Change{at}, nil
	}
	old, oldSchemas, err := decodeSpec(oldJS)
	if err != nil {
		// The old bundle's CRD could never have been applied: nothing on
		// a cluster to compare with.
		return nil, nil
	}
	w := &budget{ctx: ctx, left: c.limits.SchemaBytes}
	res, err := c.run(w, old, nw, oldSchemas, newSchemas, newCRD.ConversionWebhook)
	if err != nil {
		if w.err != nil && w.err != errLimit {
			return nil, w.err // ctx's
		}
		at.Check, at.Message, at.V0, at.V1 = "invalid", err.Error(), Refuses, Refuses
		return []Change{at}, nil
	}
	return changes(at, old, nw, res), nil
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
	// OLM v0's CRD step applies the manifest as it is: a webhook that the
	// CSV declares (CRD.ConversionWebhook) is set after it, when the CSV is
	// installed, and does not make a failed validation a warning.
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
	if !res.compact {
		out = compactRemovedFields(out)
	}
	for _, vr := range res.same {
		ov, nv := version(old, vr.version), version(nw, vr.version)
		servedBoth := ov != nil && nv != nil && ov.Served && nv.Served
		for _, pr := range vr.properties {
			if !res.compact && underRemoved(removed, vr.version, pr.Property) {
				continue // the removal says it all
			}
			for _, r := range pr.ComparisonResults {
				for _, msg := range r.Errors {
					ch := at
					ch.Version, ch.Field, ch.Check, ch.Message, ch.V1 = vr.version, pr.Property, r.Name, ocMessage(r.Name, msg), Refuses
					if servedBoth && !webhook && tightens(r.Name, msg) {
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
					ch.Version, ch.Field, ch.Check, ch.Message, ch.V1 = vr.version, pr.Property, r.Name, ocMessage(r.Name, msg), Refuses
					out = append(out, ch)
				}
			}
		}
	}
	if res.limit != nil {
		ch := *res.limit
		ch.CRD = at.CRD
		out = append(out, ch)
	}
	return out
}

// results are crdify's findings, as its runner.Results holds them.
type results struct {
	crd    []validations.ComparisonResult
	same   []versionResult
	served []versionResult
	// limit, when set, says what was not compared, past a limit.
	limit *Change
	// compact says the removed fields are only the outermost ones, and
	// the same versions' properties none inside them (compareTrees):
	// changes need not look for them, which costs the square of a path's
	// length.
	compact bool
}

type versionResult struct {
	version    string // "v1", or "v1 -> v2"
	properties []validations.PropertyComparisonResult
	// later are the properties of the second version of a served pair
	// (at least those changes looks up).
	later map[string]bool
}

// compareCost is what comparing two properties costs besides their size,
// in Limits.SchemaBytes.
const compareCost = 512

// errLimit stops a comparison past Limits.SchemaBytes.
var errLimit = errors.New("past the limit")

// budget is what a comparison of two CRD manifests may still do; it
// stops it when its context is done.
type budget struct {
	ctx   context.Context
	left  int64 // bytes of schema still to decode and compare
	since int64 // work since ctx was last checked
	err   error // errLimit or ctx's error, once the comparison must stop
}

// spend counts n bytes of schema decoded or compared, and checks ctx
// about every mebibyte of them (a step, such as looking up a property,
// counts 64): every millisecond or so.
func (w *budget) spend(n int64) {
	w.left -= n
	if w.left < 0 && w.err == nil {
		w.err = errLimit
	}
	if w.since += n + 64; w.since >= 1<<20 && w.err == nil {
		w.since = 0
		w.err = w.ctx.Err()
	}
}

// step counts a step of the comparison.
func (w *budget) step() { w.spend(0) }

// run runs crdify's validations on the old and the new CRD, as its
// runner.Run does (see Checker), turning a panic of crdify on an unusual
// CRD into an error. old and nw have no schemas: oldSchemas and
// newSchemas hold them, by version, as canonical JSON. webhook says OLM
// v1 applies nw with a webhook conversion, which its manifest may not say
// (CRD.ConversionWebhook). The error is w's context's when it was done,
// or says why the CRDs cannot be compared.
func (c *Checker) run(w *budget, old, nw *apiextensionsv1.CustomResourceDefinition, oldSchemas, newSchemas map[string][]byte, webhook bool) (res results, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("crdify could not compare the CRDs: %v", p)
		}
	}()
	// What a limit stops: the change that says so. The same versions are
	// compared first: past them, OLM v0's verdict is known.
	stopped := func(where string, v0 Verdict) (results, error) {
		if w.err != errLimit {
			return res, w.err
		}
		res.limit = &Change{Version: where, Check: "limit", V0: v0, V1: NotChecked,
			Message: fmt.Sprintf("comparing the schemas is past the limit of %s of schema compared for one CRD: from here on, the CRD is not checked", mib(c.limits.SchemaBytes))}
		return res, nil
	}
	res.compact = true
	oldTrees, newTrees := treeCache{schemas: oldSchemas}, treeCache{schemas: newSchemas}
	// The CRDs that crdify's CRD-wide validations see: without their
	// schemas, which are compared here (existingFieldRemoval).
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
		if version(newP, ov.Name) == nil || bytes.Equal(oldSchemas[ov.Name], newSchemas[ov.Name]) {
			continue
		}
		errA, errB := validateSchemas(w, oldTrees.get(ov.Name), newTrees.get(ov.Name))
		switch {
		case w.err != nil:
			return stopped(ov.Name, NotChecked)
		case errA != nil:
			return res, fmt.Errorf("the old CRD's version %s: %w", ov.Name, errA)
		case errB != nil:
			return res, fmt.Errorf("the new CRD's version %s: %w", ov.Name, errB)
		}
		changed = append(changed, ov.Name)
	}
	res.crd = c.crd.Validate(oldP, newP)
	// Same versions (crdify's validators/version/same), and the fields
	// each removes (existingFieldRemoval, which the CRD-wide validations
	// did not see).
	var removed []string
	for _, name := range changed {
		f, err := c.compareTrees(w, oldTrees.get(name), newTrees.get(name), false, nil)
		if err != nil && err != errLimit {
			if w.err != nil {
				return res, w.err
			}
			return res, fmt.Errorf("the CRDs' version %s: %w", name, err)
		}
		res.same = append(res.same, versionResult{version: name, properties: f.props})
		for _, p := range f.removed {
			removed = append(removed, fmt.Sprintf("%v : %s.%s", existingfieldremoval.ErrRemovedExistingField, name, p))
		}
		if err != nil {
			break
		}
	}
	if len(removed) > 0 {
		res.crd = append(res.crd, validations.ComparisonResult{Name: "existingFieldRemoval", Errors: removed})
	}
	if w.err != nil {
		return stopped(res.same[len(res.same)-1].version, NotChecked) // where it stopped
	}
	// Served versions (crdify's validators/version/served, with
	// ConversionPolicyIgnore): skipped when the new CRD, as OLM v1 renders
	// it, converts through a webhook; else each pair of served versions of
	// the new CRD, less what the same pair of the old CRD already
	// reported.
	if webhook || nw.Spec.Conversion != nil && nw.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter {
		return res, nil
	}
	unchanged := func(name string) bool {
		_, ok := oldSchemas[name]
		return ok == (newSchemas[name] != nil) && oldTrees.digest(name) == newTrees.digest(name)
	}
	served := servedVersions(nw)
	oldServed := map[string]bool{}
	for _, v := range servedVersions(old) {
		oldServed[v] = true
	}
	// Each pair of the new CRD's served versions, a before b, and whether
	// the old CRD had it; skip says the pair has the same issues as before
	// (all left out).
	pairs := func(fn func(a, b string, had bool) bool) {
		for i, a := range served {
			for _, b := range served[i+1:] {
				had := oldServed[a] && oldServed[b]
				if had && unchanged(a) && unchanged(b) && !hasOneOf(newSchemas[a]) && !hasOneOf(newSchemas[b]) {
					continue
				}
				if !fn(a, b, had) {
					return
				}
			}
		}
	}
	// What comparing them costs at most: each property of the first
	// version of each pair looked up in the second, and of the old CRD's
	// same pair; and a little for each pair.
	const pairCost = 16
	left, over := c.limits.ServedProperties, false
	pairs(func(a, b string, had bool) bool {
		left -= pairCost
		if newTrees.digest(a) != newTrees.digest(b) {
			left -= len(newTrees.get(a).keys)
		}
		if had && oldTrees.digest(a) != oldTrees.digest(b) {
			left -= len(oldTrees.get(a).keys)
		}
		over = left < 0
		return !over
	})
	if over {
		res.limit = &Change{Check: "limit", V1: NotChecked,
			Message: fmt.Sprintf("%d served versions: comparing each pair of them (%d pairs) is past the limit of %d schema properties looked up: they are not checked against each other", len(served), len(served)*(len(served)-1)/2, c.limits.ServedProperties)}
		return res, nil
	}
	var at string // the pair compared
	pairs(func(a, b string, had bool) bool {
		at = a + " -> " + b
		var found []validations.PropertyComparisonResult
		var later map[string]bool
		found, later, err = c.comparePair(w, a, b, &newTrees, nil)
		if err != nil {
			err = fmt.Errorf("the new CRD's versions %s: %w", at, err)
			return false
		}
		if had && len(found) > 0 {
			// What the old CRD had, of the properties found.
			only := make(map[pathKey]bool, len(found))
			for _, p := range found {
				only[keyOf(p.Property)] = true
			}
			var known []validations.PropertyComparisonResult
			if known, _, err = c.comparePair(w, a, b, &oldTrees, only); err != nil {
				err = fmt.Errorf("the old CRD's versions %s: %w", at, err)
				return false
			}
			found = subtract(found, known)
		}
		if len(found) > 0 {
			res.served = append(res.served, versionResult{at, found, later})
		}
		return true
	})
	switch {
	case w.err != nil:
		return stopped(at, "")
	case err != nil:
		return res, err
	}
	return res, nil
}

// hasOneOf reports whether a CRD or a schema (JSON) may have a oneOf.
// crdify's oneOf check writes a oneOf's schemas with their String(),
// which prints the properties inside them with %v: pointers as their
// addresses, which differ between the old CRD and the new one, even when
// they are the same. So the issues the old CRD had between two served
// versions are not left out when their messages hold addresses, and an
// update that changes nothing there (the same CRD, byte for byte, too) is
// refused, by crdify's runner and by operator-controller: a CRD with a
// oneOf is compared whole, and the issues of its served versions that
// the old CRD had subtracted as crdify does, by their messages.
func hasOneOf(js []byte) bool { return bytes.Contains(js, []byte(`"oneOf"`)) }

// servedVersions are the names of a CRD's served versions, each once, in
// Kubernetes' version order, as crdify orders them.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		if v.Served && !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, v.Name)
		}
	}
	slices.SortFunc(out, versionhelper.CompareKubeAwareVersionStrings)
	return out
}

// mib writes n bytes in MiB.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// treeCache reads each version's schema once.
type treeCache struct {
	schemas map[string][]byte
	trees   map[string]*schemaTree
	digests map[string]digest
}

// digest identifies a version's schema (the same for two versions
// without schema); the served pairs compare each version's with many.
func (tc *treeCache) digest(version string) digest {
	if d, ok := tc.digests[version]; ok {
		return d
	}
	if tc.digests == nil {
		tc.digests = map[string]digest{}
	}
	d := digest(sha256.Sum256(tc.schemas[version]))
	tc.digests[version] = d
	return d
}

func (tc *treeCache) get(version string) *schemaTree {
	if t, ok := tc.trees[version]; ok {
		return t
	}
	if tc.trees == nil {
		tc.trees = map[string]*schemaTree{}
	}
	t := parseSchema(tc.schemas[version])
	tc.trees[version] = t
	return t
}

// comparePair compares the two versions of a served pair, and returns
// the properties of the second that changes looks up. With only, it
// compares only the properties of those paths, and each whether or not
// the second version has its parent: the issues to leave out of those
// found.
func (c *Checker) comparePair(w *budget, a, b string, trees *treeCache, only map[pathKey]bool) ([]validations.PropertyComparisonResult, map[string]bool, error) {
	if trees.digest(a) == trees.digest(b) {
		return nil, nil, nil
	}
	ta, tb := trees.get(a), trees.get(b)
	errA, errB := validateSchemas(w, ta, tb)
	switch {
	case w.err != nil:
		return nil, nil, w.err
	case errA != nil:
		return nil, nil, errA
	case errB != nil:
		return nil, nil, errB
	}
	f, err := c.compareTrees(w, ta, tb, true, only)
	return f.props, f.later, err
}

// findings are what crdify's CompareVersions(a, b) reports, its
// properties with an error, and for the same version of two CRDs, the
// fields a has that b has not.
type findings struct {
	props []validations.PropertyComparisonResult
	// later has, for a served pair, the properties of props, and their
	// parents, that b has.
	later map[string]bool
	// removed are the paths a has and b has not, but those inside one of
	// them (compactRemovedFields would leave them out).
	removed []string
}

// compareTrees compares a's properties with b's as crdify's
// CompareVersions does: each path of a (the last node with it) without
// its properties and items, with b's node of the same path, or with an
// empty schema when b has none. Only the nodes whose digests differ are
// decoded and compared. served says a and b are a pair of served versions
// of one CRD: then a property b does not have is compared only when b has
// its parent (changes leaves out the others), or with only, when its path
// is among only (whose issues are left out of another pair's); else a and
// b are the same version of the old and the new CRD, and a property b
// does not have is a removed field, whose comparison changes leaves out.
func (c *Checker) compareTrees(w *budget, a, b *schemaTree, served bool, only map[pathKey]bool) (f findings, err error) {
	if served {
		f.later = map[string]bool{}
	}
	anyRemoved := false
	var pending []finding
	for i := range a.nodes {
		if w.err == errLimit && !served {
			// The findings so far are kept; those inside a removed
			// field, which says it all, are left out, wherever it is.
			anyRemoved = true
			break
		}
		if w.err != nil {
			return f, w.err
		}
		w.step()
		key := a.nkeys[i]
		if !a.unique && a.keys[key] != int32(i) || only != nil && !only[key] {
			continue // a later node has its path: crdify's map holds that one
		}
		// Two versions of a schema mostly list the same paths in the
		// same order.
		j, inB := int32(i), b.unique && i < len(b.nkeys) && b.nkeys[i] == key
		if !inB {
			j, inB = b.keys[key]
		}
		n := &a.nodes[i]
		var sb *apiextensionsv1.JSONSchemaProps
		switch {
		case inB && a.own[i] == b.own[j] && !n.oneOf:
			continue // the same, but maybe for the description, not enforced
		case inB && a.own[i] == b.own[j]:
			// The same, but maybe for the description: crdify compares
			// the node when that differs (below), and its oneOf check may
			// then report the oneOf changed, when the oneOf's schemas
			// print pointer addresses (ocMessage).
			var err error
			if sb, err = w.decode(b, j); err != nil {
				return f, err
			}
		case inB:
			var err error
			if sb, err = w.decode(b, j); err != nil {
				return f, err
			}
		case !served:
			anyRemoved = true
			continue
		default:
			if sp, ok := a.strParent(int32(i)); ok && only == nil {
				if _, inB := b.keys[sp]; !inB {
					continue
				}
			}
			sb = &apiextensionsv1.JSONSchemaProps{}
		}
		sa, err := w.decode(a, int32(i))
		if err != nil {
			return f, err
		}
		if inB && equality.Semantic.DeepEqual(sa, sb) {
			continue
		}
		// A comparison costs about as much as decoding 512 bytes (the
		// copies, the comparators), and more the larger the properties;
		// go-cmp's diff, in crdify's unhandled check, about four times
		// more with each list nested in another (compareProperties).
		cost, nb := compareCost+int64(n.ownLen), int32(0)
		if inB {
			cost += int64(b.nodes[j].ownLen)
			nb = b.nodes[j].ownNest
		}
		if nest := max(n.ownNest, nb); nest <= maxListNest {
			cost <<= 2 * nest
		}
		w.spend(cost)
		if w.err != nil {
			continue // stops at the top of the loop
		}
		rs := c.compareProperties(sa, sb, max(n.ownNest, nb))
		if !slices.ContainsFunc(rs, func(r validations.ComparisonResult) bool { return len(r.Errors) > 0 }) {
			continue
		}
		if !served {
			// Maybe inside a removed field, which says it all: known
			// once every node has been looked at.
			pending = append(pending, finding{int32(i), rs})
			continue
		}
		path := a.path(int32(i))
		w.spend(int64(len(path)))
		f.props = append(f.props, validations.PropertyComparisonResult{Property: path, ComparisonResults: rs})
		f.later[path] = inB
		if sp, ok := a.strParent(int32(i)); ok {
			if _, inB := b.keys[sp]; inB {
				f.later[parent(path)] = true
			}
		}
	}
	var above []bool
	if anyRemoved {
		var outermost []int32
		above, outermost = removedFields(a, b)
		for _, i := range outermost {
			path := a.path(i)
			w.spend(int64(len(path)))
			f.removed = append(f.removed, path)
		}
	}
	for _, p := range pending {
		if above == nil || !above[p.node] {
			path := a.path(p.node)
			w.spend(int64(len(path)))
			f.props = append(f.props, validations.PropertyComparisonResult{Property: path, ComparisonResults: p.results})
		}
	}
	return f, w.err
}

// finding is what crdify found on a node.
type finding struct {
	node    int32
	results []validations.ComparisonResult
}

// decode decodes node i of t for comparison.
func (w *budget) decode(t *schemaTree, i int32) (*apiextensionsv1.JSONSchemaProps, error) {
	s, n, err := t.decode(i)
	w.spend(int64(n))
	if err != nil {
		return nil, pathError{t.path(i), err}
	}
	return s, nil
}

// removedFields finds the nodes of a whose paths b does not have, and
// that are not inside another such path (outermost): crdify's
// existingFieldRemoval, less what compactRemovedFields leaves out; and
// each node inside one (above), whose findings underRemoved leaves out.
// "Inside" is on the path strings, as underRemoved says it: a path is
// inside each of its cuts at a '.' or a '['.
func removedFields(a, b *schemaTree) (above []bool, outermost []int32) {
	isRemoved := func(k pathKey) bool {
		_, inA := a.keys[k]
		_, inB := b.keys[k]
		return inA && !inB
	}
	above = make([]bool, len(a.nodes))
	for i := range a.nodes { // a parent comes before its children
		n := &a.nodes[i]
		if n.parent >= 0 {
			up := above[n.parent] || isRemoved(a.nkeys[n.parent])
			k := a.nkeys[n.parent]
			for x := 0; x < len(n.seg) && !up; x++ {
				if x > 0 && (n.seg[x] == '.' || n.seg[x] == '[') && isRemoved(k) {
					up = true
				}
				k = k.extend(n.seg[x : x+1])
			}
			above[i] = up
		}
		if key := a.nkeys[i]; a.keys[key] == int32(i) && isRemoved(key) && !above[i] {
			outermost = append(outermost, int32(i))
		}
	}
	return above, outermost
}

// subtract removes from found the errors that known has for the same
// property and check (crdify's subtractExistingIssues), comparing their
// messages as crdify does, but for the lists of new required fields,
// which crdify writes in map order, and which are compared sorted (see
// ocMessage), and for oneOf messages that hold pointer addresses, which
// are never the same in crdify's (see hasOneOf).
func subtract(found, known []validations.PropertyComparisonResult) []validations.PropertyComparisonResult {
	had := map[string]bool{}
	for _, p := range known {
		for _, r := range p.ComparisonResults {
			for _, e := range r.Errors {
				had[p.Property+"\x00"+r.Name+"\x00"+sameIssue(r.Name, e)] = true
			}
		}
	}
	out := make([]validations.PropertyComparisonResult, 0, len(found))
	for _, p := range found {
		q := validations.PropertyComparisonResult{Property: p.Property}
		for _, r := range p.ComparisonResults {
			r.Errors = slices.DeleteFunc(slices.Clone(r.Errors), func(e string) bool {
				if r.Name == "oneOf" && holdsAddress(e) {
					// Never the old CRD's: crdify's addresses are those
					// of the new CRD's schemas and of the old one's,
					// which are live at once; ours may be the same
					// when the old CRD's are decoded into memory the
					// collector took back from the new one's.
					return false
				}
				return had[p.Property+"\x00"+r.Name+"\x00"+sameIssue(r.Name, e)]
			})
			q.ComparisonResults = append(q.ComparisonResults, r)
		}
		out = append(out, q)
	}
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
// list and map types, CEL rules). msg is crdify's message, as it is.
func tightens(check, msg string) bool {
	switch check {
	case "default", "description":
		return false
	case "pattern":
		return !strings.HasPrefix(msg, "pattern removed")
	case "nullable":
		return strings.HasPrefix(msg, "nullable removed")
	case "unhandled":
		_, diff, ok := strings.Cut(msg, "\n")
		if !ok {
			return true
		}
		parts := unhandledParts(diff)
		if len(parts) == 0 {
			return true
		}
		for _, p := range parts {
			switch p.field {
			case "Title", "Example", "ExternalDocs", "ID", "Schema", "XPreserveUnknownFields", "XMapType", "XListType", "XListMapKeys", "XValidations":
			default:
				return true
			}
		}
		return false
	}
	return true
}

// ocMessage words crdify's message as operator-controller v1.11.0's
// preflight does (crdupgradesafety.go): an unhandled change trimmed to
// the fields go-cmp's diff shows changed (conciseUnhandled); the others
// as crdify writes them, but for two things crdify writes differently
// from one run to the next: the new required fields, which crdify lists
// in map order, are sorted (one of crdify's orders); and the addresses
// that crdify's oneOf messages may hold (the Go structs inside a oneOf's
// schemas, printed with %v) are written 0x0.
func ocMessage(check, msg string) string {
	switch check {
	case "required":
		return sortedRequired(msg)
	case "unhandled":
		return conciseUnhandled(msg)
	case "oneOf":
		return maskAddresses(msg)
	}
	return msg
}

// sameIssue is what subtract compares of a message: crdify's message,
// the new required fields sorted (crdify compares them in map order, so
// that it may or may not leave out the same issue from one run to the
// next).
func sameIssue(check, msg string) string {
	if check == "required" {
		return sortedRequired(msg)
	}
	return msg
}

func sortedRequired(msg string) string {
	head, list, ok := strings.Cut(msg, "[")
	if !ok {
		return msg
	}
	names := strings.Fields(strings.TrimSuffix(list, "]"))
	slices.Sort(names)
	return head + "[" + strings.Join(names, " ") + "]"
}

// holdsAddress reports whether msg holds a pointer address fmt printed.
func holdsAddress(msg string) bool { return maskAddresses(msg) != msg }

// maskAddresses writes 0x0 for each pointer address fmt printed in msg
// (0x and at least 8 hexadecimal digits).
func maskAddresses(msg string) string {
	if !strings.Contains(msg, "0x") {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, "0x")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		j := i + 2
		for j < len(msg) && (msg[j] >= '0' && msg[j] <= '9' || msg[j] >= 'a' && msg[j] <= 'f') {
			j++
		}
		b.WriteString(msg[:i])
		if j-i-2 >= 8 && (i == 0 || !isHexOrIdent(msg[i-1])) {
			b.WriteString("0x0")
		} else {
			b.WriteString(msg[i:j])
		}
		msg = msg[j:]
	}
}

func isHexOrIdent(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// conciseUnhandled is crdify's "unhandled changes found :" followed by
// go-cmp's diff of two JSONSchemaProps, as operator-controller v1.11.0
// words it (conciseUnhandledMessage): "unhandled changes found (F old ->
// new; ...)", with one entry per name that a changed line of the diff
// (one starting with - or +, at any depth) gives before its first colon,
// in the order the names first appear; its value the last such line's of
// each sign, trimmed, "v1." taken out, a value that names JSONSchemaProps
// written "<complex value>", a missing one "<empty>"; an entry whose two
// values are the same left out, or said "(changed)" when only their
// untrimmed text differs.
func conciseUnhandled(msg string) string {
	const head = "unhandled changes found"
	if !strings.Contains(msg, head) {
		return msg
	}
	type value struct {
		set       bool
		word, raw string
	}
	type entry struct{ before, after value }
	var order []string
	entries := map[string]*entry{}
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if len(line) < 2 || line[0] != '-' && line[0] != '+' {
			continue
		}
		rest := strings.TrimSpace(line[1:])
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "\t"))
		rest = strings.TrimSuffix(rest, ",")
		name, raw, ok := strings.Cut(rest, ":")
		name, raw = strings.TrimSpace(name), strings.TrimSpace(raw)
		if !ok || name == "" {
			continue
		}
		e := entries[name]
		if e == nil {
			e = &entry{}
			entries[name] = e
			order = append(order, name)
		}
		v := value{set: true, word: unhandledWord(raw), raw: raw}
		if line[0] == '-' {
			e.before = v
		} else {
			e.after = v
		}
	}
	var details []string
	for _, name := range order {
		e := entries[name]
		if e.before.word == e.after.word && e.before.raw == e.after.raw {
			continue
		}
		before, after := e.before.word, e.after.word
		if !e.before.set {
			before = "<empty>"
		}
		if !e.after.set {
			after = "<empty>"
		}
		if e.before.word == e.after.word {
			after += " (changed)"
		}
		details = append(details, name+" "+before+" -> "+after)
	}
	if len(details) == 0 {
		return head
	}
	return head + " (" + strings.Join(details, "; ") + ")"
}

// unhandledWord is how conciseUnhandled writes a value of go-cmp's diff.
func unhandledWord(raw string) string {
	v := strings.TrimSpace(strings.TrimSuffix(raw, ","))
	switch v {
	case "":
		return "<empty>"
	case `""`:
		return v
	}
	v = strings.ReplaceAll(v, "v1.", "")
	if strings.Contains(v, "JSONSchemaProps") {
		return "<complex value>"
	}
	return v
}

// unhandledPart is one field of JSONSchemaProps that go-cmp's diff shows
// changed, and what unhandledSummary says of it.
type unhandledPart struct {
	field, text string
}

// unhandledParts reads go-cmp's diff of two JSONSchemaProps: the fields
// that changed, in the diff's order, each with its old and new values
// when each fits on one line.
func unhandledParts(diff string) []unhandledPart {
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
	parts := make([]unhandledPart, 0, len(order))
	for _, f := range order {
		c := changes[f]
		if c.multiline || c.old == "" && c.new == "" {
			parts = append(parts, unhandledPart{f, f + " changed"})
			continue
		}
		parts = append(parts, unhandledPart{f, fmt.Sprintf("%s %s -> %s", f, orNone(c.old), orNone(c.new))})
	}
	return parts
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
