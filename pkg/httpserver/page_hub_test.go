package httpserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/pkg/httpserver"
)

// pageHub is `opm alpha hub` (action.Hub, as the command runs it) on a
// loopback port, with the hub it made.
type pageHub struct {
	url string
	hub *httpserver.Hub
}

// startPageHub runs the hub over the catalogs and states until the test
// ends, and waits until every catalog's first load is over (served or
// failed).
func startPageHub(t *testing.T, cats []action.HubCatalogFlag, state ...string) *pageHub {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hubs := make(chan *httpserver.Hub, 1)
	a := &action.Hub{Catalogs: cats, State: state, HTTPListener: lis, TempDir: t.TempDir(),
		Sources: &action.Resolver{TempDir: t.TempDir(), Allowed: action.RefCatalogDir},
		OnHub:   func(h *httpserver.Hub) { hubs <- h }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the hub ended with %v", err)
		}
	})
	ph := &pageHub{url: "http://" + lis.Addr().String()}
	select {
	case ph.hub = <-hubs:
	case err := <-done:
		t.Fatalf("the hub did not start: %v", err)
	}
	deadline := time.Now().Add(3 * time.Minute) // a hang guard
	for {
		loading := false
		for _, c := range ph.hub.Status() {
			loading = loading || c.State == httpserver.CatalogLoading
		}
		if !loading {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalogs are still loading: %+v", ph.hub.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return ph
}

// hubPageCatalogs are the catalogs of testdata/cluster/hub's state (see
// its README), and one that does not load.
func hubPageCatalogs(t *testing.T) []action.HubCatalogFlag {
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "catalog.yaml"), []byte("schema: olm.package\nname: x\n---\nschema: olm.channel\npackage: x\nname: c\nentries: [{name: x.v1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []action.HubCatalogFlag{
		{Name: "community", Ref: "../../testdata/install/community"},
		{Name: "certified", Ref: "../../testdata/install/certified"}, // priority 10: its CatalogSource's
		{Name: "marketplace", Ref: "../../testdata/install/marketplace"},
		{Name: "descheduler", Ref: "../../testdata/catalogs/kube-descheduler-v4.12"},
		{Name: "fixture", Ref: "../../testdata/catalogs/fixture-olm-deprecations"},
		{Name: "plan", Ref: "../../alpha/cluster/testdata/plan/catalog"},
		{Name: "broken", Ref: broken},
	}
}

const hubState = "../../testdata/cluster/hub/state.yaml"

// TestHubPage drives the page of `opm alpha hub` in headless Chromium over
// six catalogs, one that fails to load, and the recorded cluster state of
// testdata/cluster/hub: the merged tiles with their catalogs and
// installed badges, the catalog filter, a package offered by two
// catalogs, the installed operators, a namespace's next sync, what
// installing a package into a namespace does, deep links to each view in
// a new tab, back and forward, a catalog swapped (and one whose reload
// fails) while the page is open, the keyboard path, a phone-width window,
// and no Content-Security-Policy violation. Everything shown is checked
// against the hub's JSON answers. OPM_HUB_SCREENSHOTS=DIR saves the
// pictures of docs/hub.md.
func TestHubPage(t *testing.T) {
	exe := chromium(t)
	cats := hubPageCatalogs(t)
	ph := startPageHub(t, cats, hubState)
	shots := os.Getenv("OPM_HUB_SCREENSHOTS")

	var list struct {
		Total    int
		Packages []struct {
			Name, Catalog string
			Catalogs      []struct{ Catalog string }
			Installed     []struct{ Namespace, CSV string }
		}
	}
	getJSONInto(t, ph.url+"/api/v1/packages?limit=all", &list)
	offered := map[string]int{}
	installed := 0
	for _, p := range list.Packages {
		offered[p.Name] = len(p.Catalogs)
		if len(p.Installed) > 0 {
			installed++
		}
	}
	if offered["elasticsearch"] != 2 || installed != 1 {
		t.Fatalf("the merged list: elasticsearch offered by %d catalogs, %d packages installed: %+v", offered["elasticsearch"], installed, list.Packages)
	}
	var certified struct{ Total int }
	getJSONInto(t, ph.url+"/api/v1/packages?limit=all&catalog=certified", &certified)

	b := newBrowser(t, exe, 1280, 900)
	b.do(chromedp.Navigate(ph.url + "/"))
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelectorAll('#hub-catalogs li').length === 7`, list.Total))
	b.watchCSP()
	if got := b.text("#catalog-name"); got != "hub of 7 catalogs" {
		t.Errorf("catalog name %q", got)
	}

	// The catalogs: the one that failed says so, and why; the state's
	// CatalogSource no catalog gives is named.
	if got := b.eval(`[...document.querySelectorAll('#hub-catalogs li')].map(li => li.dataset.catalog + ':' + li.dataset.state).join(' ')`); got != "community:serving certified:serving marketplace:serving descheduler:serving fixture:serving plan:serving broken:failed" {
		t.Errorf("the catalogs' states %v", got)
	}
	if got := b.text(`#hub-catalogs li[data-catalog=broken]`); !strings.Contains(got, "failed to load: ") || !strings.Contains(got, "x.v1") {
		t.Errorf("the failed catalog says %q", got)
	}
	if got := b.text("#hub-unreachable"); !strings.Contains(got, "OLM cannot reach team-c/team-operators") {
		t.Errorf("unreachable CatalogSources: %q", got)
	}

	// The tiles: a package once, with its catalogs; installed ones badged.
	if got := b.eval(`document.querySelector('#results a.tile[data-name=elasticsearch] .tile-catalogs').textContent`); got != "certified +1" {
		t.Errorf("elasticsearch's tile says %q", got)
	}
	if got := b.eval(`document.querySelector('#results a.tile[data-name=elasticsearch] .tile-catalogs').title`); got != "offered by certified, marketplace; a Subscription without a source gets certified's" {
		t.Errorf("elasticsearch's catalogs %q", got)
	}
	if got := b.eval(`[...document.querySelectorAll('#results a.tile .badge.installed')].map(b => b.closest('a').dataset.name + ': ' + b.textContent).join()`); got != "etcd: installed \u00d72" {
		t.Errorf("installed badges %v", got)
	}

	// The catalog filter, as the API filters; the address keeps it.
	if got := b.eval(`[...document.querySelectorAll('#filters fieldset[data-facet=catalog] input')].map(i => i.dataset.value).join()`); got != "certified,community,descheduler,fixture,marketplace,plan" {
		t.Errorf("the catalog filter's values %v", got)
	}
	b.click(`#filters fieldset[data-facet=catalog] input[data-value=certified]`)
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d`, certified.Total))
	filtered := b.eval(`location.href`).(string)
	if !strings.Contains(filtered, "catalog=certified") {
		t.Errorf("the address %s does not keep the catalog filter", filtered)
	}
	if shots != "" {
		b.click(`#filters fieldset[data-facet=catalog] input[data-value=certified]`)
		b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d`, list.Total))
		b.shoot(filepath.Join(shots, "hub-catalogs.png"))
		b.click(`#filters fieldset[data-facet=catalog] input[data-value=certified]`)
	}

	// A package offered by two catalogs: the one a Subscription without a
	// source uses, then the other.
	b.click(`#results a.tile[data-name=elasticsearch]`)
	b.wait(`document.querySelector('#package-name').textContent === 'elasticsearch' && !document.querySelector('#package-offers').hidden`)
	if got := b.eval(`[...document.querySelectorAll('#package-offers a.offer')].map(a => a.dataset.catalog + (a.classList.contains('current') ? '*' : '')).join()`); got != "certified*,marketplace" {
		t.Errorf("elasticsearch's offers %v", got)
	}
	if got := b.text("#package-offers"); !strings.Contains(got, "what a Subscription without a source gets") {
		t.Errorf("offers %q", got)
	}
	b.click(`#package-offers a.offer[data-catalog=marketplace]`)
	b.wait(`location.hash.includes('catalog=marketplace') && document.querySelector('#package-offers a.offer.current').dataset.catalog === 'marketplace'`)
	b.wait(`document.querySelector('#install-result').textContent.includes('installs 1 bundle')`)
	if got := b.text("#install-result"); !strings.Contains(got, "elasticsearch-mkt.v7.17.0") {
		t.Errorf("what a Subscription to marketplace's elasticsearch installs: %q", got)
	}
	b.back()
	b.wait(`document.querySelector('#package-offers a.offer.current') && document.querySelector('#package-offers a.offer.current').dataset.catalog === 'certified'`)

	// The installed operators, as the API answers.
	var inst struct {
		Operators []struct {
			Namespace, CSV, Package string
			Next                    *struct{ Outcome string }
			InstallPlans            []struct{ Name string }
			OperatorGroup           *struct{ OK bool }
		}
	}
	getJSONInto(t, ph.url+"/api/v1/cluster/installed", &inst)
	b.click("#nav-installed")
	b.wait(fmt.Sprintf(`!document.querySelector('#installed-view').hidden && document.querySelectorAll('#installed-table tbody tr').length === %d && document.querySelectorAll('#namespaces li').length === 5`, len(inst.Operators)))
	for i, o := range inst.Operators {
		row := fmt.Sprintf(`document.querySelectorAll('#installed-table tbody tr')[%d]`, i)
		if o.Next == nil {
			t.Fatalf("installed operator %d has no next sync: %+v", i, o)
		}
		want := o.Namespace + " " + o.CSV + " " + o.Next.Outcome
		if got := b.eval(row + `.dataset.namespace + ' ' + ` + row + `.dataset.csv + ' ' + ` + row + `.querySelector('td.next').dataset.outcome`); got != want {
			t.Errorf("installed row %d: %v, want %s", i, got, want)
		}
		if o.OperatorGroup != nil {
			want := map[bool]string{true: "og ok", false: "og fails"}[o.OperatorGroup.OK]
			if got := b.eval(row + `.querySelector('td.og').className`); got != want {
				t.Errorf("installed row %d: OperatorGroup cell %v, want %s", i, got, want)
			}
		}
		for _, ip := range o.InstallPlans {
			if got := b.eval(row + `.textContent`).(string); !strings.Contains(got, ip.Name+": RequiresApproval, Manual, not approved") {
				t.Errorf("installed row %d lacks InstallPlan %s: %q", i, ip.Name, got)
			}
		}
	}
	if got := b.text(`#installed-table tbody tr[data-namespace=team-c] td.next`); !strings.HasPrefix(got, "blocked") || !strings.Contains(got, "team-c/team-operators") {
		t.Errorf("team-c's etcd: %q", got)
	}
	if shots != "" {
		b.shoot(filepath.Join(shots, "hub-installed.png"))
	}

	// A namespace's next sync: one InstallPlan for both Subscriptions.
	var teamA struct {
		Namespaces []struct {
			Subscriptions []struct{ Name string }
			Resolution    struct {
				Status    string
				Operators []struct{ Bundle string }
			}
		}
	}
	getJSONInto(t, ph.url+"/api/v1/cluster?namespace=team-a&plan=true", &teamA)
	b.click(`#namespaces a[data-namespace=team-a]`)
	b.wait(`location.hash === '#ns=team-a' && document.querySelector('#ns-plan-bundles') !== null`)
	n := teamA.Namespaces[0]
	if got := b.eval(`[...document.querySelectorAll('#ns-plan-bundles li')].map(li => li.dataset.bundle).join()`); got != n.Resolution.Operators[0].Bundle+","+n.Resolution.Operators[1].Bundle {
		t.Errorf("team-a's InstallPlan: %v, the API %+v", got, n.Resolution.Operators)
	}
	if got := b.eval(`document.querySelectorAll('#ns-subscriptions tbody tr').length`); got != float64(len(n.Subscriptions)) || n.Resolution.Status != "installable" {
		t.Errorf("team-a: %v Subscriptions shown, the API %d (%s)", got, len(n.Subscriptions), n.Resolution.Status)
	}
	if got := b.text("#ns-status"); !strings.Contains(got, "resolves the namespace") {
		t.Errorf("team-a's status %q", got)
	}
	if got := b.text("#ns-og"); !strings.HasPrefix(got, "etcdoperator.v0.9.2 fits: OperatorGroup team-a/og targets all namespaces") {
		t.Errorf("team-a's OperatorGroup verdict %q", got)
	}
	if shots != "" {
		b.shoot(filepath.Join(shots, "hub-namespace.png"))
	}

	// What installing a package into a namespace does, from a link in a
	// new tab: the InstallPlan's steps, the permissions, the
	// OperatorGroup's verdict.
	var whatIf struct {
		Namespaces []struct {
			Plan struct {
				Steps       []any
				Permissions []struct {
					Findings []struct{ Flag string }
				}
			}
			OperatorGroups []struct{ OK bool }
		}
	}
	getJSONInto(t, ph.url+"/api/v1/cluster?"+url.Values{"namespace": {"sandbox"}, "subscribe": {"sandbox/cluster-only,channel=stable,source=plan,sourceNamespace=olm"}, "plan": {"true"}}.Encode(), &whatIf)
	w := whatIf.Namespaces[0]
	if len(w.Plan.Steps) == 0 || len(w.Plan.Permissions) != 1 || len(w.Plan.Permissions[0].Findings) == 0 || len(w.OperatorGroups) != 1 || w.OperatorGroups[0].OK {
		t.Fatalf("the API's answer for cluster-only in sandbox: %+v", w)
	}
	tab := b.newTab()
	defer tab.close()
	tab.do(chromedp.Navigate(ph.url + "/#pkg=cluster-only&installInto=sandbox"))
	tab.wait(`document.querySelector('#whatif-summary') !== null && document.querySelector('#whatif-og') !== null`)
	tab.watchCSP()
	if got := tab.eval(`document.querySelectorAll('#whatif-steps tbody tr').length`); got != float64(len(w.Plan.Steps)) {
		t.Errorf("the what-if shows %v steps, the API %d", got, len(w.Plan.Steps))
	}
	var flags []string
	for _, f := range w.Plan.Permissions[0].Findings {
		flags = append(flags, f.Flag)
	}
	if got := tab.eval(`[...document.querySelectorAll('#whatif-permissions li[data-flag]')].map(li => li.dataset.flag).join()`); got != strings.Join(flags, ",") {
		t.Errorf("the what-if's permission findings %v, the API %v", got, flags)
	}
	if got := tab.text(`#whatif-og li.fails`); !strings.Contains(got, "cluster-only.v1.1.0 fails") {
		t.Errorf("the OperatorGroup verdict %q", got)
	}
	if got := tab.text("#whatif-summary"); !strings.Contains(got, "in sandbox to package cluster-only (channel stable) from olm/plan") {
		t.Errorf("the what-if's summary %q", got)
	}
	if shots != "" {
		tab.eval(`document.querySelector('#whatif-section').scrollIntoView(); true`)
		tab.shoot(filepath.Join(shots, "hub-whatif.png"))
	}
	// Another namespace, by the keyboard: the plan there also moves the
	// namespace's other Subscriptions (colocation); the address keeps the
	// question.
	tab.eval(`document.querySelector('#whatif-namespace').focus(); document.querySelector('#whatif-namespace').value = ''; true`)
	tab.do(chromedp.SendKeys("#whatif-namespace", "team-a\r"))
	tab.wait(`location.hash.includes('installInto=team-a') && document.querySelector('#whatif-plan-bundles li.colocated') !== null`)
	if got := tab.eval(`[...document.querySelectorAll('#whatif-plan-bundles li.colocated')].map(li => li.dataset.bundle).join()`); got != "etcdoperator.v0.9.4,etcd-backup.v1.0.0" && got != "etcd-backup.v1.0.0,etcdoperator.v0.9.4" {
		t.Errorf("bundles moving with the new Subscription in team-a: %v", got)
	}
	// A namespace without an OperatorGroup: OLM resolves nothing there.
	tab.eval(`document.querySelector('#whatif-namespace').value = 'empty'; document.querySelector('#whatif-submit').click(); true`)
	tab.wait(`location.hash.includes('installInto=empty') && document.querySelector('#whatif-status') !== null`)
	if got := tab.text("#whatif-status"); !strings.Contains(got, "resolves nothing here") {
		t.Errorf("installing into a namespace without an OperatorGroup: %q", got)
	}
	tab.checkCSP()

	// Deep links in a new tab: the installed view, a namespace, the
	// catalog filter.
	for link, ready := range map[string]string{
		"/#installed":  fmt.Sprintf(`document.querySelectorAll('#installed-table tbody tr').length === %d && document.querySelectorAll('#namespaces li').length === 5 && document.querySelector('#nav-installed').classList.contains('current')`, len(inst.Operators)),
		"/#ns=team-d":  `document.querySelector('#ns-title').textContent.startsWith('Namespace team-d') && document.querySelector('#ns-subscriptions') !== null`,
		"/#ns=nowhere": `document.querySelector('#ns-error') !== null`,
		"/" + filtered[strings.Index(filtered, "#"):]: fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelector('#filters input[data-value=certified]').checked`, certified.Total),
	} {
		tab.do(chromedp.Navigate("about:blank"))
		tab.do(chromedp.Navigate(ph.url + link))
		tab.wait(ready)
	}

	// The keyboard path: the views' links come after the skip link.
	b.do(chromedp.Navigate(ph.url + "/"))
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d`, list.Total))
	b.watchCSP()
	var order []string
	for range 4 {
		b.do(chromedp.KeyEvent("\t"))
		order = append(order, fmt.Sprint(b.eval(`document.activeElement.id || document.activeElement.className`)))
	}
	if got := strings.Join(order, " "); got != "skip home nav-packages nav-installed" {
		t.Errorf("the first Tab stops: %s", got)
	}

	// A catalog swapped while the page is open: its new package appears,
	// and the page says so; then another's reload fails: it keeps being
	// served, and the page says that too.
	fresh := t.TempDir()
	copyFiles(t, fresh, map[string]string{"catalog.yaml": "../../testdata/install/community/catalog.yaml"})
	f, err := os.OpenFile(filepath.Join(fresh, "catalog.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("---\nschema: olm.package\nname: fresh\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: fresh\nname: stable\nentries:\n- name: fresh.v1.0.0\n---\nschema: olm.bundle\npackage: fresh\nname: fresh.v1.0.0\nimage: quay.io/example/fresh-bundle:v1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: fresh, version: 1.0.0}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := ph.hub.Set("community", loadSnapshotNoCleanup(t, fresh), "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The page asks at once when it is shown again (and every 15 s).
	b.eval(`document.dispatchEvent(new Event('visibilitychange')); true`)
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && document.querySelector('#results a.tile[data-name=fresh]') !== null`, list.Total+1))
	if got := b.text("#hub-updated"); !strings.Contains(got, "Catalog community was reloaded (sha256:0123456789ab") {
		t.Errorf("the page says %q of the swap", got)
	}
	b.click(`#results a.tile[data-name=elasticsearch]`)
	b.wait(`document.querySelector('#package-name').textContent === 'elasticsearch'`)
	ph.hub.Failed("certified", errors.New("pulling the image: connection refused"))
	b.eval(`document.dispatchEvent(new Event('visibilitychange')); true`)
	b.wait(`document.querySelector('#hub-catalogs li[data-catalog=certified]').dataset.state === 'stale' && document.querySelector('#package-name').textContent === 'elasticsearch'`)
	if got := b.text(`#hub-catalogs li[data-catalog=certified]`); !strings.Contains(got, "serving its last good content; the last reload failed: pulling the image: connection refused") {
		t.Errorf("the stale catalog says %q", got)
	}
	if got := b.eval(`document.querySelector('#package-offers a.offer.current').dataset.catalog`); got != "certified" {
		t.Errorf("the stale catalog's package is shown from %v", got)
	}
	// The cluster state's reading fails: the last good state stays
	// shown, and the page says so.
	if got := b.eval(`document.querySelector('#hub-state').dataset.state + ': ' + document.querySelector('#hub-state').textContent`); !strings.HasPrefix(got.(string), "serving: Cluster state: 1 files: 5 Subscriptions") {
		t.Errorf("the state's line %q", got)
	}
	ph.hub.ClusterFailed(errors.New("the user may not list subscriptions.operators.coreos.com across all namespaces"))
	b.eval(`document.dispatchEvent(new Event('visibilitychange')); true`)
	b.wait(`document.querySelector('#hub-state').dataset.state === 'stale' && !document.querySelector('#hub-state').hidden`)
	if got := b.text("#hub-state"); !strings.Contains(got, "Its last reading failed: the user may not list subscriptions.operators.coreos.com across all namespaces; the state read at ") {
		t.Errorf("the stale state's line %q", got)
	}
	if got := b.text("#hub-updated"); !strings.Contains(got, "The cluster state's reading failed: its last good state is shown") {
		t.Errorf("the page says %q of the failed reading", got)
	}
	b.checkCSP()

	// A phone-width window: nothing wider than the screen.
	phone := newBrowser(t, exe, 390, 844)
	for _, link := range []string{"/", "/#installed", "/#ns=team-a", "/#pkg=cluster-only&installInto=sandbox"} {
		phone.do(chromedp.Navigate("about:blank"))
		phone.do(chromedp.Navigate(ph.url + link))
		phone.wait(`document.querySelectorAll('#results li a.tile').length > 0 && (location.hash === '' || document.querySelector('#installed-table tbody tr, #ns-status, #whatif-og') !== null)`)
		if got := phone.eval(`document.documentElement.scrollWidth <= window.innerWidth`); got != true {
			t.Errorf("%s at phone width: the page is %v px wide", link, phone.eval(`document.documentElement.scrollWidth`))
		}
		if shots != "" && link == "/#installed" {
			phone.shoot(filepath.Join(shots, "hub-phone.png"))
		}
	}
	// A hub without a cluster state: no installed view, no what-if; its
	// addresses say why. One catalog's page (under /catalogs/NAME/) has
	// none of the hub's parts, whatever its address.
	bare := startPageHub(t, cats[:3])
	b.do(chromedp.Navigate(bare.url + "/#pkg=logging"))
	b.wait(`document.querySelector('#package-name').textContent === 'logging' && !document.querySelector('#package-offers').hidden`)
	b.watchCSP()
	if got := b.eval(`document.querySelector('#nav-installed').hidden && document.querySelector('#whatif-section').hidden && document.querySelector('#install-section') !== null`); got != true {
		t.Errorf("a hub without a state shows the installed view's link or the what-if")
	}
	b.do(chromedp.Navigate("about:blank"))
	b.do(chromedp.Navigate(bare.url + "/#installed"))
	b.wait(`document.querySelector('#status').textContent.includes('the hub has no cluster state')`)
	b.do(chromedp.Navigate("about:blank"))
	b.do(chromedp.Navigate(ph.url + "/catalogs/community/#installed"))
	b.wait(`document.querySelectorAll('#results li a.tile').length === 10`) // community with fresh, swapped in above
	b.watchCSP()
	if got := b.eval(`document.querySelector('#installed-view').hidden && document.querySelector('#hub-nav').hidden && document.querySelector('#hub-bar').hidden && !document.querySelector('#browse').hidden`); got != true {
		t.Errorf("one catalog's page at #installed shows the hub's parts")
	}
	b.checkCSP()

}

// TestHubPageFigures times the hub's page over the catalogs of
// OPM_HUB_CATALOGS (NAME=DIR,... ; the figures of docs/hub.md are those of
// ../shared's four large real catalogs and a scalecat catalog of 990
// packages): the first render, and each filter change (four searches,
// each catalog of the catalog filter, the first and last value of every
// other filter, on and off), as the page measures them
// (window.catalogTimings). Logged, not asserted: a test never depends on
// the machine's speed.
func TestHubPageFigures(t *testing.T) {
	spec := os.Getenv("OPM_HUB_CATALOGS")
	if spec == "" {
		t.Skip("set OPM_HUB_CATALOGS=NAME=DIR,... to time the hub's page over those catalogs")
	}
	exe := chromium(t)
	var cats []action.HubCatalogFlag
	for _, c := range strings.Split(spec, ",") {
		name, dir, _ := strings.Cut(c, "=")
		cats = append(cats, action.HubCatalogFlag{Name: name, Ref: dir})
	}
	ph := startPageHub(t, cats)
	var list struct{ Total int }
	getJSONInto(t, ph.url+"/api/v1/packages?limit=1", &list)
	b := newBrowser(t, exe, 1280, 900)
	b.do(chromedp.Navigate(ph.url + "/"))
	b.wait(fmt.Sprintf(`document.querySelectorAll('#results li a.tile').length === %d && window.catalogTimings.allTiles !== null`, list.Total))
	t.Logf("%d packages of %d catalogs: first render %.1f ms (%v), every tile after %.1f ms", list.Total, len(cats),
		b.eval(`window.catalogTimings.firstRender`), b.eval(`JSON.stringify(window.catalogTimings.firstRenderParts)`), b.eval(`window.catalogTimings.allTiles`))
	settle := func() {
		b.wait(`window.catalogTimings.filtersComplete.length === window.catalogTimings.filters.length && window.catalogTimings.filtersComplete.every(x => x !== undefined)`)
	}
	for _, q := range []string{"storage", "cert manager", "database", "zzz-nothing"} {
		b.setSearch(q)
		settle()
	}
	b.setSearch("")
	settle()
	facets := b.eval(`[...document.querySelectorAll('#filters fieldset.facet')].map(f => f.dataset.facet)`).([]any)
	for _, f := range facets {
		values := b.eval(fmt.Sprintf(`[...document.querySelectorAll('#filters fieldset[data-facet=%q] input')].map(i => i.dataset.value)`, f)).([]any)
		if f != "catalog" && len(values) > 2 {
			values = []any{values[0], values[len(values)-1]}
		}
		for _, v := range values {
			sel := fmt.Sprintf(`#filters fieldset[data-facet=%q] input[data-value=%q]`, f, v)
			if b.eval(fmt.Sprintf(`document.querySelector(%q).closest('li').offsetParent === null`, sel)) == true {
				b.click(fmt.Sprintf(`#filters fieldset[data-facet=%q] button.more-toggle`, f))
				b.wait(fmt.Sprintf(`document.querySelector(%q).closest('li').offsetParent !== null`, sel))
			}
			b.click(sel)
			settle()
			b.click(sel)
			settle()
		}
	}
	var first, all []float64
	for _, v := range b.eval(`window.catalogTimings.filters`).([]any) {
		first = append(first, v.(float64))
	}
	for _, v := range b.eval(`window.catalogTimings.filtersComplete.filter(x => x !== null)`).([]any) {
		all = append(all, v.(float64))
	}
	slices.Sort(first)
	slices.Sort(all)
	over := len(first) - sort.SearchFloat64s(first, 50.0000001)
	t.Logf("%d filter changes (facets %v): median %.1f ms, 90th percentile %.1f ms, max %.1f ms to the first screenful (%d over 50 ms: %v); median %.1f ms, max %.1f ms to every tile",
		len(first), facets, first[len(first)/2], first[len(first)*9/10], first[len(first)-1], over, first[len(first)-over:], all[len(all)/2], all[len(all)-1])
	// Where a change's time goes: matching and counting (the page's own
	// work over the packages, with the counts written), the first
	// screenful of tiles put in the page, and the layout.
	var logic, tiles, layout []float64
	for _, v := range b.eval(`window.catalogTimings.filterParts || []`).([]any) {
		m := v.(map[string]any)
		logic = append(logic, m["match"].(float64)+m["counts"].(float64))
		tiles = append(tiles, m["tiles"].(float64))
		layout = append(layout, m["layout"].(float64))
	}
	for _, part := range []struct {
		name string
		ms   []float64
	}{{"matching and counts", logic}, {"tiles", tiles}, {"layout", layout}} {
		if len(part.ms) == 0 {
			continue
		}
		slices.Sort(part.ms)
		t.Logf("  %s: median %.1f ms, 90th percentile %.1f ms, max %.1f ms", part.name, part.ms[len(part.ms)/2], part.ms[len(part.ms)*9/10], part.ms[len(part.ms)-1])
	}
}
