# Writes alpha/cluster/testdata/plan/catalog/catalog.json: small bundles shaped
# like OLM v0.46.0's resolver test helpers (util_test.go: csv, crd, bundle,
# bundleWithPermissions, withBundleObject), plus the edge cases of
# NewStepsFromBundle. Bundles have no image (OLM makes steps from the
# catalog's content) unless said.
import json, base64, sys
out = sys.argv[1]

def dep_spec(name, sa="sa"):
    return {"name": name, "spec": {"selector": {"matchLabels": {"app": name}}, "replicas": 1,
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"serviceAccountName": sa,
            "containers": [{"name": name + "-c1", "image": "docker.io/nginx:1.7.9", "ports": [{"containerPort": 80}]}]}}}}

def csv(name, replaces="", owned=(), required=(), perms=(), cperms=(), strategy="deployment", api="operators.coreos.com/v1alpha1", kind="ClusterServiceVersion", extra_meta=None):
    c = {"kind": kind, "apiVersion": api, "metadata": {"name": name, "creationTimestamp": None},
         "spec": {"install": {"strategy": strategy, "spec": {"deployments": [dep_spec(name)],
                  "permissions": list(perms) or None, "clusterPermissions": list(cperms) or None}},
                  "version": "0.0.0", "replaces": replaces,
                  "customresourcedefinitions": {"owned": [{"name": o[0], "version": o[1], "kind": o[2]} for o in owned],
                                                "required": [{"name": r[0], "version": r[1], "kind": r[2]} for r in required]},
                  "apiservicedefinitions": {}, "displayName": name, "provider": {}, "installModes": None},
         "status": {"cleanup": {}}}
    if api is None: del c["apiVersion"]
    if kind is None: del c["kind"]
    for k in [k for k, v in c["spec"]["install"]["spec"].items() if v is None]: del c["spec"]["install"]["spec"][k]
    if extra_meta: c["metadata"].update(extra_meta)
    return c

def crd_v1beta1(plural, group, kind, version):
    return {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1beta1", "metadata": {"name": plural + "." + group, "creationTimestamp": None},
            "spec": {"group": group, "names": {"plural": plural, "kind": kind}, "scope": "", "versions": [{"name": version, "served": True, "storage": True}]},
            "status": {"conditions": None, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": None}}

def crd_v1(plural, group, kind, versions):
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": plural + "." + group},
            "spec": {"group": group, "names": {"kind": kind, "plural": plural, "listKind": kind + "List", "singular": kind.lower()}, "scope": "Namespaced",
                     "versions": [{"name": v, "served": True, "storage": i == len(versions) - 1,
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}} for i, v in enumerate(versions)]}}

def rules(*rs):
    return [{"verbs": r[0], "apiGroups": r[1], "resources": r[2], **({"resourceNames": r[3]} if len(r) > 3 and r[3] else {}),
             **({"nonResourceURLs": r[4]} if len(r) > 4 else {})} for r in rs]

def obj(o, yaml_text=None):
    data = yaml_text.encode() if yaml_text is not None else json.dumps(o, separators=(",", ":")).encode()
    return {"type": "olm.bundle.object", "value": {"data": base64.b64encode(data).decode()}}

def gvk(g, v, k): return {"type": "olm.gvk", "value": {"group": g, "kind": k, "version": v}}
def gvkreq(g, v, k): return {"type": "olm.gvk.required", "value": {"group": g, "kind": k, "version": v}}

docs = []
def package(name, channel, entries, desc=None, icon=None):
    p = {"schema": "olm.package", "name": name, "defaultChannel": channel}
    if desc: p["description"] = desc
    if icon: p["icon"] = icon
    docs.append(p)
    docs.append({"schema": "olm.channel", "package": name, "name": channel, "entries": entries})

def bundle(pkg, name, version, objs, props=(), image=""):
    docs.append({"schema": "olm.bundle", "name": name, "package": pkg, "image": image,
                 "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": version}}] + list(props) + list(objs)})

pods = rules((["get"], [""], ["pods"]))
cms = rules((["get", "list"], [""], ["configmaps"]))

# TestNamespaceResolverRBAC: "NewSubscription/Permissions/ClusterPermissions" and
# "don't create default service accounts"; an owned CRD as bundle() adds it.
package("a", "alpha", [{"name": "a.v1"}, {"name": "a.v2", "replaces": "a.v1"}])
bundle("a", "a.v1", "1.0.0", [obj(csv("a.v1", owned=[("things.example.com", "v1", "Thing")],
                                      perms=[{"serviceAccountName": "test-sa", "rules": cms}],
                                      cperms=[{"serviceAccountName": "test-sa", "rules": cms}])),
                              obj(crd_v1beta1("things", "example.com", "Thing", "v1"))],
       props=[gvk("example.com", "v1", "Thing")])
bundle("a", "a.v2", "2.0.0", [obj(csv("a.v2", replaces="a.v1", owned=[("things.example.com", "v1", "Thing")],
                                      perms=[{"serviceAccountName": "default", "rules": cms}],
                                      cperms=[{"serviceAccountName": "default", "rules": cms}])),
                              obj(crd_v1("things", "example.com", "Thing", ["v1", "v2"]))],
       props=[gvk("example.com", "v1", "Thing"), gvk("example.com", "v2", "Thing")])

# TestResolver "AdditionalBundleObjects" (a RoleBinding) and ".../Service", with
# the other kinds a bundle may carry: Secret (BundleSecret), ConfigMap, a
# supported kind (PrometheusRule), an unsupported one (Deployment), one in YAML,
# numbers as apimachinery reads them.
package("b", "beta", [{"name": "b.v1"}])
bundle("b", "b.v1", "1.0.0", [
    obj(csv("b.v1", owned=[("widgets.example.com", "v1", "Widget")], required=[("things.example.com", "v1", "Thing")],
            extra_meta={"annotations": {"description": "Manages <widgets> & things   é"}},
            perms=[{"serviceAccountName": "b-operator", "rules": rules((["*"], [""], ["secrets"]), (["get", "list", "watch"], [""], ["configmaps", "pods"]))}])),
    obj(crd_v1("widgets", "example.com", "Widget", ["v1"])),
    obj({"kind": "RoleBinding", "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": "test-rb", "creationTimestamp": None}, "roleRef": {"apiGroup": "", "kind": "", "name": ""}}),
    obj({"kind": "Service", "metadata": {"name": "test-service", "creationTimestamp": None}, "spec": {}, "status": {"loadBalancer": {}}}),
    obj({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b-webhook-cert"}, "type": "Opaque", "data": {"tls.crt": "Y2VydA=="}}),
    obj(None, yaml_text="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b-config\ndata:\n  html: \"<b>&amp;</b>\"\n  z: \"1\"\n  a: \"2\"\n"),
    obj({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "b-rules"},
         "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "x > 1", "for": "5m", "labels": {"severity": "warning"}}]}],
                  "numbers": {"int": 3, "float": 1.5, "whole": 1.0, "exp": 1e3, "big": 12345678901234567890, "neg": -0.0, "small": 1e-7}}}),
    obj({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generateName": "b-extra-"}, "spec": {}}),
    obj({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "b-metrics-reader"},
         "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}),
], props=[gvk("example.com", "v1", "Widget"), gvkreq("example.com", "v1", "Thing"),
          {"type": "olm.package.required", "value": {"packageName": "a", "versionRange": ">=1.0.0"}},
          {"type": "example.com/note", "value": {"text": "a<b & c>d \u2028 é"}}])

# TestRBACForClusterServiceVersion, case "RoleBindings and one ClusterRoleBinding".
package("test-csv", "stable", [{"name": "test-csv.v1.1.0"}])
bundle("test-csv", "test-csv.v1.1.0", "1.1.0", [obj(csv("test-csv.v1.1.0",
    perms=[{"serviceAccountName": "test-service-account", "rules": pods},
           {"serviceAccountName": "test-service-account", "rules": rules((["get"], [""], ["deployments"]))},
           {"serviceAccountName": "second-service-account", "rules": pods}],
    cperms=[{"serviceAccountName": "test-service-account", "rules": pods}]))])
# ... and case "ClusterRoleBinding": service accounts only in clusterPermissions
# (no namespace), with the rules a security review flags.
package("cluster-only", "stable", [{"name": "cluster-only.v1.1.0"}])
bundle("cluster-only", "cluster-only.v1.1.0", "1.1.0", [obj(csv("cluster-only.v1.1.0",
    cperms=[{"serviceAccountName": "test-service-account", "rules": rules((["*"], ["*"], ["*"]), ([ "get"], [], [], None, ["/metrics", "*"]))},
            {"serviceAccountName": "second-service-account", "rules": rules((["impersonate"], [""], ["users", "groups", "serviceaccounts"]),
                                                                              (["bind", "escalate"], ["rbac.authorization.k8s.io"], ["clusterroles"]),
                                                                              (["get"], [""], ["secrets"], ["one-secret"]))}]))])

# Generated names around OLM's 63-character cut: Role bases of every length
# from 20 to 40, and several of 25 (which meet the cut exactly when the hash
# has 38 characters: the name then has 64).
package("names", "stable", [{"name": "names.v1"}])
bundle("names", "names.v1", "1.0.0", [obj(csv("names.v1",
    perms=[{"serviceAccountName": ("s" * n), "rules": pods} for n in range(11, 32)] +
          [{"serviceAccountName": "s" * 16, "rules": rules((["get"], [""], ["pods%d" % i]))} for i in range(6)],
    cperms=[{"serviceAccountName": "s" * 11, "rules": pods}]))])
package("a-very-long-operator-name-that-exceeds-the-limit", "stable", [{"name": "a-very-long-operator-name-that-exceeds-the-limit.v10.20.30"}])
bundle("a-very-long-operator-name-that-exceeds-the-limit", "a-very-long-operator-name-that-exceeds-the-limit.v10.20.30", "10.20.30",
       [obj(csv("a-very-long-operator-name-that-exceeds-the-limit.v10.20.30",
                perms=[{"serviceAccountName": "controller-manager", "rules": pods}],
                cperms=[{"serviceAccountName": "controller-manager", "rules": pods}],
                extra_meta={"uid": "1234", "labels": {"x": "y"}, "annotations": {"operatorframework.io/properties": "stale"}}))])

# A bundle with olm.csv.metadata and no objects: the server synthesizes its CSV
# from the metadata and the package's icon and description.
package("meta", "stable", [{"name": "meta.v1.0.0"}], desc="The package's description.", icon={"base64data": "PHN2Zz48L3N2Zz4=", "mediatype": "image/svg+xml"})
bundle("meta", "meta.v1.0.0", "1.0.0", [], image="quay.io/example/meta-bundle:v1.0.0", props=[
    {"type": "olm.csv.metadata", "value": {"displayName": "Meta", "installModes": [{"type": "AllNamespaces", "supported": True}],
                                           "annotations": {"capabilities": "Basic Install"}, "provider": {"name": "Example"}}}])

# NewStepsFromBundle's errors.
package("errors", "stable", [{"name": "no-apiversion.v1"}, {"name": "no-kind.v1", "replaces": "no-apiversion.v1"},
                             {"name": "bad-strategy.v1", "replaces": "no-kind.v1"}, {"name": "object-without-kind.v1", "replaces": "bad-strategy.v1"},
                             {"name": "no-csv.v1", "replaces": "object-without-kind.v1"}])
bundle("errors", "no-apiversion.v1", "1.0.0", [obj(csv("no-apiversion.v1", api="")), obj({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})])
bundle("errors", "no-kind.v1", "1.0.1", [obj(dict(csv("no-kind.v1"), kind="")), obj(dict(csv("no-kind.v1-copy"), kind="ClusterServiceVersion"))])
bundle("errors", "bad-strategy.v1", "1.0.2", [obj(csv("bad-strategy.v1", strategy="helm"))])
bundle("errors", "object-without-kind.v1", "1.0.3", [obj(csv("object-without-kind.v1")), obj({"apiVersion": "v1", "metadata": {"name": "kindless"}})])
bundle("errors", "no-csv.v1", "1.0.4", [obj({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "only"}})])

# A bundle with an image: OLM makes a BundleLookup (its dependencies go into
# the lookup's properties as OLM's resolver translates them).
package("imaged", "stable", [{"name": "imaged.v1.0.0"}])
bundle("imaged", "imaged.v1.0.0", "1.0.0", [obj(csv("imaged.v1.0.0", perms=[{"serviceAccountName": "imaged", "rules": pods}]))],
       props=[gvkreq("example.com", "v1", "Thing"), {"type": "olm.package.required", "value": {"packageName": "a", "versionRange": ">=1.0.0 <2.0.0"}}],
       image="quay.io/example/imaged-bundle:v1.0.0")

with open(out, "w") as f:
    for d in docs:
        f.write(json.dumps(d, indent=2, ensure_ascii=False) + "\n")
