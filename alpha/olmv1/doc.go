// Package olmv1 answers two questions with OLM v1's rules
// (operator-framework/operator-controller v1.11.0, with catalogd), from
// catalogs on disk rather than on a cluster:
//
//   - which bundle a ClusterExtension resolves to (Resolver.Resolve): a
//     package, optional channels, an optional version range in
//     ClusterExtension's syntax (Masterminds semver constraints), the
//     upgrade constraint policy (CatalogProvided or SelfCertified) and an
//     optional installed bundle; the resolver keeps the bundles of the
//     selected channels in the range that succeed the installed one
//     (replaces, skips or skipRange in any selected channel, or the
//     installed version itself), prefers bundles that olm.deprecations
//     does not deprecate, then the highest version and release, and
//     settles ties between catalogs by priority, failing with
//     operator-controller's own messages when nothing or several match;
//   - whether OLM v1 can install a registry+v1 bundle at all
//     (Check): its resolver refuses bundles that declare dependencies,
//     its manifest provider refuses aggregated API services and bundles
//     without the AllNamespaces install mode (unless a watch namespace is
//     configured), and its renderer runs thirteen validators over the
//     ClusterServiceVersion, CRDs and other objects.
//
// The rules are read from operator-controller's
// internal/operator-controller/resolve (catalog.go, validation.go),
// catalogmetadata/filter (successors.go, bundle_predicates.go),
// catalogmetadata/compare, bundleutil, applier/provider.go and
// rukpak/render (render.go, registryv1/validators, registryv1/generators)
// at v1.11.0, and restated here; the tests restate its own test cases.
package olmv1
