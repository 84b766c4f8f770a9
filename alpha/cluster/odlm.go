package cluster

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ODLMCommit is the commit of IBM/operand-deployment-lifecycle-manager
// whose types and controllers the ODLM answers follow (docs/cluster.md,
// "ODLM").
const ODLMCommit = "8a7ead97346da3ca34e2d318531f54dbe13b1e6f"

// ODLM's API group and the kinds read.
const (
	ODLMAPIVersion      = "operator.ibm.com/v1alpha1"
	KindOperandRegistry = "OperandRegistry"
	KindOperandRequest  = "OperandRequest"
	odlmGroup           = "operator.ibm.com"
	// odlmExcludedCatalogs is the registry annotation listing catalogs
	// (by name, comma-separated) ODLM does not choose.
	odlmExcludedCatalogs = "excluded-catalogsource"
)

// OperandRegistry is ODLM's OperandRegistry (api/v1alpha1,
// operandregistry_types.go): the same fields and json tags, but for its
// status, which ODLM writes and the answers do not read.
type OperandRegistry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OperandRegistrySpec `json:"spec,omitempty"`
}

// OperandRegistrySpec is ODLM's OperandRegistrySpec.
type OperandRegistrySpec struct {
	// Operators is a list of operator OLM definition.
	Operators []ODLMOperator `json:"operators,omitempty"`
}

// ODLMOperator is ODLM's Operator: one entry of an OperandRegistry, the
// operator whose Subscription ODLM creates when an OperandRequest names
// it.
type ODLMOperator struct {
	// A unique name for the operator whose operand may be deployed.
	Name string `json:"name"`
	// "private" (the default): only requested from the registry's
	// namespace; "public".
	Scope string `json:"scope,omitempty"`
	// "namespace" (the default): the operator goes in Namespace;
	// "cluster": in openshift-operators; "no-op": no Subscription.
	InstallMode string `json:"installMode,omitempty"`
	// The namespace of the operator (default: the registry's).
	Namespace string `json:"namespace,omitempty"`
	// The CatalogSource of the Subscription.
	SourceName      string `json:"sourceName,omitempty"`
	SourceNamespace string `json:"sourceNamespace,omitempty"`
	// The target namespaces of the OperatorGroup ODLM creates.
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
	PackageName      string   `json:"packageName"`
	ConfigName       string   `json:"configName,omitempty"`
	Channel          string   `json:"channel"`
	// Channels to fall back to when Channel is not available.
	FallbackChannels []string `json:"fallbackChannels,omitempty"`
	Description      string   `json:"description,omitempty"`
	// "Automatic" (the default) or "Manual".
	InstallPlanApproval v1alpha1.Approval            `json:"installPlanApproval,omitempty"`
	StartingCSV         string                       `json:"startingCSV,omitempty"`
	SubscriptionConfig  *v1alpha1.SubscriptionConfig `json:"subscriptionConfig,omitempty"`
	OperatorConfig      string                       `json:"operatorConfig,omitempty"`
	// UserManaged: the operator is installed by the user, not ODLM.
	UserManaged bool `json:"userManaged,omitempty"`
}

// ODLM's scopes and install modes.
const (
	ODLMScopePrivate       = "private"
	ODLMScopePublic        = "public"
	ODLMInstallModeCluster = "cluster"
	ODLMInstallModeNS      = "namespace"
	ODLMInstallModeNoop    = "no-op"
)

// OperandRequest is ODLM's OperandRequest (api/v1alpha1,
// operandrequest_types.go), but for its status.
type OperandRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OperandRequestSpec `json:"spec,omitempty"`
}

// OperandRequestSpec is ODLM's OperandRequestSpec.
type OperandRequestSpec struct {
	Requests []ODLMRequest `json:"requests"`
}

// ODLMRequest is ODLM's Request: operands of one OperandRegistry.
type ODLMRequest struct {
	Operands []ODLMOperand `json:"operands"`
	Registry string        `json:"registry"`
	// The registry's namespace (default: the request's; ReadODLM sets it).
	RegistryNamespace string `json:"registryNamespace,omitempty"`
	Description       string `json:"description,omitempty"`
}

// ODLMOperand is ODLM's Operand: a registry entry by name.
type ODLMOperand struct {
	Name         string                  `json:"name"`
	Bindings     map[string]ODLMBindable `json:"bindings,omitempty"`
	Kind         string                  `json:"kind,omitempty"`
	APIVersion   string                  `json:"apiVersion,omitempty"`
	InstanceName string                  `json:"instanceName,omitempty"`
	Spec         *runtime.RawExtension   `json:"spec,omitempty"`
}

// ODLMBindable is ODLM's Bindable (operandbindinfo_types.go).
type ODLMBindable struct {
	Secret    string           `json:"secret,omitempty"`
	Configmap string           `json:"configmap,omitempty"`
	Route     *ODLMRoute       `json:"route,omitempty"`
	Service   *ODLMServiceData `json:"service,omitempty"`
}

// ODLMRoute is ODLM's Route.
type ODLMRoute struct {
	Name string            `json:"name"`
	Data map[string]string `json:"data"`
}

// ODLMServiceData is ODLM's ServiceData.
type ODLMServiceData struct {
	Name string            `json:"name"`
	Data map[string]string `json:"data"`
}

// ODLM is what ReadODLM read: OperandRegistries with ODLM's defaults
// applied, and OperandRequests, each sorted by namespace and name.
type ODLM struct {
	Registries []*OperandRegistry
	Requests   []*OperandRequest
	// Skipped counts the objects of other kinds, by kind; Files the
	// files read.
	Skipped map[string]int
	Files   int

	origin map[ObjectKey]string
	seen   map[ObjectKey]any
}

// Origin says where the OperandRegistry or OperandRequest was read ("FILE",
// "FILE:LINE" for a document of several, "FILE:LINE: items[N]" in a YAML
// List, "FILE: items[N]" in a JSON one).
func (o *ODLM) Origin(k ObjectKey) string { return o.origin[k] }

// Registry returns the OperandRegistry ns/name, or nil.
func (o *ODLM) Registry(ns, name string) *OperandRegistry {
	for _, r := range o.Registries {
		if r.Namespace == ns && r.Name == name {
			return r
		}
	}
	return nil
}

// Operator returns the first entry of that name, as ODLM's
// OperandRegistry.GetOperator does (a copy), or nil.
func (r *OperandRegistry) Operator(name string) *ODLMOperator {
	for _, o := range r.Spec.Operators {
		if o.Name == name {
			return &o
		}
	}
	return nil
}

// ReadODLM reads the OperandRegistries and OperandRequests of paths: files
// as `kubectl get -o yaml` or `-o json` writes them (one object, a List,
// several YAML documents; any mix) and directories of such files (every
// .yaml, .yml and .json file below). Objects of other kinds are counted
// in Skipped. ODLM's defaults are applied as ODLM's GetOperandRegistry
// applies them on every read (scope private, installMode namespace,
// installPlanApproval Automatic, namespace the registry's) and as
// OperandRequest.GetRegistryKey does (registryNamespace the request's).
// A file that cannot be read, an object that cannot be decoded, one
// without a field ODLM's CRDs require, or one read twice with other
// content is an error naming the file and the object.
func ReadODLM(ctx context.Context, paths ...string) (*ODLM, error) {
	o := &ODLM{Skipped: map[string]int{}, origin: map[ObjectKey]string{}, seen: map[ObjectKey]any{}}
	r := &reader{s: &State{Skipped: o.Skipped, origin: map[ObjectKey]string{}}, each: o.object}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("odlm: %w", err)
		}
		if !st.IsDir() {
			err = r.file(ctx, p)
		} else {
			err = filepath.WalkDir(p, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() || !d.Type().IsRegular() || !isObjectFile(p) {
					return nil
				}
				return r.file(ctx, p)
			})
		}
		if err != nil {
			if strings.HasPrefix(err.Error(), "odlm: ") {
				return nil, err
			}
			// The reader's errors name the state; these are ODLM's files.
			if msg, ok := strings.CutPrefix(err.Error(), "state: "); ok {
				return nil, fmt.Errorf("odlm: %s", msg)
			}
			return nil, fmt.Errorf("odlm: %w", err)
		}
	}
	o.Files = r.s.Files
	// The defaults, once every object is read (a repeated object is
	// compared as written).
	for _, reg := range o.Registries {
		defaultRegistry(reg)
	}
	for _, req := range o.Requests {
		for i := range req.Spec.Requests {
			if req.Spec.Requests[i].RegistryNamespace == "" {
				req.Spec.Requests[i].RegistryNamespace = req.Namespace
			}
		}
	}
	sortObjects(o.Registries)
	sortObjects(o.Requests)
	o.seen = nil
	return o, nil
}

// object takes one object of a file.
func (o *ODLM) object(where string, h head, js []byte) error {
	group, version, _ := strings.Cut(h.APIVersion, "/")
	if group != odlmGroup || (h.Kind != KindOperandRegistry && h.Kind != KindOperandRequest) {
		o.Skipped[h.Kind]++
		return nil
	}
	if version != "v1alpha1" {
		o.Skipped[h.Kind+" ("+h.APIVersion+")"]++
		return nil
	}
	name := objectName(h)
	var obj namedObject
	var err error
	switch h.Kind {
	case KindOperandRegistry:
		reg := &OperandRegistry{}
		if err := decode(where, h, js, reg); err != nil {
			return fmt.Errorf("odlm: %s", strings.TrimPrefix(err.Error(), "state: "))
		}
		err = checkRegistry(reg)
		obj = reg
	case KindOperandRequest:
		req := &OperandRequest{}
		if err := decode(where, h, js, req); err != nil {
			return fmt.Errorf("odlm: %s", strings.TrimPrefix(err.Error(), "state: "))
		}
		err = checkRequest(req)
		obj = req
	}
	switch {
	case obj.GetName() == "":
		return fmt.Errorf("odlm: %s: %s without metadata.name", where, h.Kind)
	case obj.GetNamespace() == "":
		return fmt.Errorf("odlm: %s: %s %s without metadata.namespace (a namespaced kind)", where, h.Kind, name)
	case err != nil:
		return fmt.Errorf("odlm: %s: %s %s: %v", where, h.Kind, name, err)
	}
	k := ObjectKey{h.Kind, obj.GetNamespace(), obj.GetName()}
	if old, ok := o.seen[k]; ok {
		if reflect.DeepEqual(old, obj) {
			return nil
		}
		return fmt.Errorf("odlm: %s: %s is also in %s, with other content: give one of them", where, k, o.origin[k])
	}
	o.seen[k] = obj
	o.origin[k] = where
	switch obj := obj.(type) {
	case *OperandRegistry:
		o.Registries = append(o.Registries, obj)
	case *OperandRequest:
		o.Requests = append(o.Requests, obj)
	}
	return nil
}

// checkRegistry checks what ODLM's CRD requires of an OperandRegistry
// (each entry's name, packageName and channel are required; an empty
// name or package could not name anything) and the scope's enum.
func checkRegistry(r *OperandRegistry) error {
	for i, op := range r.Spec.Operators {
		switch {
		case op.Name == "":
			return fmt.Errorf("spec.operators[%d] has no name", i)
		case op.PackageName == "":
			return fmt.Errorf("spec.operators[%d] (%s) has no packageName", i, op.Name)
		case op.Scope != "" && op.Scope != ODLMScopePrivate && op.Scope != ODLMScopePublic:
			return fmt.Errorf("spec.operators[%d] (%s): scope %q is neither public nor private", i, op.Name, op.Scope)
		}
	}
	return nil
}

// checkRequest checks what ODLM's CRD requires of an OperandRequest.
func checkRequest(r *OperandRequest) error {
	for i, req := range r.Spec.Requests {
		if req.Registry == "" {
			return fmt.Errorf("spec.requests[%d] has no registry", i)
		}
		for j, op := range req.Operands {
			if op.Name == "" {
				return fmt.Errorf("spec.requests[%d].operands[%d] has no name", i, j)
			}
		}
	}
	return nil
}

// defaultRegistry applies the defaults ODLM's GetOperandRegistry
// (controllers/operator/manager.go) applies to every registry it reads.
func defaultRegistry(r *OperandRegistry) {
	for i := range r.Spec.Operators {
		op := &r.Spec.Operators[i]
		if op.Scope == "" {
			op.Scope = ODLMScopePrivate
		}
		if op.InstallMode == "" {
			op.InstallMode = ODLMInstallModeNS
		}
		if op.InstallPlanApproval == "" {
			op.InstallPlanApproval = v1alpha1.ApprovalAutomatic
		}
		if op.Namespace == "" {
			op.Namespace = r.Namespace
		}
	}
}

// PackageCatalog is one PackageManifest as ODLM reads it: a catalog
// (CatalogSource namespace and name) offering a package, the
// CatalogSource's spec.priority, and the package's channels there.
type PackageCatalog struct {
	Namespace, Name string
	Priority        int
	Channels        []string
}

// PackageCatalogs answers what ODLM asks the PackageManifest API: which
// catalogs offer package pkg, listed in namespace ns. OLM's packageserver
// lists there the packages of the CatalogSources of ns, then (when ns is
// not it) those of the global catalog namespace (openshift-marketplace
// on OpenShift); PackageManifests implements that over catalogs.
type PackageCatalogs interface {
	PackageCatalogs(ns, pkg string) []PackageCatalog
}

// CatalogPackages is one catalog's content as PackageManifests needs it:
// each package and its channels.
type CatalogPackages struct {
	Namespace, Name string
	Priority        int
	Packages        map[string][]string
}

// PackageManifests lists catalogs' packages as OLM's packageserver
// (pkg/package-server/provider/registry.go, List) lists PackageManifests
// in a namespace: the catalogs of that namespace, then those of
// GlobalNamespace.
type PackageManifests struct {
	GlobalNamespace string
	Catalogs        []CatalogPackages
}

// PackageCatalogs implements PackageCatalogs.
func (p *PackageManifests) PackageCatalogs(ns, pkg string) []PackageCatalog {
	var out []PackageCatalog
	add := func(in string) {
		for _, c := range p.Catalogs {
			if chs, ok := c.Packages[pkg]; ok && c.Namespace == in {
				out = append(out, PackageCatalog{Namespace: c.Namespace, Name: c.Name, Priority: c.Priority, Channels: chs})
			}
		}
	}
	add(ns)
	if ns != p.GlobalNamespace {
		add(p.GlobalNamespace)
	}
	return out
}
