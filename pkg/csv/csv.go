// Package csv holds the ClusterServiceVersion (CSV) types of OLM's
// operators.coreos.com/v1alpha1 API, written so that encoding/json decodes
// and encodes them exactly as the operator-framework/api types do: the same
// JSON names, the same field order, the same omitempty and omitzero rules and
// the same special encodings (spec.version as a tolerant semver string,
// timestamps as RFC 3339 strings or null).
//
// The types stop at the boundary of what opm needs. Fields whose upstream
// type is a large Kubernetes type (a Deployment spec, RBAC rules, webhook
// descriptions, label selectors, conditions) are kept as raw JSON: they
// round-trip unchanged, but their content is not type-checked the way the
// upstream types would check it on decode.
package csv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blang/semver/v4"
)

// Kind and APIVersion of a ClusterServiceVersion object.
const (
	Kind       = "ClusterServiceVersion"
	APIVersion = "operators.coreos.com/v1alpha1"
)

// InstallStrategyNameDeployment is the only install strategy OLM knows.
const InstallStrategyNameDeployment = "deployment"

// ClusterServiceVersion is an operators.coreos.com/v1alpha1
// ClusterServiceVersion.
type ClusterServiceVersion struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`

	Spec   Spec   `json:"spec"`
	Status Status `json:"status"`
}

// TypeMeta is the kind and apiVersion of an object (metav1.TypeMeta).
type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// ObjectMeta is an object's metadata (metav1.ObjectMeta). OwnerReferences
// and ManagedFields are kept as raw JSON.
type ObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	SelfLink                   string            `json:"selfLink,omitempty"`
	UID                        string            `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	CreationTimestamp          Time              `json:"creationTimestamp,omitempty,omitzero"`
	DeletionTimestamp          *Time             `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	OwnerReferences            []json.RawMessage `json:"ownerReferences,omitempty"`
	Finalizers                 []string          `json:"finalizers,omitempty"`
	ManagedFields              []json.RawMessage `json:"managedFields,omitempty"`
}

// GetAnnotations returns the object's annotations.
func (m *ObjectMeta) GetAnnotations() map[string]string { return m.Annotations }

// GetLabels returns the object's labels.
func (m *ObjectMeta) GetLabels() map[string]string { return m.Labels }

// Spec is a ClusterServiceVersionSpec.
type Spec struct {
	InstallStrategy              NamedInstallStrategy      `json:"install"`
	Version                      OperatorVersion           `json:"version,omitempty"`
	Maturity                     string                    `json:"maturity,omitempty"`
	CustomResourceDefinitions    CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`
	APIServiceDefinitions        APIServiceDefinitions     `json:"apiservicedefinitions,omitempty"`
	WebhookDefinitions           []json.RawMessage         `json:"webhookdefinitions,omitempty"`
	NativeAPIs                   []GroupVersionKind        `json:"nativeAPIs,omitempty"`
	MinKubeVersion               string                    `json:"minKubeVersion,omitempty"`
	DisplayName                  string                    `json:"displayName"`
	Description                  string                    `json:"description,omitempty"`
	Keywords                     []string                  `json:"keywords,omitempty"`
	Maintainers                  []Maintainer              `json:"maintainers,omitempty"`
	Provider                     AppLink                   `json:"provider,omitempty"`
	Links                        []AppLink                 `json:"links,omitempty"`
	Icon                         []Icon                    `json:"icon,omitempty"`
	ConversionWebhookDefinitions []json.RawMessage         `json:"conversionwebhookdefinitions,omitempty"`
	InstallModes                 []InstallMode             `json:"installModes,omitempty"`
	Replaces                     string                    `json:"replaces,omitempty"`
	Labels                       map[string]string         `json:"labels,omitempty"`
	Annotations                  map[string]string         `json:"annotations,omitempty"`
	Selector                     *json.RawMessage          `json:"selector,omitempty"`
	Cleanup                      CleanupSpec               `json:"cleanup,omitempty"`
	Skips                        []string                  `json:"skips,omitempty"`
	RelatedImages                []RelatedImage            `json:"relatedImages,omitempty"`
}

// NamedInstallStrategy is spec.install.
type NamedInstallStrategy struct {
	StrategyName string                    `json:"strategy"`
	StrategySpec StrategyDetailsDeployment `json:"spec,omitempty"`
}

// StrategyDetailsDeployment is spec.install.spec of the deployment strategy.
type StrategyDetailsDeployment struct {
	DeploymentSpecs    []StrategyDeploymentSpec        `json:"deployments"`
	Permissions        []StrategyDeploymentPermissions `json:"permissions,omitempty"`
	ClusterPermissions []StrategyDeploymentPermissions `json:"clusterPermissions,omitempty"`
}

// StrategyDeploymentSpec is one deployment of the install strategy. Spec is
// the raw apps/v1 DeploymentSpec.
type StrategyDeploymentSpec struct {
	Name  string            `json:"name"`
	Spec  json.RawMessage   `json:"spec"`
	Label map[string]string `json:"label,omitempty"`
}

// StrategyDeploymentPermissions is a service account and its raw RBAC
// policy rules.
type StrategyDeploymentPermissions struct {
	ServiceAccountName string            `json:"serviceAccountName"`
	Rules              []json.RawMessage `json:"rules"`
}

// StatusDescriptor describes a field of a custom resource's status block.
type StatusDescriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// SpecDescriptor describes a field of a custom resource's spec block.
type SpecDescriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// ActionDescriptor describes an action that can be performed on a custom
// resource.
type ActionDescriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// CRDDescription describes a custom resource definition the operator owns
// or requires.
type CRDDescription struct {
	Name              string                 `json:"name"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []APIResourceReference `json:"resources,omitempty"`
	StatusDescriptors []StatusDescriptor     `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []SpecDescriptor       `json:"specDescriptors,omitempty"`
	ActionDescriptor  []ActionDescriptor     `json:"actionDescriptors,omitempty"`
}

// APIServiceDescription describes an aggregated API the operator owns or
// requires.
type APIServiceDescription struct {
	Name              string                 `json:"name"`
	Group             string                 `json:"group"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DeploymentName    string                 `json:"deploymentName,omitempty"`
	ContainerPort     int32                  `json:"containerPort,omitempty"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []APIResourceReference `json:"resources,omitempty"`
	StatusDescriptors []StatusDescriptor     `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []SpecDescriptor       `json:"specDescriptors,omitempty"`
	ActionDescriptor  []ActionDescriptor     `json:"actionDescriptors,omitempty"`
}

// APIResourceReference is a Kubernetes resource type a custom resource uses.
type APIResourceReference struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// CustomResourceDefinitions lists the CRDs the operator owns and requires.
type CustomResourceDefinitions struct {
	Owned    []CRDDescription `json:"owned,omitempty"`
	Required []CRDDescription `json:"required,omitempty"`
}

// APIServiceDefinitions lists the aggregated APIs the operator owns and
// requires.
type APIServiceDefinitions struct {
	Owned    []APIServiceDescription `json:"owned,omitempty"`
	Required []APIServiceDescription `json:"required,omitempty"`
}

// GroupVersionKind is metav1.GroupVersionKind.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// InstallMode says whether the operator supports an install mode.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// CleanupSpec is spec.cleanup.
type CleanupSpec struct {
	Enabled bool `json:"enabled"`
}

// Maintainer is a person or team maintaining the operator.
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// AppLink is a named URL.
type AppLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Icon is a base64-encoded icon and its media type.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// RelatedImage is an image the operator uses.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Status is a ClusterServiceVersionStatus. Conditions, requirement statuses
// and pending deletions are kept as raw JSON.
type Status struct {
	Phase              string            `json:"phase,omitempty"`
	Message            string            `json:"message,omitempty"`
	Reason             string            `json:"reason,omitempty"`
	LastUpdateTime     *Time             `json:"lastUpdateTime,omitempty"`
	LastTransitionTime *Time             `json:"lastTransitionTime,omitempty"`
	Conditions         []json.RawMessage `json:"conditions,omitempty"`
	RequirementStatus  []json.RawMessage `json:"requirementStatus,omitempty"`
	CertsLastUpdated   *Time             `json:"certsLastUpdated,omitempty"`
	CertsRotateAt      *Time             `json:"certsRotateAt,omitempty"`
	Cleanup            CleanupStatus     `json:"cleanup,omitempty"`
}

// CleanupStatus is status.cleanup.
type CleanupStatus struct {
	PendingDeletion []json.RawMessage `json:"pendingDeletion,omitempty"`
}

// Parse decodes a CSV from JSON the way encoding/json decodes the upstream
// v1alpha1.ClusterServiceVersion: keys match case-insensitively, unknown
// keys are ignored, a value of the wrong JSON type is an error.
func Parse(data []byte) (*ClusterServiceVersion, error) {
	var c ClusterServiceVersion
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("decode ClusterServiceVersion: %w", err)
	}
	return &c, nil
}

// OperatorVersion is spec.version: a semantic version written as a JSON
// string and read tolerantly (a leading "v", surrounding spaces and a
// missing minor or patch number are accepted), as upstream's
// version.OperatorVersion does.
type OperatorVersion struct {
	semver.Version
}

// ErrShortVersion is returned for a version like "1.2-beta": a version with
// fewer than three numbers cannot carry pre-release or build metadata.
var ErrShortVersion = errors.New("short version cannot contain pre-release or build metadata")

// ParseTolerant parses a version leniently with the rules of blang/semver
// v3's ParseTolerant, which upstream's CSV type uses.
func ParseTolerant(s string) (semver.Version, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 3 {
		if strings.ContainsAny(parts[len(parts)-1], "+-") {
			return semver.Version{}, ErrShortVersion
		}
		for len(parts) < 3 {
			parts = append(parts, "0")
		}
		s = strings.Join(parts, ".")
	}
	return semver.Parse(s)
}

// MarshalJSON writes the version as a JSON string.
func (v OperatorVersion) MarshalJSON() ([]byte, error) {
	return json.Marshal(v.String())
}

// UnmarshalJSON reads a JSON string with ParseTolerant.
func (v *OperatorVersion) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	parsed, err := ParseTolerant(s)
	if err != nil {
		return fmt.Errorf("spec.version %q: %w", s, err)
	}
	v.Version = parsed
	return nil
}

// Time is metav1.Time: an RFC 3339 timestamp in JSON, null when zero.
type Time struct {
	time.Time
}

// IsZero reports whether the time is unset; it lets omitzero drop it.
func (t Time) IsZero() bool { return t.Time.IsZero() }

// MarshalJSON writes the time in UTC as RFC 3339, or null when zero.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.Time.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// UnmarshalJSON reads null or an RFC 3339 string.
func (t *Time) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	parsed, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = parsed.Local()
	return nil
}
