package olmv1

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Config is how operator-controller is set up, and the ClusterExtension's
// namespace and configuration, as far as they decide whether a bundle
// installs.
type Config struct {
	// InstallNamespace is the ClusterExtension's spec.namespace. Only the
	// watchNamespace checks read it; when it is "" and a WatchNamespace is
	// given, Check takes the one that suits the bundle (the watch
	// namespace for an OwnNamespace-only bundle, another one otherwise)
	// and notes it.
	InstallNamespace string
	// WatchNamespace is spec.config.inline.watchNamespace ("" for none).
	WatchNamespace string
	// SingleOwnNamespace is the SingleOwnNamespaceInstallSupport feature
	// gate (alpha, off by default): without it a bundle must support the
	// AllNamespaces install mode.
	SingleOwnNamespace bool
	// NoWebhookProvider says operator-controller runs with neither
	// certificate provider feature gate (WebhookProviderCertManager and
	// WebhookProviderOpenshiftServiceCA, both on by default): then
	// bundles with webhooks are refused.
	NoWebhookProvider bool
}

// Status is whether OLM v1 can install a bundle.
type Status string

// The statuses.
const (
	Installable    Status = "installable"
	NotInstallable Status = "not installable"
	// Unknown: no reason was found, but the catalog carries no bundle
	// objects to check (only its olm.csv.metadata, if that).
	Unknown Status = "unknown"
)

// Installability is Check's answer.
type Installability struct {
	Bundle string `json:"bundle"`
	Status Status `json:"status"`
	// Reasons are every reason OLM v1 refuses the bundle, in
	// operator-controller's words, in the order it checks them (it stops
	// at the first failing step; this reports them all).
	Reasons []string `json:"reasons,omitempty"`
	// Notes are what an install needs that a catalog cannot tell: a
	// certificate provider for webhooks, the missing manifests.
	Notes []string `json:"notes,omitempty"`
	// Checked says what was checked: "bundle objects",
	// "olm.csv.metadata only" or "properties only".
	Checked string `json:"checked"`
}

// Check answers whether OLM v1 (with cfg) can install the bundle b:
// the resolver's validation (no dependencies), the manifest provider's
// checks (no owned API services, webhooks only with a certificate
// provider, install modes), the registry+v1 validators, the render
// options and the CRD generator's checks. With only olm.csv.metadata,
// the install-mode and API-service checks run on it; with neither, only
// the dependencies are checked.
func Check(b *Bundle, cfg Config) *Installability { return CheckWith(b, nil, cfg) }

// CheckWith is Check with the bundle's manifests read elsewhere (from its
// image) when m is not nil.
func CheckWith(b *Bundle, m *Manifest, cfg Config) *Installability {
	out := &Installability{Bundle: b.Name}
	for _, d := range b.Dependencies {
		out.Reasons = append(out.Reasons, dependencyMessage(b.Name, d))
	}
	switch {
	case m != nil:
		out.Checked = "bundle image"
	case b.HasObjects():
		m = b.Manifest()
		out.Checked = "bundle objects"
		if m == nil {
			m = &Manifest{Errors: []string{"the bundle's manifests could not be read"}, unreadable: true}
		}
	case b.csvMeta != nil:
		m = &Manifest{CSV: true, InstallMode: b.csvMeta.InstallModes, OwnedAPIServices: b.csvMeta.ownedAPIServices}
		out.Checked = "olm.csv.metadata only"
	default:
		out.Checked = "properties only"
	}
	if m != nil {
		if cfg.WatchNamespace != "" && cfg.InstallNamespace == "" {
			// A ClusterExtension always has a namespace: take the one
			// that suits the bundle, and say so.
			modes := supportedModes(m)
			cfg.InstallNamespace = "operators"
			if modes[OwnNamespace] && !modes[SingleNamespace] {
				cfg.InstallNamespace = cfg.WatchNamespace
			} else if cfg.InstallNamespace == cfg.WatchNamespace {
				cfg.InstallNamespace = "operators-install"
			}
			out.Notes = append(out.Notes, fmt.Sprintf("checked with install namespace %q (no install namespace was given)", cfg.InstallNamespace))
		}
		out.Reasons = append(out.Reasons, checkManifest(b.Package, m, cfg)...)
		if modes := supportedModes(m); !modes[AllNamespaces] && !cfg.SingleOwnNamespace && (modes[OwnNamespace] || modes[SingleNamespace]) {
			out.Notes = append(out.Notes, "with the SingleOwnNamespaceInstallSupport feature gate and a watchNamespace (--watch-namespace), OLM v1 installs it in "+
				strings.Join(slices.DeleteFunc([]string{OwnNamespace, SingleNamespace}, func(s string) bool { return !modes[s] }), " or ")+" mode")
		}
		if len(m.Webhooks) > 0 && !cfg.NoWebhookProvider {
			out.Notes = append(out.Notes, "its webhooks need a certificate provider on the cluster: cert-manager (OLM v1's default) or OpenShift's service CA")
		}
	}
	switch {
	case len(out.Reasons) > 0:
		out.Status = NotInstallable
	case out.Checked != "bundle objects" && out.Checked != "bundle image":
		out.Status = Unknown
		out.Notes = append(out.Notes, "unknown: the catalog carries no bundle objects (pull the bundle image to check them)")
	default:
		out.Status = Installable
	}
	return out
}

// checkManifest runs the manifest provider's checks, the validators, the
// render options' checks and the CRD generator's.
func checkManifest(pkg string, m *Manifest, cfg Config) []string {
	var out []string
	out = append(out, m.Errors...)
	if m.unreadable {
		// Its error says why; nothing else can be checked.
		return out
	}
	if !m.CSV {
		return append(out, `no ClusterServiceVersion found in "manifests"`)
	}
	// applier.RegistryV1ManifestProvider.Get
	if m.OwnedAPIServices > 0 {
		out = append(out, "unsupported bundle: apiServiceDefintions are not supported")
	}
	if len(m.Webhooks) > 0 && cfg.NoWebhookProvider {
		out = append(out, "unsupported bundle: webhookDefinitions are not supported")
	}
	modes := supportedModes(m)
	if !cfg.SingleOwnNamespace && !modes[AllNamespaces] {
		out = append(out, "unsupported bundle: bundle does not support AllNamespaces install mode")
	}
	if !modes[AllNamespaces] && !modes[SingleNamespace] && !modes[OwnNamespace] {
		out = append(out, "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes")
	}
	targets, cfgErr := configTargets(modes, cfg)
	if cfgErr != "" {
		out = append(out, "invalid ClusterExtension configuration: invalid configuration: "+cfgErr)
	}
	// render.BundleValidator: the registry+v1 validators, in their order.
	out = append(out, validate(pkg, m)...)
	// render.Options.validate: the target namespaces, when the install
	// modes passed (else its error is only a consequence of theirs).
	if cfgErr == "" && (modes[AllNamespaces] || (cfg.SingleOwnNamespace && (modes[SingleNamespace] || modes[OwnNamespace]))) {
		if err := targetNamespacesError(modes, cfg.InstallNamespace, targets); err != "" {
			out = append(out, err)
		}
	}
	// generators.BundleCRDGenerator
	conv := map[string]bool{}
	for _, w := range m.Webhooks {
		if w.Type == webhookConversion {
			for _, c := range w.ConversionCRDs {
				conv[c] = true
			}
		}
	}
	for _, c := range m.CRDs {
		if conv[c.Name] && c.PreserveUnknownFields {
			out = append(out, fmt.Sprintf("custom resource definition '%s' must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion", c.Name))
		}
	}
	return out
}

func supportedModes(m *Manifest) map[string]bool {
	out := map[string]bool{}
	for _, im := range m.InstallMode {
		if im.Supported {
			out[im.Type] = true
		}
	}
	return out
}

func sortedModes(modes map[string]bool) string {
	return "[" + strings.Join(slices.Sorted(maps.Keys(modes)), " ") + "]"
}

func listString(s []string) string { return fmt.Sprintf("%v", s) }

var namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// configTargets checks the ClusterExtension's watchNamespace against the
// bundle's configuration schema (RegistryV1.GetConfigSchema), as
// operator-controller does when the SingleOwnNamespaceInstallSupport gate
// is on or a configuration is given, and returns the target namespaces
// the bundle renders for.
func configTargets(modes map[string]bool, cfg Config) ([]string, string) {
	var targets []string
	if modes[AllNamespaces] {
		targets = []string{""}
	}
	if !cfg.SingleOwnNamespace && cfg.WatchNamespace == "" {
		return targets, ""
	}
	configurable := modes[SingleNamespace] || modes[OwnNamespace]
	ns := cfg.WatchNamespace
	switch {
	case !configurable && ns != "":
		return nil, `unknown field "watchNamespace"`
	case !configurable:
		return targets, ""
	case ns == "" && !modes[AllNamespaces]:
		return nil, `required field "watchNamespace" is missing`
	case ns == "":
		return targets, ""
	}
	if msg := watchNamespaceErrors(modes, ns, cfg.InstallNamespace); msg != "" {
		return nil, msg
	}
	return []string{ns}, ""
}

// watchNamespaceErrors is config.UnmarshalConfig's message for a
// watchNamespace the bundle's configuration schema refuses ("" when it
// takes it). The schema's string is checked as santhosh-tekuri/jsonschema
// v6 checks it: its format (the OwnNamespace-only or SingleNamespace-only
// rule, skipped without an install namespace) alone when that fails,
// else its length and pattern, each failing one reported. With
// AllNamespaces the value may also be null (an anyOf): the anyOf, the
// null branch's type and the string branch's errors ("validation failed"
// heading two) are all reported. One error is given as it is, several as
// a list after "multiple errors found:".
func watchNamespaceErrors(modes map[string]bool, ns, installNS string) string {
	var str []string
	switch {
	case installNS == "":
	case modes[OwnNamespace] && !modes[SingleNamespace] && ns != installNS:
		str = []string{fmt.Sprintf(`invalid format for field "watchNamespace": %s is not valid ownNamespaceInstallMode: invalid value %q: must be %q (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`, schemaQuote(ns), ns, installNS)}
	case modes[SingleNamespace] && !modes[OwnNamespace] && ns == installNS:
		str = []string{fmt.Sprintf(`invalid format for field "watchNamespace": %s is not valid singleNamespaceInstallMode: invalid value %q: must be different from %q (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace`, schemaQuote(ns), ns, installNS)}
	}
	if len(str) == 0 {
		// The schema counts characters, not bytes.
		if n := utf8.RuneCountInString(ns); n > 63 {
			str = append(str, fmt.Sprintf(`field "watchNamespace" must have maximum length of 63 (len=%d)`, n))
		}
		if !namespaceName.MatchString(ns) {
			str = append(str, `field "watchNamespace" must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`)
		}
	}
	if len(str) == 0 {
		return ""
	}
	msgs := str
	if modes[AllNamespaces] {
		msgs = []string{`invalid value for field "watchNamespace"`, `invalid type for field "watchNamespace": got string, want null`}
		if len(str) > 1 {
			msgs = append(msgs, "validation failed")
		}
		msgs = append(msgs, str...)
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "multiple errors found:\n  - " + strings.Join(msgs, "\n  - ")
}

// targetNamespacesError is the renderer's error for target namespaces
// the bundle's install modes do not support (render.Options.validate), ""
// when they do.
func targetNamespacesError(modes map[string]bool, installNS string, targets []string) string {
	if err := validateTargetNamespaces(modes, installNS, targets); err != "" {
		return fmt.Sprintf("invalid option(s): invalid target namespaces %s: %s", listString(targets), err)
	}
	return ""
}

// schemaQuote quotes a string as the JSON schema validator's messages
// show it: Go's quoting between single quotes, a single quote escaped and
// a double one not.
func schemaQuote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}

// validateTargetNamespaces is render.validateTargetNamespaces.
func validateTargetNamespaces(modes map[string]bool, installNS string, targets []string) string {
	set := map[string]bool{}
	for _, t := range targets {
		set[t] = true
	}
	switch {
	case len(set) == 0:
		if modes[MultiNamespace] {
			return "at least one target namespace must be specified"
		}
		return "exactly one target namespace must be specified"
	case len(set) == 1 && set[""]:
		if modes[AllNamespaces] {
			return ""
		}
		return fmt.Sprintf("supported install modes %s do not support targeting all namespaces", sortedModes(modes))
	case len(set) == 1:
		if targets[0] == installNS {
			if !modes[OwnNamespace] {
				return fmt.Sprintf("supported install modes %s do not support targeting own namespace", sortedModes(modes))
			}
			return ""
		}
		if modes[SingleNamespace] {
			return ""
		}
	default:
		if !modes[OwnNamespace] && set[installNS] {
			return fmt.Sprintf("supported install modes %s do not support targeting own namespace", sortedModes(modes))
		}
		if modes[MultiNamespace] && !set[""] {
			return ""
		}
	}
	return fmt.Sprintf("supported install modes %s do not support target namespaces %s", sortedModes(modes), listString(targets))
}

// supportedKinds are the kinds registry+v1 allows besides the CSV and CRDs
// (operator-registry's pkg/lib/bundle IsSupported, v1.73.0).
var supportedKinds = map[string]bool{
	"ClusterServiceVersion": true, "CustomResourceDefinition": true, "Secret": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "ConfigMap": true, "ServiceAccount": true, "Service": true, "Role": true,
	"RoleBinding": true, "PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true, "ConsolePlugin": true, "NetworkPolicy": true, "PodMonitor": true,
}

// validators are registryv1.BundleValidator's checks, in its order
// (operator-controller v1.11.0, rukpak/render/registryv1/registryv1.go),
// each named as there; each reports every problem it finds, in its words
// and order.
var validators = []struct {
	name  string
	check func(pkg string, m *Manifest) []string
}{
	{"CheckDeploymentSpecUniqueness", checkDeploymentSpecUniqueness},
	{"CheckDeploymentNameIsDNS1123SubDomain", checkDeploymentNameIsDNS1123SubDomain},
	{"CheckCRDResourceUniqueness", checkCRDResourceUniqueness},
	{"CheckOwnedCRDExistence", checkOwnedCRDExistence},
	{"CheckPackageNameNotEmpty", checkPackageNameNotEmpty},
	{"CheckConversionWebhookSupport", checkConversionWebhookSupport},
	{"CheckWebhookDeploymentReferentialIntegrity", checkWebhookDeploymentReferentialIntegrity},
	{"CheckWebhookNameUniqueness", checkWebhookNameUniqueness},
	{"CheckWebhookNameIsDNS1123SubDomain", checkWebhookNameIsDNS1123SubDomain},
	{"CheckConversionWebhookCRDReferenceUniqueness", checkConversionWebhookCRDReferenceUniqueness},
	{"CheckConversionWebhooksReferenceOwnedCRDs", checkConversionWebhooksReferenceOwnedCRDs},
	{"CheckWebhookRules", checkWebhookRules},
	{"CheckObjectSupport", checkObjectSupport},
}

// validate runs the validators, in their order.
func validate(pkg string, m *Manifest) []string {
	var out []string
	for _, v := range validators {
		out = append(out, v.check(pkg, m)...)
	}
	return out
}

// checkDeploymentSpecUniqueness: each deployment of the install strategy
// has a name of its own; sorted by name.
func checkDeploymentSpecUniqueness(_ string, m *Manifest) []string {
	return duplicates(m.Deployments, "cluster service version contains duplicate strategy deployment spec '%s'")
}

// checkDeploymentNameIsDNS1123SubDomain: each deployment's name is a
// DNS-1123 subdomain; sorted by name, each name's errors sorted.
func checkDeploymentNameIsDNS1123SubDomain(_ string, m *Manifest) []string {
	bad := map[string][]string{}
	for _, d := range m.Deployments {
		if errs := validation.IsDNS1123Subdomain(d); len(errs) > 0 {
			slices.Sort(errs)
			bad[d] = errs
		}
	}
	var out []string
	for _, d := range slices.Sorted(maps.Keys(bad)) {
		out = append(out, fmt.Sprintf("invalid cluster service version strategy deployment name '%s': %s", d, strings.Join(bad[d], ", ")))
	}
	return out
}

func crdNames(m *Manifest) []string {
	out := make([]string, len(m.CRDs))
	for i, c := range m.CRDs {
		out[i] = c.Name
	}
	return out
}

// checkCRDResourceUniqueness: each CRD of the bundle once; sorted.
func checkCRDResourceUniqueness(_ string, m *Manifest) []string {
	return duplicates(crdNames(m), "bundle contains duplicate custom resource definition '%s'")
}

// checkOwnedCRDExistence: each CRD the CSV owns is in the bundle; sorted.
func checkOwnedCRDExistence(_ string, m *Manifest) []string {
	names := crdNames(m)
	missing := map[string]bool{}
	for _, o := range m.OwnedCRDs {
		if !slices.Contains(names, o) {
			missing[o] = true
		}
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(missing)) {
		out = append(out, fmt.Sprintf("cluster service definition references owned custom resource definition '%s' not found in bundle", n))
	}
	return out
}

// checkPackageNameNotEmpty: the bundle has a package name.
func checkPackageNameNotEmpty(pkg string, _ *Manifest) []string {
	if pkg == "" {
		return []string{"package name is empty"}
	}
	return nil
}

// checkConversionWebhookSupport: conversion webhooks only in a bundle
// that supports the AllNamespaces install mode and no other; one error
// per conversion webhook, in the CSV's order.
func checkConversionWebhookSupport(_ string, m *Manifest) []string {
	var names []string
	for _, w := range m.Webhooks {
		if w.Type == webhookConversion {
			names = append(names, w.GenerateName)
		}
	}
	modes := supportedModes(m)
	if len(names) == 0 || (len(modes) == 1 && modes[AllNamespaces]) {
		return nil
	}
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("bundle contains conversion webhook %q and supports install modes %s - conversion webhooks are only supported for bundles that only support AllNamespaces install mode", n, sortedModes(modes)))
	}
	return out
}

// checkWebhookDeploymentReferentialIntegrity: each webhook names a
// deployment of the install strategy; sorted by deployment, type, name.
func checkWebhookDeploymentReferentialIntegrity(_ string, m *Manifest) []string {
	byDeployment := map[string][]Webhook{}
	for _, w := range m.Webhooks {
		if !slices.Contains(m.Deployments, w.DeploymentName) {
			byDeployment[w.DeploymentName] = append(byDeployment[w.DeploymentName], w)
		}
	}
	var out []string
	for _, d := range slices.Sorted(maps.Keys(byDeployment)) {
		ws := byDeployment[d]
		slices.SortStableFunc(ws, func(a, b Webhook) int {
			return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.GenerateName, b.GenerateName))
		})
		for _, w := range ws {
			out = append(out, fmt.Sprintf("webhook of type '%s' with name '%s' references non-existent deployment '%s'", w.Type, w.GenerateName, w.DeploymentName))
		}
	}
	return out
}

// checkWebhookNameUniqueness: webhooks of one type have names of their
// own (webhooks of different types may share one); sorted by type, name.
func checkWebhookNameUniqueness(_ string, m *Manifest) []string {
	names := map[string]map[string]int{}
	for _, w := range m.Webhooks {
		if names[w.Type] == nil {
			names[w.Type] = map[string]int{}
		}
		names[w.Type][w.GenerateName]++
	}
	var out []string
	for _, t := range slices.Sorted(maps.Keys(names)) {
		for _, n := range slices.Sorted(maps.Keys(names[t])) {
			if names[t][n] > 1 {
				out = append(out, fmt.Sprintf("duplicate webhook '%s' of type '%s'", n, t))
			}
		}
	}
	return out
}

// checkWebhookNameIsDNS1123SubDomain: each webhook's name is a DNS-1123
// subdomain; sorted by type, name, each name's errors sorted.
func checkWebhookNameIsDNS1123SubDomain(_ string, m *Manifest) []string {
	invalid := map[string]map[string][]string{}
	for _, w := range m.Webhooks {
		if errs := validation.IsDNS1123Subdomain(w.GenerateName); len(errs) > 0 {
			slices.Sort(errs)
			if invalid[w.Type] == nil {
				invalid[w.Type] = map[string][]string{}
			}
			invalid[w.Type][w.GenerateName] = errs
		}
	}
	var out []string
	for _, t := range slices.Sorted(maps.Keys(invalid)) {
		for _, n := range slices.Sorted(maps.Keys(invalid[t])) {
			out = append(out, fmt.Sprintf("webhook of type '%s' has invalid name '%s': %s", t, n, strings.Join(invalid[t][n], ",")))
		}
	}
	return out
}

// checkConversionWebhookCRDReferenceUniqueness: no CRD is named by two
// conversion webhooks; sorted by CRD, the webhooks sorted.
func checkConversionWebhookCRDReferenceUniqueness(_ string, m *Manifest) []string {
	crdToWebhooks := map[string][]string{}
	for _, w := range m.Webhooks {
		if w.Type == webhookConversion {
			for _, c := range w.ConversionCRDs {
				crdToWebhooks[c] = append(crdToWebhooks[c], w.GenerateName)
			}
		}
	}
	var out []string
	for _, c := range slices.Sorted(maps.Keys(crdToWebhooks)) {
		if ws := crdToWebhooks[c]; len(ws) > 1 {
			out = append(out, fmt.Sprintf("conversion webhooks [%s] reference same custom resource definition '%s'", strings.Join(slices.Sorted(slices.Values(ws)), ","), c))
		}
	}
	return out
}

// checkConversionWebhooksReferenceOwnedCRDs: conversion webhooks name only
// CRDs the CSV owns; sorted by webhook, CRD.
func checkConversionWebhooksReferenceOwnedCRDs(_ string, m *Manifest) []string {
	var conv []Webhook
	for _, w := range m.Webhooks {
		if w.Type == webhookConversion {
			conv = append(conv, w)
		}
	}
	slices.SortStableFunc(conv, func(a, b Webhook) int { return strings.Compare(a.GenerateName, b.GenerateName) })
	var out []string
	for _, w := range conv {
		for _, c := range slices.Sorted(slices.Values(w.ConversionCRDs)) {
			if !slices.Contains(m.OwnedCRDs, c) {
				out = append(out, fmt.Sprintf("conversion webhook '%s' references custom resource definition '%s' not owned bundle", w.GenerateName, c))
			}
		}
	}
	return out
}

// checkWebhookRules: no admission webhook rule on every API group, on
// OLM v1's, or on webhook configurations; in the CSV's order.
func checkWebhookRules(_ string, m *Manifest) []string {
	var out []string
	for _, w := range m.Webhooks {
		if w.Type == webhookConversion {
			continue
		}
		for _, r := range w.Rules {
			for _, g := range r.APIGroups {
				if g == "olm.operatorframework.io" || g == "*" {
					out = append(out, fmt.Sprintf("webhook %q contains forbidden rule: admission webhook rules cannot reference API group %q", w.GenerateName, g))
				}
				if g == "admissionregistration.k8s.io" {
					for _, res := range r.Resources {
						switch strings.ToLower(res) {
						case "*", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations", "validatingwebhookconfiguration", "validatingwebhookconfigurations":
							out = append(out, fmt.Sprintf("webhook %q contains forbidden rule: admission webhook rules cannot reference resource %q for API group %q", w.GenerateName, res, g))
						}
					}
				}
			}
		}
	}
	return out
}

// checkObjectSupport: the bundle's other objects are of the kinds
// registry+v1 allows; in the bundle's order.
func checkObjectSupport(_ string, m *Manifest) []string {
	var out []string
	for _, o := range m.Others {
		if !supportedKinds[o.Kind] {
			out = append(out, fmt.Sprintf("unsupported resource %q with kind %q", o.Name, o.Kind))
		}
	}
	return out
}

// duplicates reports each name that occurs more than once, sorted.
func duplicates(names []string, format string) []string {
	seen, dup := map[string]bool{}, map[string]bool{}
	for _, n := range names {
		if seen[n] {
			dup[n] = true
		}
		seen[n] = true
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(dup)) {
		out = append(out, fmt.Sprintf(format, n))
	}
	return out
}
