//go:build !opm_lean

package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/cluster"
	"github.com/fastopm/fastopm/alpha/install"
)

func newQueryClusterCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		q           action.QueryCluster
		catalogs    []string
		output      string
		cacheDir    string
		pullBundles bool
		timeout     olmFlags
		kubeconfig  string
		kubeContext string
	)
	cmd := &cobra.Command{
		Use:   "cluster [--state PATH... | --kubeconfig FILE] --catalog NAMESPACE/NAME=REF...",
		Short: "Show what OLM's next sync does in every namespace of a cluster, from its objects",
		Long: `Show, for every namespace of a cluster that has Subscriptions, what OLM
v0's next sync of the namespace does: each Subscription stays on its CSV,
upgrades, installs, or is blocked (and why, reduced to the constraints
that cannot hold together); the bundles of the namespace's InstallPlan,
which may hold other operators of the namespace than the one that moved
(OLM resolves a namespace as a whole); whether each CSV kept or installed
fits its OperatorGroup; and, with --plan, every step of the InstallPlan,
what executing it does against the state, and the permissions it grants.

--state reads the cluster's objects: files or directories of objects as
"kubectl get -o yaml" or "-o json" writes them (a List, several YAML
documents, single objects), and OpenShift must-gathers. Namespaces,
CatalogSources, Subscriptions, ClusterServiceVersions, OperatorGroups,
InstallPlans and CRDs are read; other kinds are counted and skipped.
Without --state the objects are listed from a live cluster, through the
kubeconfig kubectl would use: --kubeconfig FILE, else $KUBECONFIG, else
~/.kube/config (--context picks one of its contexts); list permission on
those kinds across all namespaces is all it needs. --state and
--kubeconfig do not go together.

--catalog NAMESPACE/NAME=REF gives a CatalogSource's content: a catalog
directory or image (NAME alone when one CatalogSource has it; its
priority is the CatalogSource's spec.priority unless ,priority=N is
given). --pull-catalogs pulls the image of every CatalogSource without a
mapping. A CatalogSource without content is, to OLM, one it cannot reach:
OLM then fails every namespace that sees it, which is the answer given;
beside it, what the sync would do if it were reachable.

--subscribe NAMESPACE/PACKAGE[,channel=C][,source=S][,startingCSV=B][,approval=Manual]
adds a Subscription that does not exist (repeatable), and says what it
changes in its namespace; --operand-registry FILE adds the Subscriptions
IBM's ODLM would create for OperandRegistries and OperandRequests.

The rules are operator-lifecycle-manager v0.46.0's (docs/cluster.md).

Exit codes: 0 when every Subscription resolves and every CSV fits its
OperatorGroup, 1 when one does not, 2 when the question or the input is
wrong, when a namespace's resolution was undecided within --timeout, or
when the answer cannot be written.`,
		Example: `  opm alpha query cluster --state must-gather.local.123 --catalog openshift-marketplace/redhat-operators=./redhat-operators
  opm alpha query cluster --state state.yaml --catalog community=quay.io/example/catalog:v1 --plan
  opm alpha query cluster --kubeconfig ~/.kube/config --catalog openshift-marketplace/redhat-operators=./redhat-operators
  opm alpha query cluster --state state.yaml --pull-catalogs --subscribe ns1/etcd,channel=stable`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			s, done := answerOut(s, 2)
			defer done(&err)
			if output != "text" && output != "json" && output != "yaml" {
				return &usageReport{fmt.Errorf("invalid --output value %q, expected (text|json|yaml)", output)}
			}
			switch {
			case len(q.State) > 0 && (kubeconfig != "" || kubeContext != ""):
				return &usageReport{errors.New("--state and --kubeconfig (--context) do not go together: the objects are read from files or from a cluster")}
			case len(q.State) == 0:
				cfg, err := clusterConfig(kubeconfig, kubeContext)
				if err != nil {
					return err
				}
				q.Cluster = cfg
			}
			for _, c := range catalogs {
				f, err := action.ParseClusterCatalog(c)
				if err != nil {
					return &usageReport{err}
				}
				q.Catalogs = append(q.Catalogs, f)
			}
			q.Sources = &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
				Allowed: action.RefCatalogDir | action.RefCatalogImage}
			if pullBundles {
				q.BundleImages = &action.Resolver{ImageOptions: g.imageOptions(cacheDir), Allowed: action.RefBundleImage}
			}
			q.MaxFileSize = g.maxFileSize.limit()
			q.Limits = install.Limits{Budget: timeout.timeout, MaxTerms: maxTerms(timeout.terms)}
			rep, err := q.Run(cmd.Context())
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			switch output {
			case "json":
				err = encodeAnswer(s.Out, rep)
			case "yaml":
				var b []byte
				if b, err = yaml.Marshal(rep); err == nil {
					_, err = s.Out.Write(b)
				}
			default:
				err = writeClusterText(s.Out, rep, q.Plan)
			}
			if err != nil {
				return err
			}
			switch {
			case rep.Undecided():
				return &ExitError{Code: 2, Err: errors.New("a namespace's resolution was left undecided within --timeout")}
			case rep.Failed():
				return &ExitError{Code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&q.State, "state", nil, "the cluster's objects: a file, a directory or a must-gather (repeatable); without it, the live cluster of the kubeconfig")
	f.StringVar(&kubeconfig, "kubeconfig", "", "read the objects from the live cluster of this kubeconfig (default: $KUBECONFIG, else ~/.kube/config, when --state is not given)")
	f.StringVar(&kubeContext, "context", "", "the kubeconfig's context to use (default: its current context)")
	f.StringArrayVar(&catalogs, "catalog", nil, "a CatalogSource's content: NAMESPACE/NAME=REF[,priority=N], REF a catalog directory or image (repeatable)")
	f.BoolVar(&q.PullCatalogs, "pull-catalogs", false, "pull the image (spec.image) of every CatalogSource without --catalog")
	f.StringVar(&q.GlobalNamespace, "global-namespace", "", "OLM's global catalog namespace (default: openshift-marketplace when the state has CatalogSources there, else olm)")
	f.StringVarP(&q.Namespace, "namespace", "n", "", "answer for this namespace only")
	f.StringArrayVar(&q.Subscribe, "subscribe", nil, "a hypothetical Subscription: NAMESPACE/PACKAGE[,channel=C][,source=S][,sourceNamespace=N][,startingCSV=B][,approval=Manual] (repeatable)")
	f.BoolVar(&q.Plan, "plan", false, "show each namespace's InstallPlan: its steps, what they do against the state, and the permissions they grant")
	f.BoolVar(&pullBundles, "pull-bundles", false, "with --plan, pull the images of the bundles the catalog gives by image only, for their steps")
	f.StringArrayVar(&q.OperandRegistries, "operand-registry", nil, "a file of ODLM OperandRegistries and OperandRequests, whose Subscriptions are added (repeatable)")
	f.StringVarP(&output, "output", "o", "text", "Output format (text|json|yaml)")
	addTimeoutFlag(cmd, &timeout.timeout, &timeout.terms)
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}

// clusterConfig loads the client configuration of a live cluster as
// kubectl does: the kubeconfig file when given, else the files of
// $KUBECONFIG (merged), else ~/.kube/config, else, in a pod, its service
// account; context picks a context other than the current one.
func clusterConfig(kubeconfig, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return nil, &usageReport{errors.New("give the cluster's objects: --state PATH, or --kubeconfig FILE for a live cluster (no kubeconfig was found: $KUBECONFIG names none and ~/.kube/config does not exist)")}
	case err != nil && kubeconfig != "":
		return nil, &ExitError{Code: 2, Err: fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)}
	case err != nil:
		return nil, &ExitError{Code: 2, Err: fmt.Errorf("kubeconfig: %w", err)}
	}
	return cfg, nil
}

// writeClusterText writes the answer for people: per namespace, what the
// sync does for each Subscription, the InstallPlan's bundles, the
// OperatorGroup verdicts; with plan, the steps and permissions.
func writeClusterText(w io.Writer, rep *action.ClusterReport, plan bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "state: %s\n", rep.State)
	fmt.Fprintf(&b, "global catalog namespace: %s\n", rep.GlobalNamespace)
	for _, c := range rep.Catalogs {
		switch {
		case c.Ref == "":
			fmt.Fprintf(&b, "CatalogSource %s: no content given: OLM cannot reach it\n", c.CatalogSource)
		case c.Pulled:
			fmt.Fprintf(&b, "CatalogSource %s (priority %d): pulled from %s\n", c.CatalogSource, c.Priority, c.Ref)
		default:
			fmt.Fprintf(&b, "CatalogSource %s (priority %d): %s\n", c.CatalogSource, c.Priority, c.Ref)
		}
	}
	if rep.ODLM != nil {
		writeODLMText(&b, rep.ODLM)
	}
	for _, n := range rep.Namespaces {
		writeNamespaceText(&b, n, plan)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeNamespaceText(b *strings.Builder, n *action.ClusterNamespace, plan bool) {
	fmt.Fprintf(b, "\n== namespace %s\n", n.Namespace)
	switch {
	case n.Skipped != "":
		fmt.Fprintf(b, "OLM's next sync resolves nothing: %s\n", n.Skipped)
	case n.Answer.Status == install.Installable:
		fmt.Fprintf(b, "OLM's next sync resolves the namespace (catalogs: %s); InstallPlan approval %s\n", strings.Join(n.Catalogs, ", "), n.Approval)
	case n.Answer.Status == install.Unsatisfiable:
		fmt.Fprintf(b, "OLM's next sync cannot resolve the namespace: every Subscription of it is blocked (ResolutionFailed, ConstraintsNotSatisfiable):\n")
		for _, r := range n.Answer.Reasons {
			fmt.Fprintf(b, "  - %s\n", r)
		}
		b.WriteString("OLM's constraints that cannot hold together:\n")
		for _, c := range n.Answer.Constraints {
			fmt.Fprintf(b, "  - %s\n", c)
		}
	case n.Answer.Status == install.Undecided:
		fmt.Fprintf(b, "undecided: %s\n", n.Answer.Error)
	default:
		fmt.Fprintf(b, "OLM's next sync fails for the whole namespace (ResolutionFailed, ErrorPreventedResolution):\n  %s\n", strings.ReplaceAll(n.Answer.Error, "\n", "\n  "))
	}
	for _, o := range n.Subscriptions {
		fmt.Fprintf(b, "Subscription %s (package %s", o.Name, o.Package)
		if o.Channel != "" {
			fmt.Fprintf(b, ", channel %s", o.Channel)
		}
		fmt.Fprintf(b, ", from %s): %s\n", o.Source, outcomeText(o))
	}
	if n.Answer != nil && n.Answer.Status == install.Installable {
		var steps []string
		for _, op := range n.Answer.Operators {
			if op.UpToDate {
				continue
			}
			s := op.Bundle + " from " + op.CatalogSourceNamespace + "/" + op.CatalogSource + " (channel " + op.Channel + ")"
			if op.Replaces != "" {
				s += ", replacing " + op.Replaces
			}
			switch {
			case op.GeneratedSubscription != "":
				s += ", with a new Subscription " + op.GeneratedSubscription
			case len(op.Subscriptions) > 0:
				s += ", for " + strings.Join(op.Subscriptions, ", ")
			}
			if len(op.RequiredBy) > 0 {
				s += "; required by " + strings.Join(op.RequiredBy, ", ")
			}
			steps = append(steps, s)
		}
		if len(steps) == 0 {
			b.WriteString("no InstallPlan: nothing changes\n")
		} else {
			fmt.Fprintf(b, "the InstallPlan installs %d bundle(s):\n", len(steps))
			for _, s := range steps {
				fmt.Fprintf(b, "  - %s\n", s)
			}
		}
	}
	for _, c := range n.Unhealthy {
		phase := c.Phase
		if phase == "" {
			phase = "no phase"
		}
		fmt.Fprintf(b, "CSV %s is %s", c.Name, phase)
		if c.Reason != "" {
			fmt.Fprintf(b, " (%s: %s)", c.Reason, c.Message)
		}
		b.WriteString(": OLM's resolution counts it as installed all the same\n")
	}
	if len(n.IfReachable) > 0 {
		fmt.Fprintf(b, "if %s were reachable (and offered nothing more):\n", strings.Join(n.Unreachable, ", "))
		for _, o := range n.IfReachable {
			fmt.Fprintf(b, "  - Subscription %s: %s\n", o.Name, outcomeText(o))
		}
	}
	if len(n.Changes) > 0 {
		b.WriteString("what the new Subscriptions change:\n")
		for _, c := range n.Changes {
			fmt.Fprintf(b, "  - %s\n", c)
		}
	}
	for _, v := range n.OperatorGroups {
		group := ""
		if v.Group != nil {
			group = " " + v.Group.Name
		}
		if v.OK {
			fmt.Fprintf(b, "CSV %s fits OperatorGroup%s (%s)\n", v.CSV, group, v.InstallMode)
			continue
		}
		if v.Reason == "" && v.Message == "" {
			// OLM stops before it sets a phase (an OperatorGroup whose
			// targets it cannot compute): the CSV keeps its status.
			phase := string(v.Phase)
			if phase == "" {
				phase = "none"
			}
			fmt.Fprintf(b, "CSV %s does not fit OperatorGroup%s; OLM leaves its status as it is (phase %s)\n", v.CSV, group, phase)
		} else {
			fmt.Fprintf(b, "CSV %s fails: %s: %s\n", v.CSV, v.Reason, v.Message)
		}
		if v.Why != "" {
			fmt.Fprintf(b, "  %s\n", v.Why)
		}
	}
	if plan && n.Plan != nil {
		b.WriteString("\nthe InstallPlan's steps:\n")
		var sb strings.Builder
		_ = cluster.WriteStepsText(&sb, n.Plan.Steps, n.Plan.Effects)
		b.WriteString(sb.String())
		for _, nu := range n.Plan.NotUnpacked {
			fmt.Fprintf(b, "bundle %s: given by image only; OLM unpacks it for its steps (--pull-bundles)\n", nu)
		}
		b.WriteString("\npermissions:\n")
		sb.Reset()
		_ = cluster.WritePermissionsText(&sb, n.Plan.Permissions)
		b.WriteString(sb.String())
	}
}

// outcomeText says a Subscription's outcome in words.
func outcomeText(o cluster.SubscriptionOutcome) string {
	switch o.Outcome {
	case cluster.Stays:
		if o.Installed == "" {
			return "stays: nothing installed"
		}
		return "stays on " + o.Installed
	case cluster.Upgrades:
		return "upgrades " + o.Installed + " -> " + o.To
	case cluster.Installs:
		return "installs " + o.To
	}
	if o.Outcome == cluster.Blocked {
		// The namespace's reasons are written above.
		why, _, _ := strings.Cut(o.Why, ": ")
		if strings.HasPrefix(o.Why, "the namespace's constraints") {
			return "blocked: " + why + " (above)"
		}
		return "blocked: the namespace fails (above)"
	}
	if o.Why != "" {
		return o.Outcome + ": " + strings.ReplaceAll(o.Why, "\n", "\n    ")
	}
	return o.Outcome
}

// writeODLMText says what ODLM would create.
func writeODLMText(b *strings.Builder, a *cluster.ODLMAnswer) {
	b.WriteString("\n== ODLM\n")
	for _, o := range a.Outcomes {
		line := fmt.Sprintf("OperandRequest %s, operand %s: %s", o.Request, o.Operand, o.Action)
		if o.Subscription != "" {
			line += " Subscription " + o.Subscription
		}
		if o.Problem != "" {
			line += ": " + o.Problem
		} else if o.Note != "" {
			line += ": " + o.Note
		}
		b.WriteString(line + "\n")
	}
}
