// The hub's part of the catalog page (`opm alpha hub`): several catalogs
// and, with a cluster's state, its operators. It adds to ui/app.js
// through the hooks app.js gives it (window.opmPageExtensions, run before
// the page starts), and does nothing on a page of one catalog: it wakes
// up when the package list's answer says "hub": true. Every request URL
// is relative; catalog and cluster data reach the page as text only.
"use strict";

(window.opmPageExtensions = window.opmPageExtensions || []).push(function (page) {
  const { $, el, clear, plural, getJSON, showStatus, setTitle, hashOf, FACETS, list, hooks } = page;

  const hub = {
    on: false,
    catalogs: [], // the catalogs' states (the list's answer)
    cluster: null, // the state's overview; null without a state
    clusterStatus: null, // the state's status: serving or stale, when read
    sig: "", // what the catalogs and the state served were when last seen
    checked: 0, // when api/v1/hub was last asked
  };

  // signature says which snapshots are served: a change means a catalog
  // was loaded, reloaded or failed.
  function signature(cats, cs) {
    return (cats || []).map((c) => [c.name, c.state, c.digest || "", c.loaded || "", c.error || ""].join(" ")).join("\n") +
      (cs ? "\nstate " + [cs.state, cs.read || "", cs.error || ""].join(" ") : "");
  }

  function catalogOf(name) {
    return hub.catalogs.find((c) => c.name === name) || null;
  }

  // hubOfSource is the hub's catalog of a CatalogSource (namespace/name).
  function hubOfSource(source) {
    const c = hub.catalogs.find((c) => c.catalogSource === source);
    return c ? c.name : "";
  }

  function pkgLink(pkg, catalog, text) {
    return el("a", { href: hashOf({ pkg: pkg, catalog: catalog || undefined }) }, text || pkg);
  }

  function nsLink(ns) {
    return el("a", { href: hashOf({ ns: ns }), "data-namespace": ns }, ns);
  }

  // ---- The list: catalogs, facet, tiles --------------------------------

  hooks.list = (data) => {
    if (!data.hub) return;
    const first = !hub.on;
    hub.on = true;
    hub.catalogs = data.catalogs || [];
    hub.cluster = data.cluster || null;
    hub.clusterStatus = data.clusterStatus || null;
    hub.sig = signature(hub.catalogs, hub.clusterStatus);
    if (first) {
      const order = hub.catalogs.slice().sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : 1)).map((c) => c.name);
      FACETS.push({ key: "catalog", label: "Catalog", values: (p) => (p.catalogs || []).map((o) => o.catalog), order: order });
      document.body.classList.add("hub");
      startChecking();
    }
    $("catalog-name").textContent = "hub of " + plural(hub.catalogs.length, "catalog");
    $("hub-nav").hidden = false;
    $("nav-installed").hidden = !hub.cluster;
    renderBar();
    // A package opened before the list came (an address opened in a new
    // tab) gets the hub's parts now.
    const p = page.currentPkg();
    if (first && p) {
      renderOffers(p);
      setupWhatIf(p);
      page.renderJump();
    }
    // So does a view of the hub's (an address of one catalog's page
    // until now).
    const v = page.current();
    if (first && (v.installed || v.ns)) page.route();
  };

  function stateWords(c) {
    switch (c.state) {
      case "loading":
        return "loading\u2026";
      case "failed":
        return "failed to load: " + (c.error || "");
      case "stale":
        return "serving its last good content; the last reload failed: " + (c.error || "");
    }
    return plural(c.packages || 0, "package");
  }

  function renderBar() {
    const ul = $("hub-catalogs");
    clear(ul);
    for (const c of hub.catalogs) {
      const li = el("li", { "data-catalog": c.name, "data-state": c.state, class: c.state === "failed" || c.state === "stale" ? "warn" : null },
        el("a", { href: hashOf({ q: "", filters: { catalog: [c.name] } }) }, el("strong", null, c.name)),
        " ", el("span", { class: "muted" }, "priority " + c.priority + (c.catalogSource ? " \u00b7 CatalogSource " + c.catalogSource : "")),
        " \u00b7 ", el("span", { class: "state" }, stateWords(c)));
      if (c.digest) li.title = c.ref + "@" + c.digest;
      else li.title = c.ref;
      ul.append(li);
    }
    const cs = hub.clusterStatus;
    const sp = $("hub-state");
    if (cs && hub.cluster) {
      const read = cs.read ? new Date(cs.read).toLocaleTimeString() : "";
      sp.textContent = "Cluster state: " + hub.cluster.state + " (read at " + read +
        (cs.intervalSeconds ? "; read again every " + plural(Math.round(cs.intervalSeconds / 60) || 1, "minute") : "") + ")" +
        (cs.state === "stale" ? ". Its last reading failed: " + (cs.error || "") + "; the state read at " + read + " is shown." : ".");
      sp.className = cs.state === "stale" ? "warn-text" : "muted";
      sp.dataset.state = cs.state;
    }
    sp.hidden = !(cs && hub.cluster);
    const un = $("hub-unreachable");
    const missing = hub.cluster ? (hub.cluster.catalogSources || []).filter((cs) => !cs.catalog) : [];
    un.textContent = missing.length
      ? "OLM cannot reach " + missing.map((cs) => cs.catalogSource).join(", ") +
        ": no catalog of the hub gives " + (missing.length === 1 ? "its" : "their") + " content, and OLM fails every namespace that sees " + (missing.length === 1 ? "it" : "them") + "."
      : "";
    un.hidden = !missing.length;
    $("hub-bar").hidden = false;
  }

  hooks.tile = (p, body) => {
    if (!hub.on) return;
    const offers = (p.catalogs || []).map((o) => o.catalog);
    const line = el("span", { class: "tile-catalogs" }, offers.length > 1 ? p.catalog + " +" + (offers.length - 1) : p.catalog || "");
    line.title = offers.length > 1 ? "offered by " + offers.join(", ") + "; a Subscription without a source gets " + p.catalog + "'s" : "offered by " + p.catalog;
    body.append(line);
    const inst = p.installed || [];
    if (inst.length) {
      body.append(el("span", { class: "badge ok installed", title: "installed in " + inst.map((i) => i.namespace + " (" + i.csv + ")").join(", ") },
        inst.length === 1 ? "installed" : "installed \u00d7" + inst.length));
    }
  };

  // ---- Views: installed operators, a namespace --------------------------

  let viewSeq = 0;

  hooks.route = (v) => {
    if (!hub.on) return false; // one catalog's page, or the list not come yet
    $("installed-view").hidden = !v.installed;
    $("ns-view").hidden = !v.ns;
    $("nav-packages").classList.toggle("current", !v.installed && !v.ns);
    $("nav-installed").classList.toggle("current", !!v.installed || !!v.ns);
    if (hub.on && Date.now() - hub.checked > 1000) check();
    if (v.installed) {
      showInstalled();
      return true;
    }
    if (v.ns) {
      showNamespace(v.ns);
      return true;
    }
    return false;
  };

  function outcomeText(o) {
    if (!o) return "";
    switch (o.outcome) {
      case "stays":
        return o.installed ? "stays on " + o.installed : "nothing installed";
      case "upgrades":
        return "upgrades to " + o.to;
      case "installs":
        return "installs " + o.to;
    }
    return o.outcome + (o.why ? ": " + o.why : "");
  }

  function ogCell(v) {
    if (!v) return el("td", { class: "og none" }, "");
    if (v.ok) return el("td", { class: "og ok", title: v.why }, "fits" + (v.installMode ? " (" + v.installMode + ")" : ""));
    return el("td", { class: "og fails" }, el("span", { class: "error" }, "fails: "), v.message || v.why);
  }

  async function showInstalled() {
    const seq = ++viewSeq;
    setTitle("Installed operators");
    const tbody = $("installed-table").querySelector("tbody");
    $("installed-summary").textContent = "Asking\u2026";
    let a;
    try {
      a = await getJSON("api/v1/cluster/installed");
    } catch (e) {
      if (seq !== viewSeq) return;
      clear(tbody);
      $("installed-summary").textContent = "";
      showStatus("package", "Cannot show the installed operators: " + e.message);
      return;
    }
    if (seq !== viewSeq) return;
    showStatus("package", "");
    clear(tbody);
    const ops = a.operators || [];
    const namespaces = new Set(ops.map((o) => o.namespace));
    $("installed-summary").textContent = plural(ops.length, "operator") + " in " + plural(namespaces.size, "namespace") +
      " (" + a.state + "; global catalog namespace " + a.globalNamespace + ").";
    for (const o of ops) {
      const sub = o.subscription;
      const next = o.next;
      const plans = (o.installPlans || []).map((ip) => ip.name + ": " + (ip.phase || "pending") + (ip.approval ? ", " + ip.approval + (ip.approved ? ", approved" : ", not approved") : ""));
      const srcCell = sub
        ? el("td", null, (sub.channel ? "channel " + sub.channel + " \u00b7 " : ""), "from ", sub.catalog ? pkgLink(o.package, sub.catalog, sub.source) : sub.source,
            sub.catalog ? "" : el("span", { class: "warn-text" }, " (OLM cannot reach it)"), sub.approval === "Manual" ? " \u00b7 Manual approval" : "")
        : el("td", { class: "muted" }, "no Subscription: OLM keeps it as it is");
      const cells = [
        el("td", null, nsLink(o.namespace)),
        el("td", null, o.package ? pkgLink(o.package, sub && sub.catalog) : ""),
        el("td", null, o.csv ? el("code", null, o.csv) : el("span", { class: "muted" }, "not installed yet"), o.phase && o.phase !== "Succeeded" ? el("span", { class: "badge warn" }, o.phase) : ""),
        srcCell,
        el("td", { class: "next " + (next ? next.outcome.replace(/\s+/g, "-") : ""), "data-outcome": next ? next.outcome : "" }, outcomeText(next)),
        ogCell(o.operatorGroup),
        el("td", { class: plans.length ? null : "none" }, plans.join("; ")),
      ];
      // At phone width a row is a card, each cell under its heading.
      cells.forEach((td, i) => td.setAttribute("data-label", INSTALLED_COLUMNS[i]));
      tbody.append(el("tr", { "data-namespace": o.namespace, "data-csv": o.csv || "" }, ...cells));
    }
    renderNamespaceList();
    $("installed-title").focus({ preventScroll: true });
  }

  const INSTALLED_COLUMNS = ["Namespace", "Operator", "CSV", "Subscription", "Next sync", "OperatorGroup", "InstallPlans pending"];

  function renderNamespaceList() {
    const nsList = $("namespaces");
    clear(nsList);
    for (const n of (hub.cluster && hub.cluster.namespaces) || []) {
      const parts = [];
      if (n.subscriptions) parts.push(plural(n.subscriptions, "Subscription"));
      if (n.csvs) parts.push(plural(n.csvs, "CSV"));
      parts.push(n.operatorGroups === 1 ? "1 OperatorGroup" : plural(n.operatorGroups, "OperatorGroup"));
      if (n.installPlans) parts.push(plural(n.installPlans, "InstallPlan"));
      nsList.append(el("li", null, nsLink(n.name), " \u2014 " + parts.join(", ")));
    }
  }

  async function showNamespace(ns) {
    const seq = ++viewSeq;
    setTitle("Namespace " + ns);
    $("ns-title").textContent = "Namespace " + ns + ": what OLM's next sync does";
    const out = $("ns-result");
    clear(out);
    out.append(el("p", { class: "muted" }, "Resolving\u2026"));
    let rep;
    try {
      rep = await getJSON("api/v1/cluster?namespace=" + encodeURIComponent(ns) + "&plan=true");
    } catch (e) {
      if (seq !== viewSeq) return;
      clear(out);
      out.append(el("p", { id: "ns-error", class: e.status === 404 ? "muted" : "error" }, e.status === 404 ? e.message + ": OLM's next sync does nothing there." : e.message));
      return;
    }
    if (seq !== viewSeq) return;
    clear(out);
    const n = (rep.namespaces || [])[0];
    if (n) renderNamespace(out, n, rep, "ns");
    $("ns-title").focus({ preventScroll: true });
  }

  // renderNamespace shows one namespace of query cluster's answer; ids
  // are prefixed with pre (ns, or whatif for the question of a package).
  function renderNamespace(out, n, rep, pre, changedSubs) {
    const res = n.resolution;
    let status;
    if (n.skipped) status = el("p", { class: "warn-text" }, "OLM's next sync resolves nothing here: " + n.skipped + ".");
    else if (!res) status = el("p", { class: "muted" }, "No resolution.");
    else if (res.status === "installable") {
      status = el("p", { class: "ok" }, "OLM's next sync resolves the namespace (catalogs: " + (n.catalogs || []).join(", ") + "); InstallPlan approval " + (n.approval || "Automatic") + ".");
    } else if (res.status === "unsatisfiable") {
      status = el("div", null, el("p", { class: "error" }, "OLM's next sync cannot resolve the namespace: every Subscription of it is blocked:"),
        el("ul", null, ...(res.reasons || []).map((r) => el("li", null, r))));
    } else {
      status = el("p", { class: "error" }, "OLM's next sync fails for the whole namespace (" + res.status + "): " + (res.error || ""));
    }
    out.append(el("div", { id: pre + "-status" }, status));

    if ((n.unreachable || []).length) {
      out.append(el("p", { id: pre + "-unreachable", class: "warn-text" }, "OLM cannot reach " + n.unreachable.join(", ") +
        ": no catalog of the hub gives its content, so the namespace's sync fails."));
      if ((n.ifReachable || []).length) {
        out.append(el("p", null, "If it were reachable (and offered nothing more):"),
          el("ul", { class: "plain-list" }, ...n.ifReachable.map((o) => el("li", null, "Subscription " + o.name + ": " + outcomeText(o)))));
      }
    }
    for (const c of n.changes || []) out.append(el("p", { class: "changes" }, c));

    // The Subscriptions.
    const subs = n.subscriptions || [];
    if (subs.length) {
      const tbody = el("tbody");
      for (const o of subs) {
        const cat = hubOfSource(o.source);
        tbody.append(el("tr", { "data-subscription": o.name },
          el("td", null, o.name), el("td", null, pkgLink(o.package, cat)), el("td", null, o.channel || ""),
          el("td", null, o.source + (cat ? "" : " (unreachable)")), el("td", null, o.installed || ""),
          el("td", { class: "outcome " + o.outcome.replace(/\s+/g, "-") }, outcomeText(o))));
      }
      out.append(el("h4", null, "Subscriptions"), el("div", { class: "scroll-x" }, el("table", { id: pre + "-subscriptions", class: "grid" },
        el("thead", null, el("tr", null, ...["Subscription", "Package", "Channel", "Source", "Installed", "Next sync"].map((h) => el("th", null, h)))), tbody)));
    }

    // The InstallPlan's bundles: one plan for the whole namespace.
    const ops = (res && res.operators) || [];
    if (ops.length) {
      const ul = el("ul", { id: pre + "-plan-bundles", class: "plain-list" });
      for (const op of ops) {
        const cat = hubOfSource(op.catalogSourceNamespace + "/" + op.catalogSource);
        const forWhat = (op.subscriptions || []).length ? "for " + op.subscriptions.join(", ") : op.generatedSubscription ? "with a new Subscription " + op.generatedSubscription : "";
        const colocated = changedSubs && (op.subscriptions || []).length && !op.subscriptions.some((s) => changedSubs.includes(s));
        ul.append(el("li", { class: colocated ? "colocated" : null, "data-bundle": op.bundle },
          el("code", null, op.bundle), " " + (op.version || "") + " from ", cat ? pkgLink(op.package, cat, op.catalogSourceNamespace + "/" + op.catalogSource) : op.catalogSourceNamespace + "/" + op.catalogSource,
          " (channel " + op.channel + ")", op.replaces ? ", replacing " + op.replaces : "", forWhat ? ", " + forWhat : "",
          (op.requiredBy || []).length ? "; required by " + op.requiredBy.join(", ") : "", op.upToDate ? " (already the Subscription's current CSV: no step)" : "",
          colocated ? el("span", { class: "badge soft" }, "moves with it") : ""));
      }
      out.append(el("h4", null, "The InstallPlan: " + plural(ops.length, "bundle")),
        el("p", { class: "muted" }, "OLM resolves a namespace as a whole: one InstallPlan holds every bundle below, approved together."), ul);
    }

    // The plan's steps, their effects, the permissions.
    const plan = n.plan;
    if (plan) {
      const effects = plan.effects || [];
      if ((plan.steps || []).length) {
        const tbody = el("tbody");
        plan.steps.forEach((st, i) => {
          const r = st.resource || {};
          const e = effects[i] || {};
          tbody.append(el("tr", null, el("td", null, String(i)), el("td", null, r.kind || ""), el("td", null, el("code", { class: "wrap" }, r.name || "")),
            el("td", null, st.resolving || ""), el("td", { class: "effect " + (e.action || ""), title: e.detail || "" }, (e.action || "") + (e.notReached ? ", not reached" : ""))));
        });
        out.append(el("details", { id: pre + "-steps", class: "section-box" }, el("summary", null, "The InstallPlan's " + plural(plan.steps.length, "step") + " and what executing them does"),
          el("div", { class: "scroll-x" }, el("table", { class: "grid" }, el("thead", null, el("tr", null, ...["#", "Kind", "Name", "For", "Effect"].map((h) => el("th", null, h)))), tbody))));
        const failed = effects.filter((e) => e.action === "fail");
        if (failed.length) out.append(el("p", { class: "error" }, "The InstallPlan fails: " + failed.map((e) => e.kind + " " + e.name + ": " + e.detail).join("; ")));
      }
      if ((plan.bundleLookups || []).length) {
        out.append(el("p", { class: "muted" }, "OLM first unpacks the image of " + plan.bundleLookups.map((b) => b.identifier).join(", ") +
          " (a BundleLookup); the steps of " + (plan.bundleLookups.length === 1 ? "that bundle come" : "those bundles come") + " from the image."));
      }
      if ((plan.notUnpacked || []).length) {
        out.append(el("p", { id: pre + "-not-unpacked", class: "muted" }, "Not shown: the steps and permissions of " + plan.notUnpacked.join(", ") +
          ", whose catalog gives " + (plan.notUnpacked.length === 1 ? "it" : "them") + " by image only (the hub pulls bundle images when started with --pull-bundles)."));
      }
      const perms = plan.permissions || [];
      if (perms.length) {
        const box = el("div", { id: pre + "-permissions" });
        box.append(el("h4", null, "The permissions it grants"));
        for (const p of perms) {
          const scope = p.scope || {};
          const findings = p.findings || [];
          box.append(el("p", null, el("code", null, p.csv), ": " + plural((p.serviceAccounts || []).length, "service account") +
            " (" + (p.serviceAccounts || []).join(", ") + "), " + plural(p.clusterRules || 0, "cluster-wide rule") + ", " + plural(p.namespacedRules || 0, "namespaced rule") +
            (scope.allNamespaces ? "; its namespaced rules apply in every namespace (the OperatorGroup targets all)" : (scope.targetNamespaces || []).length ? "; in " + scope.targetNamespaces.join(", ") : "")));
          if (findings.length) box.append(el("ul", { class: "findings" }, ...findings.map((f) => el("li", { "data-flag": f.flag }, el("strong", null, f.flag), " (" + f.scope + "): " + f.text))));
        }
        out.append(box);
      }
    }

    // The OperatorGroup's verdicts.
    const ogs = n.operatorGroups || [];
    if (ogs.length) {
      out.append(el("h4", null, "OperatorGroup"),
        el("ul", { id: pre + "-og", class: "plain-list" }, ...ogs.map((v) => el("li", { class: v.ok ? "ok" : "fails", "data-csv": v.csv },
          el("code", null, v.csv), v.ok ? (/^fits\b/.test(v.why || "") ? " " + v.why : " fits: " + (v.why || "")) : " fails: " + (v.message || "") + (v.why ? " \u2014 " + v.why : "")))));
    }
  }

  // ---- A package: its catalogs, and installing it into a namespace -------

  hooks.renderers.push(renderOffers, setupWhatIf);

  function renderOffers(p) {
    const box = $("package-offers");
    clear(box);
    if (!p.catalog) {
      box.hidden = true;
      return;
    }
    const offers = p.catalogs || [];
    box.append("Offered by ");
    offers.forEach((o, i) => {
      if (i) box.append(i === offers.length - 1 ? " and " : ", ");
      const a = el("a", { class: "offer" + (o.catalog === p.catalog ? " current" : ""), href: hashOf({ pkg: p.name, catalog: o.catalog }), "data-catalog": o.catalog },
        o.catalog + " (priority " + o.priority + (o.version ? ", " + o.version : "") + ")");
      box.append(a);
      if (i === 0) box.append(el("span", { class: "muted" }, offers.length > 1 ? " \u2014 what a Subscription without a source gets" : ""));
    });
    box.append(". ");
    const entry = list.pkgs.find((x) => x.name === p.name);
    const inst = (entry && entry.installed) || [];
    if (inst.length) {
      box.append("Installed in ", ...inst.flatMap((i, k) => [k ? ", " : "", el("a", { href: hashOf({ ns: i.namespace }) }, i.namespace), " (" + i.csv + ")"]), ".");
    }
    box.hidden = false;
  }

  function setupWhatIf(p) {
    const sec = $("whatif-section");
    clear($("whatif-result"));
    sec.hidden = !(p.catalog && hub.cluster);
    if (sec.hidden) return;
    const dl = $("whatif-namespaces");
    clear(dl);
    for (const n of hub.cluster.namespaces || []) dl.append(el("option", { value: n.name }));
    const sel = $("whatif-channel");
    clear(sel);
    for (const c of p.channels || []) sel.append(el("option", { value: c.name }, c.name + (c.name === p.defaultChannel ? " (default)" : "")));
    sel.value = p.defaultChannel || "";
    const v = page.current();
    if (v.installInto) {
      $("whatif-namespace").value = v.installInto;
      if (v.installChannel) sel.value = v.installChannel;
      askWhatIf();
    } else {
      const first = (hub.cluster.namespaces || []).find((n) => n.operatorGroups === 1 && !n.subscriptions);
      $("whatif-namespace").value = first ? first.name : "";
    }
  }

  let whatIfSeq = 0;

  async function askWhatIf(ev) {
    if (ev) ev.preventDefault();
    const p = page.currentPkg();
    if (!p) return;
    const ns = $("whatif-namespace").value.trim();
    const channel = $("whatif-channel").value;
    const out = $("whatif-result");
    clear(out);
    if (!ns) {
      out.append(el("p", { id: "whatif-error", class: "error" }, "Name a namespace."));
      return;
    }
    // The address keeps the question.
    const v = page.current();
    const h = hashOf(Object.assign({}, v, { installInto: ns, installChannel: channel !== p.defaultChannel ? channel : "" }));
    if (h !== location.hash) history.replaceState(null, "", h);
    const cat = catalogOf(p.catalog);
    let sub = ns + "/" + p.name + (channel ? ",channel=" + channel : "");
    const src = cat && cat.catalogSource;
    if (src) {
      const [sns, sname] = src.split("/");
      sub += ",source=" + sname + ",sourceNamespace=" + sns;
    }
    const seq = ++whatIfSeq;
    out.append(el("p", { class: "muted" }, "Resolving\u2026"));
    let rep;
    try {
      rep = await getJSON("api/v1/cluster?namespace=" + encodeURIComponent(ns) + "&subscribe=" + encodeURIComponent(sub) + "&plan=true");
    } catch (e) {
      if (seq !== whatIfSeq) return;
      clear(out);
      out.append(el("p", { id: "whatif-error", class: "error" }, e.message));
      return;
    }
    if (seq !== whatIfSeq) return;
    clear(out);
    const n = (rep.namespaces || [])[0];
    const hyp = (rep.hypothetical || [])[0];
    const spec = (hyp && hyp.spec) || {};
    out.append(el("p", { id: "whatif-summary" }, "A new Subscription ", el("code", null, (hyp && hyp.metadata && hyp.metadata.name) || p.name),
      " in ", nsLink(ns), " to package " + p.name + (spec.channel ? " (channel " + spec.channel + ")" : "") + " from " + (spec.sourceNamespace || "") + "/" + (spec.source || "") +
      (src ? "" : " (catalog " + p.catalog + " is no CatalogSource of the cluster: OLM's choice among those that are)") + ":"));
    if (n) renderNamespace(out, n, rep, "whatif", hyp ? [hyp.metadata.name] : []);
  }

  // ---- Catalogs reloaded while the page is open -------------------------

  function startChecking() {
    setInterval(() => {
      if (!document.hidden) check();
    }, 15000);
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden) check();
    });
  }

  // check asks the hub which snapshots it serves; when that changed (a
  // catalog reloaded, or failed), the list and the open view are fetched
  // again.
  async function check() {
    hub.checked = Date.now();
    let st;
    try {
      st = await getJSON("api/v1/hub");
    } catch (e) {
      return;
    }
    const sig = signature(st.catalogs, st.clusterStatus);
    if (sig === hub.sig) return;
    const before = new Map(hub.catalogs.map((c) => [c.name, c]));
    const changed = (st.catalogs || []).filter((c) => signature([c]) !== signature([before.get(c.name) || {}]));
    const words = changed.map((c) => "Catalog " + c.name + (c.state === "serving" ? " was reloaded" + (c.digest ? " (" + c.digest.slice(0, 19) + "\u2026)" : "") :
      c.state === "stale" ? "'s reload failed: its last good content is served" : " is " + c.state));
    const cs = st.clusterStatus;
    if (cs && signature([], cs) !== signature([], hub.clusterStatus)) {
      words.push(cs.state === "stale" ? "The cluster state's reading failed: its last good state is shown" : "The cluster state changed");
    }
    hub.sig = sig;
    const note = $("hub-updated");
    const when = new Date().toLocaleTimeString();
    note.textContent = words.join("; ") + " at " + when + ".";
    note.hidden = false;
    await page.reload();
  }

  $("whatif-form").addEventListener("submit", askWhatIf);
});
