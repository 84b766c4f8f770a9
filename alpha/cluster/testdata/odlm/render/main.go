// Command render renders ibm-common-service-operator's OperandRegistry templates
// (internal/controller/constant/odlm.go at 1450f36b) as its
// buildOperandRegistry and ReconcileOperandRegistry do, with the values of
// the fixture's README.
package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

type CSData struct {
	Channel, Version, CPFSNs, ServicesNs, OperatorNs, CatalogSourceName, CatalogSourceNs       string
	ODLMCatalogSourceName, ODLMCatalogSourceNs, ODLMChannel, IsolatedModeEnable, ApprovalMode  string
	OnPremMultiEnable, WatchNamespaces, CloudPakThemes, CloudPakThemesVersion, ExcludedCatalog string
	StatusMonitoredServices                                                                    string
	ServiceNames                                                                               map[string][]string
	UtilsImage, ImagePullSecret                                                                string
}

func main() {
	src, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "odlm.go", src, 0)
	if err != nil {
		panic(err)
	}
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				consts[vs.Names[0].Name] = s
			}
		}
		return true
	})
	data := CSData{
		Version: "4.19.2", CPFSNs: "cpfs-operators", ServicesNs: "cpfs-services", OperatorNs: "cpfs-operators",
		ApprovalMode: "Automatic", OnPremMultiEnable: "false",
		ExcludedCatalog:         "certified-operators,community-operators,redhat-marketplace,ibm-cp-automation-foundation-catalog,operatorhubio-catalog",
		StatusMonitoredServices: "ibm-idp-config-ui-operator,ibm-mongodb-operator,ibm-im-operator",
		ServiceNames:            map[string][]string{"PostgreSQL": {"cloud-native-postgresql"}},
	}
	render := func(name string) *cluster.OperandRegistry {
		t := template.Must(template.New(name).Parse(consts[name]))
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			panic(err)
		}
		r := &cluster.OperandRegistry{}
		if err := yaml.Unmarshal(b.Bytes(), r); err != nil {
			panic(name + ": " + err.Error())
		}
		return r
	}
	// ConcatenateRegistries.
	base := render("CSV3OpReg")
	for _, n := range []string{"CSV4OpReg", "MongoDBOpReg", "IMOpReg", "IdpConfigUIOpReg", "PlatformUIOpReg", "KeyCloakOpReg", "CommonServicePGOpReg", "CommonServiceCNPGOpReg", "CommonServicePGMigratorOpReg"} {
		base.Spec.Operators = append(base.Spec.Operators, render(n).Spec.Operators...)
	}
	// processdDynamicChannels for keycloak-operator, no ibm-cpp-config
	// ConfigMap: preferred channel stable-v24 below the highest
	// stable-v26 of DefaultChannels.
	for i, op := range base.Spec.Operators {
		if op.Name != "keycloak-operator" {
			continue
		}
		list := []string{"stable-v26", "stable-v24", "stable-v22"}
		cur := "stable-v24"
		if cmp(cur, list[0]) < 0 {
			base.Spec.Operators[i].Channel = cur
			var fb []string
			for _, c := range list {
				if cmp(c, cur) < 0 {
					fb = append(fb, c)
				}
			}
			sort.Slice(fb, func(a, b int) bool { return cmp(fb[a], fb[b]) > 0 })
			base.Spec.Operators[i].FallbackChannels = fb
		}
	}
	out, err := yaml.Marshal(base)
	if err != nil {
		panic(err)
	}
	desired := &cluster.OperandRegistry{}
	if err := yaml.Unmarshal(out, desired); err != nil {
		panic(err)
	}
	// buildOperandRegistry and ReconcileOperandRegistry.
	desired.APIVersion, desired.Kind = "operator.ibm.com/v1alpha1", "OperandRegistry"
	desired.Namespace = data.ServicesNs
	if desired.Labels == nil {
		desired.Labels = map[string]string{}
	}
	desired.Labels["operator.ibm.com/managedByCsOperator"] = "true"
	for i := range desired.Spec.Operators {
		desired.Spec.Operators[i].InstallPlanApproval = v1alpha1.Approval(data.ApprovalMode)
	}
	desired.Annotations["version"] = data.Version
	out, err = yaml.Marshal(desired)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(out)
}

var vre = regexp.MustCompile(`v(\d+)`)

func cmp(a, b string) int {
	am, bm := vre.FindStringSubmatch(a), vre.FindStringSubmatch(b)
	if len(am) < 2 || len(bm) < 2 {
		return strings.Compare(a, b)
	}
	x, _ := strconv.Atoi(am[1])
	y, _ := strconv.Atoi(bm[1])
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
