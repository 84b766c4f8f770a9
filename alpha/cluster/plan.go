package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
	"github.com/fastopm/fastopm/pkg/registry"
)

// The steps of the InstallPlan OLM's catalog operator writes for a
// namespace's resolution, before anyone approves it: what
// operator-lifecycle-manager v0.46.0 builds in
// pkg/controller/registry/resolver (steps.go: NewStepsFromBundle,
// NewStepResourceFromBundle, NewSubscriptionStepResource; rbac.go;
// step_resolver.go: ResolveSteps) and operator-framework/api's
// OrderSteps, with the manifests byte for byte as OLM writes them.

// Step is one step of an InstallPlan (status.plan[]), in OLM's own type:
// the CSV it resolves, the resource (kind, name, group, version, catalog
// source and manifest) and its status.
type Step = v1alpha1.Step

// StepPropertiesAnnotation is the annotation in which OLM records a
// bundle's properties on the CSV it installs.
const StepPropertiesAnnotation = "operatorframework.io/properties"

// CatalogRef names a CatalogSource.
type CatalogRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

func (c CatalogRef) String() string { return c.Namespace + "/" + c.Name }

// PlanBundle is a bundle as a catalog's registry server hands it to OLM:
// GetBundle's answer, which is what OLM's resolver holds for a bundle with
// no image (ListBundles clears csvJson and objects of a bundle with one).
type PlanBundle struct {
	// Name is the bundle's name (the CSV name OLM resolves).
	Name    string
	Package string
	// Image is the bundle image. With one, OLM does not read the
	// catalog's objects: it makes a BundleLookup and unpacks the image.
	Image string
	// CSVJSON is the bundle's ClusterServiceVersion: its first
	// olm.bundle.object of that kind, or one synthesized from
	// olm.csv.metadata; nil when it has neither.
	CSVJSON []byte
	// Objects are the bundle's manifests as JSON (olm.bundle.object, in
	// order; the synthesized CSV for a bundle with olm.csv.metadata and no
	// objects).
	Objects [][]byte
	// Properties are the bundle's properties but olm.bundle.object and
	// olm.csv.metadata; Dependencies its olm.gvk.required and
	// olm.package.required as the registry's legacy dependencies.
	Properties   []property.Property
	Dependencies []property.Property
	// ObjectProperties counts its olm.bundle.object properties.
	ObjectProperties int
}

// NewPlanBundle reads a catalog bundle as the registry server serves it
// (pkg/registry's answer, the same bytes). pkg is its package (its icon
// and description go into a CSV synthesized from olm.csv.metadata); nil
// stands for a package without them.
func NewPlanBundle(bd *declcfg.Bundle, pkg *declcfg.Package) (*PlanBundle, error) {
	a, err := registry.ServedBundle(bd, pkg)
	if err != nil {
		return nil, err
	}
	b := &PlanBundle{
		Name:    a.CsvName,
		Package: a.PackageName,
		Image:   a.BundlePath,
		CSVJSON: a.CsvJSON,
		Objects: a.Objects,
	}
	for _, p := range a.Properties {
		b.Properties = append(b.Properties, property.Property{Type: p.Type, Value: p.Value})
	}
	for _, p := range a.Dependencies {
		b.Dependencies = append(b.Dependencies, property.Property{Type: p.Type, Value: p.Value})
	}
	for _, p := range bd.Properties {
		if p.Type == property.TypeBundleObject {
			b.ObjectProperties++
		}
	}
	return b, nil
}

// NewUnpackedBundle reads a bundle rendered from its image (or bundle
// directory: pkg/bundle's Render, as `--pull-bundles` reads images) as
// OLM's unpack Job hands it over: its manifests in file-name order (the
// order of the ConfigMap keys OLM reads; Render keeps that order in
// bd.Objects, while its olm.bundle.object properties put the CRDs first),
// and as its CSV the last manifest of that kind. Its properties are not
// used: OLM takes the BundleLookup's (UnpackedSteps).
func NewUnpackedBundle(bd *declcfg.Bundle) (*PlanBundle, error) {
	b := &PlanBundle{Name: bd.Name, Package: bd.Package, Image: bd.Image}
	if len(bd.Objects) == 0 {
		// Not rendered here: the objects of the properties, in their order.
		a, err := registry.ServedBundle(bd, nil)
		if err != nil {
			return nil, err
		}
		b.Objects, b.CSVJSON = a.Objects, a.CsvJSON
		b.ObjectProperties = len(a.Objects)
		return b, nil
	}
	for _, o := range bd.Objects {
		js := []byte(o)
		b.Objects = append(b.Objects, js)
		if property.IsCSV(js, nil) {
			b.CSVJSON = js
		}
	}
	b.ObjectProperties = len(b.Objects)
	return b, nil
}

// HasObjects reports whether the catalog carries the bundle's manifests
// (olm.bundle.object, or a CSV from olm.csv.metadata).
func (b *PlanBundle) HasObjects() bool { return len(b.Objects) > 0 }

// PlanSteps returns the steps OLM makes of bundle b for namespace ns, the
// bundle coming from CatalogSource src and replacing the CSV replaces
// (the installed CSV on an upgrade, else the catalog entry's replaces;
// "" for none): NewStepsFromBundle's steps, in its order, each with
// status Unknown:
//
//  1. the CSV, in namespace ns, with spec.replaces = replaces and the
//     bundle's properties in the operatorframework.io/properties
//     annotation;
//  2. every other object of the bundle, in the bundle's order (a Secret
//     becomes the kind BundleSecret);
//  3. per service account of the install strategy (see RBACForCSV for
//     their order): the ServiceAccount (not for "default"), its Roles,
//     RoleBindings, ClusterRoles and ClusterRoleBindings.
//
// OLM makes these steps from the catalog's content only for a bundle with
// no image; for one with an image it makes a BundleLookup (see
// NewBundleLookup) and takes the objects from the image once unpacked.
// The errors are OLM's.
func PlanSteps(b *PlanBundle, ns string, src CatalogRef, replaces string) ([]*Step, error) {
	resources, err := stepResources(b, ns, src, replaces)
	if err != nil {
		return nil, err
	}
	steps := make([]*Step, len(resources))
	for i, r := range resources {
		steps[i] = &Step{Resolving: b.Name, Resource: r, Status: v1alpha1.StepStatusUnknown}
	}
	return steps, nil
}

// stepResources is OLM's NewStepResourceFromBundle.
func stepResources(b *PlanBundle, ns string, src CatalogRef, replaces string) ([]v1alpha1.StepResource, error) {
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := json.Unmarshal(b.CSVJSON, csv); err != nil {
		return nil, err
	}
	if csv.APIVersion == "" {
		return nil, fmt.Errorf("bundle CSV %s missing APIVersion", csv.Name)
	}
	if csv.Kind == "" {
		return nil, fmt.Errorf("bundle CSV %s missing Kind", csv.Name)
	}
	csv.Namespace = ns
	csv.Spec.Replaces = replaces
	anno, err := propertiesAnnotation(b.Properties)
	if err != nil {
		return nil, fmt.Errorf("failed to construct properties annotation for %q: %w", csv.Name, err)
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations[StepPropertiesAnnotation] = anno

	r, err := stepResource(csv, csvGVK(csv), csv.ObjectMeta, src)
	if err != nil {
		return nil, err
	}
	out := []v1alpha1.StepResource{r}

	for _, obj := range b.Objects {
		u := &unstructured.Unstructured{}
		if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(obj), 10).Decode(u); err != nil {
			return nil, err
		}
		if u.GetKind() == v1alpha1.ClusterServiceVersionKind {
			continue
		}
		name := u.GetName()
		if name == "" {
			name = u.GetGenerateName()
		}
		r, err := stepResource(u, u.GroupVersionKind(), metav1.ObjectMeta{Name: name}, src)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}

	rbac, err := RBACForCSV(csv)
	if err != nil {
		return nil, err
	}
	for _, a := range rbac {
		if a.ServiceAccount.Name != "default" {
			r, err := stepResource(a.ServiceAccount, gvkServiceAccount, a.ServiceAccount.ObjectMeta, src)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		for _, o := range a.Roles {
			r, err := stepResource(o, gvkRole, o.ObjectMeta, src)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		for _, o := range a.RoleBindings {
			r, err := stepResource(o, gvkRoleBinding, o.ObjectMeta, src)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		for _, o := range a.ClusterRoles {
			r, err := stepResource(o, gvkClusterRole, o.ObjectMeta, src)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		for _, o := range a.ClusterRoleBindings {
			r, err := stepResource(o, gvkClusterRoleBinding, o.ObjectMeta, src)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// The kinds OLM infers for the objects it generates (they carry no
// apiVersion or kind in their manifests).
var (
	gvkServiceAccount     = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}
	gvkRole               = rbacv1.SchemeGroupVersion.WithKind("Role")
	gvkRoleBinding        = rbacv1.SchemeGroupVersion.WithKind("RoleBinding")
	gvkClusterRole        = rbacv1.SchemeGroupVersion.WithKind("ClusterRole")
	gvkClusterRoleBinding = rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")
	gvkSubscription       = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.SubscriptionKind)
	gvkCSV                = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ClusterServiceVersionKind)
)

// csvGVK is the CSV's kind as OLM's ownerutil reads it: as its apiVersion
// and kind state it, inferred when both are empty.
func csvGVK(csv *v1alpha1.ClusterServiceVersion) schema.GroupVersionKind {
	if gvk := csv.GroupVersionKind(); !gvk.Empty() {
		return gvk
	}
	return gvkCSV
}

// bundleSecretKind is the kind OLM gives a Secret of a bundle, to tell it
// from the pull secrets an InstallPlan copies.
const bundleSecretKind = "BundleSecret"

// stepResource is OLM's NewStepResourceFromObject: the object's manifest
// as apimachinery's JSON serializer writes it (encoding/json's Encoder:
// compact, HTML characters escaped, a line break at the end), its name
// (or generateName) and kind.
func stepResource(obj any, gvk schema.GroupVersionKind, meta metav1.ObjectMeta, src CatalogRef) (v1alpha1.StepResource, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(obj); err != nil {
		return v1alpha1.StepResource{}, err
	}
	name := meta.Name
	if name == "" {
		name = meta.GenerateName
	}
	r := v1alpha1.StepResource{
		Name:                   name,
		Kind:                   gvk.Kind,
		Group:                  gvk.Group,
		Version:                gvk.Version,
		Manifest:               buf.String(),
		CatalogSource:          src.Name,
		CatalogSourceNamespace: src.Namespace,
	}
	if r.Kind == "Secret" {
		r.Kind = bundleSecretKind
	}
	return r, nil
}

// propertiesAnnotation is OLM's projection.PropertiesAnnotationFromPropertyList:
// {"properties":[...]} through json.Marshal (values compacted, HTML
// characters escaped), {} for none.
func propertiesAnnotation(props []property.Property) (string, error) {
	type prop struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	var anno struct {
		Properties []prop `json:"properties,omitempty"`
	}
	for _, p := range props {
		anno.Properties = append(anno.Properties, prop{Type: p.Type, Value: json.RawMessage(p.Value)})
	}
	v, err := json.Marshal(&anno)
	if err != nil {
		return "", fmt.Errorf("failed to marshal properties annotation: %w", err)
	}
	return string(v), nil
}

// SubscriptionStep is the step OLM adds for a bundle that resolution
// installs and no Subscription of the namespace asks for (a dependency):
// a Subscription named <package>-<channel>-<catalog>-<catalog namespace>
// in ns, to channel of package in src, starting at startingCSV, with
// Automatic approval (NewSubscriptionStepResource).
func SubscriptionStep(ns, pkg, channel string, src CatalogRef, startingCSV string) (*Step, error) {
	sub := &v1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      strings.Join([]string{pkg, channel, src.Name, src.Namespace}, "-"),
		},
		Spec: &v1alpha1.SubscriptionSpec{
			CatalogSource:          src.Name,
			CatalogSourceNamespace: src.Namespace,
			Package:                pkg,
			Channel:                channel,
			StartingCSV:            startingCSV,
			InstallPlanApproval:    v1alpha1.ApprovalAutomatic,
		},
	}
	r, err := stepResource(sub, gvkSubscription, sub.ObjectMeta, src)
	if err != nil {
		return nil, err
	}
	return &Step{Resolving: startingCSV, Resource: r, Status: v1alpha1.StepStatusUnknown}, nil
}

// OrderSteps orders steps as OLM does before writing an InstallPlan
// (operator-framework/api's v1alpha1.OrderSteps): every CSV, then every
// CRD, then the rest, each group in the order given.
func OrderSteps(steps []*Step) []*Step { return v1alpha1.OrderSteps(steps) }

// The reason and message of a BundleLookup's conditions when OLM makes it
// (pkg/controller/bundle).
const (
	bundleLookupConditionPacked = v1alpha1.BundleLookupConditionType("BundleLookupNotPersisted")
	notUnpackedReason           = "BundleNotUnpacked"
	notUnpackedMessage          = "bundle contents have not yet been persisted to installplan status"
	jobNotStartedReason         = "JobNotStarted"
	jobNotStartedMessage        = "unpack job not yet started"
)

// NewBundleLookup is what OLM makes, instead of steps, for a bundle with
// an image (ResolveSteps): a BundleLookup naming the image, the CSV, what
// it replaces and its CatalogSource, pending, with the properties OLM's
// resolver holds for the bundle (EntryProperties) in the annotation form.
// OLM then unpacks the image with a Job into a ConfigMap in the
// CatalogSource's namespace, and only once that is done writes the
// InstallPlan, whose steps for this bundle reference the ConfigMap instead
// of holding manifests.
func NewBundleLookup(b *PlanBundle, src CatalogRef, replaces string) (v1alpha1.BundleLookup, error) {
	props, err := EntryProperties(b)
	if err != nil {
		return v1alpha1.BundleLookup{}, err
	}
	anno, err := propertiesAnnotation(props)
	if err != nil {
		return v1alpha1.BundleLookup{}, fmt.Errorf("failed to serialize operator properties for %q: %w", b.Name, err)
	}
	return v1alpha1.BundleLookup{
		Path:             b.Image,
		Identifier:       b.Name,
		Replaces:         replaces,
		CatalogSourceRef: &corev1.ObjectReference{Namespace: src.Namespace, Name: src.Name},
		Conditions: []v1alpha1.BundleLookupCondition{
			{Type: bundleLookupConditionPacked, Status: corev1.ConditionTrue, Reason: notUnpackedReason, Message: notUnpackedMessage},
			{Type: v1alpha1.BundleLookupPending, Status: corev1.ConditionTrue, Reason: jobNotStartedReason, Message: jobNotStartedMessage},
		},
		Properties: anno,
	}, nil
}

// EntryProperties are the properties OLM's resolver holds for a catalog
// bundle (source_registry.go: newOperatorFromBundle, EnsurePackageProperty):
// the served properties, then the legacy dependencies turned back into properties
// (olm.gvk → olm.gvk.required, olm.package → olm.package.required with
// "versionRange"), then olm.package if missing. A bundle with an image
// carries these into its BundleLookup, and from there into the
// properties annotation of its CSV.
func EntryProperties(b *PlanBundle) ([]property.Property, error) {
	props := append([]property.Property(nil), b.Properties...)
	for _, d := range b.Dependencies {
		switch d.Type {
		case property.TypeGVK:
			var v struct {
				Group   string `json:"group"`
				Version string `json:"version"`
				Kind    string `json:"kind"`
			}
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, fmt.Errorf("failed to translate legacy dependencies to properties: failed to unmarshal legacy 'olm.gvk' dependency: %w", err)
			}
			raw, err := json.Marshal(&v)
			if err != nil {
				return nil, err
			}
			props = append(props, property.Property{Type: property.TypeGVKRequired, Value: raw})
		case property.TypePackage:
			var v struct {
				PackageName  string `json:"packageName"`
				VersionRange string `json:"version"`
			}
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, fmt.Errorf("failed to translate legacy dependencies to properties: failed to unmarshal legacy 'olm.package' dependency: %w", err)
			}
			raw, err := json.Marshal(&struct {
				PackageName  string `json:"packageName"`
				VersionRange string `json:"versionRange"`
			}{v.PackageName, v.VersionRange})
			if err != nil {
				return nil, err
			}
			props = append(props, property.Property{Type: property.TypePackageRequired, Value: raw})
		}
	}
	for _, p := range props {
		if p.Type == property.TypePackage {
			return props, nil
		}
	}
	// The version is the served bundle's, from olm.package: none here.
	raw, err := json.Marshal(&struct {
		PackageName string `json:"packageName"`
		Version     string `json:"version"`
	}{b.Package, ""})
	if err != nil {
		return nil, err
	}
	return append(props, property.Property{Type: property.TypePackage, Value: raw}), nil
}

// PlanOperator is one bundle a namespace's resolution installs.
type PlanOperator struct {
	Bundle *PlanBundle
	// Source is the CatalogSource it comes from, Channel the channel
	// resolution took it from.
	Source  CatalogRef
	Channel string
	// Replaces is the CSV it replaces: the installed CSV on an upgrade,
	// else the catalog entry's replaces.
	Replaces string
	// NewSubscription is true when no Subscription of the namespace asks
	// for it (a dependency): OLM adds a Subscription step.
	NewSubscription bool
	// Unpacked is, for a bundle with an image, the bundle as read from
	// that image (`--pull-bundles`): OLM's steps once its unpack Job has
	// run. Without it such a bundle is only a BundleLookup.
	Unpacked *PlanBundle
}

// Plan is the content of the InstallPlan OLM writes for a namespace's
// resolution: its steps (status.plan), in OLM's order, and the
// BundleLookups of bundles with an image (status.bundleLookups).
type Plan struct {
	Namespace     string                  `json:"namespace"`
	Steps         []*Step                 `json:"steps"`
	BundleLookups []v1alpha1.BundleLookup `json:"bundleLookups,omitempty"`
	// Applied are the steps with the manifests OLM applies: Steps, but
	// for the steps of unpacked bundles, whose manifests in Steps are
	// references to the ConfigMap OLM unpacked them into. Effects and
	// Permissions read these.
	Applied []*Step `json:"-"`
}

// NewPlan builds the plan of namespace ns for the bundles its resolution
// installs or upgrades to, as OLM's ResolveSteps does after resolving:
// steps for bundles without an image, a BundleLookup for the others, a
// Subscription step for each that no Subscription asks for, then
// OrderSteps; then, as OLM's unpackBundles does before it writes the
// InstallPlan, the steps of the bundles with an image whose content is
// given (PlanOperator.Unpacked), after the others and not reordered, with
// their lookups' conditions cleared. OLM ranges over the resolved bundles
// in a random order; NewPlan keeps the order of ops.
func NewPlan(ns string, ops []PlanOperator) (*Plan, error) {
	p := &Plan{Namespace: ns, Steps: []*Step{}, BundleLookups: []v1alpha1.BundleLookup{}}
	type unpack struct {
		bundle *PlanBundle
		lookup int
	}
	var unpacks []unpack
	for _, op := range ops {
		if op.Bundle.Image == "" {
			steps, err := PlanSteps(op.Bundle, ns, op.Source, op.Replaces)
			if err != nil {
				return nil, fmt.Errorf("failed to turn bundle into steps: %s", err.Error())
			}
			p.Steps = append(p.Steps, steps...)
		} else {
			l, err := NewBundleLookup(op.Bundle, op.Source, op.Replaces)
			if err != nil {
				return nil, err
			}
			p.BundleLookups = append(p.BundleLookups, l)
			if op.Unpacked != nil {
				unpacks = append(unpacks, unpack{op.Unpacked, len(p.BundleLookups) - 1})
			}
		}
		if op.NewSubscription {
			s, err := SubscriptionStep(ns, op.Bundle.Package, op.Channel, op.Source, op.Bundle.Name)
			if err != nil {
				return nil, err
			}
			p.Steps = append(p.Steps, s)
		}
	}
	p.Steps = OrderSteps(p.Steps)
	p.Applied = append([]*Step(nil), p.Steps...)
	for _, u := range unpacks {
		l := &p.BundleLookups[u.lookup]
		steps, applied, err := UnpackedSteps(u.bundle, l, ns)
		if err != nil {
			return nil, fmt.Errorf("failed to turn bundle into steps: %v", err)
		}
		l.Conditions = nil
		p.Steps = append(p.Steps, steps...)
		p.Applied = append(p.Applied, applied...)
	}
	return p, nil
}

// UnpackedSteps returns the steps OLM adds to the InstallPlan for a bundle
// with an image once its unpack Job has copied the image's manifests into
// a ConfigMap (catalog/operator.go: unpackBundles): NewStepsFromBundle
// over the unpacked bundle, whose steps resolve the CSV's own name, whose
// CSV carries the BundleLookup's properties and replaces what the lookup
// replaces. image is the bundle read from its image (as `opm render`
// reads it: manifests in file-name order, which is the order of the
// ConfigMap's keys OLM reads them in). applied are the steps with their
// manifests, as OLM applies them; steps are the same with each manifest
// replaced by the reference to the ConfigMap OLM records in the
// InstallPlan.
func UnpackedSteps(image *PlanBundle, lookup *v1alpha1.BundleLookup, ns string) (steps, applied []*Step, err error) {
	unpacked := *image
	unpacked.Name = ""
	if image.CSVJSON != nil {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(image.CSVJSON, u); err == nil {
			unpacked.Name = u.GetName()
		}
	}
	unpacked.Properties = nil
	if lookup.Properties != "" {
		var anno struct {
			Properties []struct {
				Type  string          `json:"type"`
				Value json.RawMessage `json:"value"`
			} `json:"properties,omitempty"`
		}
		if err := json.Unmarshal([]byte(lookup.Properties), &anno); err != nil {
			return nil, nil, fmt.Errorf("failed to load bundle properties for %q: failed to unmarshal properties annotation: %w", lookup.Identifier, err)
		}
		for _, p := range anno.Properties {
			unpacked.Properties = append(unpacked.Properties, property.Property{Type: p.Type, Value: p.Value})
		}
	}
	var src CatalogRef
	if lookup.CatalogSourceRef != nil {
		src = CatalogRef{Name: lookup.CatalogSourceRef.Name, Namespace: lookup.CatalogSourceRef.Namespace}
	}
	applied, err = PlanSteps(&unpacked, ns, src, lookup.Replaces)
	if err != nil {
		return nil, nil, err
	}
	ref, err := json.Marshal(&struct {
		Kind                   string `json:"kind"`
		Name                   string `json:"name"`
		Namespace              string `json:"namespace"`
		CatalogSourceName      string `json:"catalogSourceName"`
		CatalogSourceNamespace string `json:"catalogSourceNamespace"`
		Replaces               string `json:"replaces"`
		Properties             string `json:"properties"`
	}{"ConfigMap", UnpackConfigMapName(lookup.Path), src.Namespace, src.Name, src.Namespace, lookup.Replaces, lookup.Properties})
	if err != nil {
		return nil, nil, err
	}
	for _, a := range applied {
		s := *a
		s.Resource.Manifest = string(ref)
		steps = append(steps, &s)
	}
	return steps, applied, nil
}

// IsUnpackedReference reports whether a step's manifest is OLM's
// reference to the ConfigMap it unpacked a bundle image into (as
// InstallPlans hold them for bundles with an image), not the object.
func IsUnpackedReference(manifest string) bool {
	if !strings.HasPrefix(manifest, `{"kind":"ConfigMap"`) {
		return false
	}
	var ref struct {
		Kind, Name, Namespace, CatalogSourceName, CatalogSourceNamespace string
	}
	if json.Unmarshal([]byte(manifest), &ref) != nil {
		return false
	}
	// OLM's refForStep: all of these set.
	return ref.Kind == "ConfigMap" && ref.Name != "" && ref.Namespace != "" && ref.CatalogSourceName != "" && ref.CatalogSourceNamespace != ""
}

// UnpackConfigMapName is the name of the ConfigMap OLM unpacks a bundle
// image into, in the CatalogSource's namespace: the SHA-256 of the image
// reference in hex, its last character cut (63 characters).
func UnpackConfigMapName(image string) string {
	h := fmt.Sprintf("%x", sha256.Sum256([]byte(image)))
	return h[:len(h)-1]
}
