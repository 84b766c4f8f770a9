// The catalog page of `opm serve --http-addr`: plain JavaScript, no build
// step. Every request URL is relative (the page is served at "/" and at
// "/catalogs/NAME/"), and catalog data only ever reaches the page as text
// nodes, never as HTML.
"use strict";

(function () {
  const LIMIT = 50;
  const DEBOUNCE_MS = 200;

  const $ = (id) => document.getElementById(id);

  // el makes an element: attrs are set as attributes (class, href, ...),
  // children are nodes or strings (turned into text nodes).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.append(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }

  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
  }

  function pkgURL(name) {
    return "api/v1/packages/" + encodeURIComponent(name);
  }

  // getJSON fetches a relative URL and returns its JSON; a 4xx/5xx answer
  // is thrown as an Error with the server's {"error"} message.
  async function getJSON(url, signal) {
    const resp = await fetch(url, { signal: signal, headers: { Accept: "application/json" } });
    let body = null;
    const text = await resp.text();
    try {
      body = JSON.parse(text);
    } catch (e) {
      body = null;
    }
    if (!resp.ok) {
      const msg = body && typeof body.error === "string" ? body.error : (text.trim() || resp.statusText);
      const err = new Error(msg);
      err.status = resp.status;
      throw err;
    }
    if (body === null) throw new Error("the server's answer is not JSON");
    return body;
  }

  // showStatus shows (or, with no msg, clears) the error of one source:
  // "search" or "package"; clearing leaves the other source's error.
  function showStatus(source, msg) {
    const s = $("status");
    if (!msg && s.dataset.source !== source) return;
    s.textContent = msg || "";
    s.dataset.source = msg ? source : "";
    s.hidden = !msg;
  }

  // ---- The package list -------------------------------------------------

  let searchSeq = 0;
  let searchAbort = null;
  let searchTimer = 0;

  async function search() {
    const q = $("search").value.trim();
    const seq = ++searchSeq;
    if (searchAbort) searchAbort.abort();
    searchAbort = new AbortController();
    const url = "api/v1/packages?q=" + encodeURIComponent(q) + "&limit=" + LIMIT;
    let data;
    try {
      data = await getJSON(url, searchAbort.signal);
    } catch (e) {
      if (e.name === "AbortError" || seq !== searchSeq) return;
      $("results-count").textContent = "";
      clear($("results"));
      showStatus("search", "Cannot list the packages: " + e.message);
      return;
    }
    if (seq !== searchSeq) return;
    showStatus("search", "");
    if (data.catalog) {
      $("catalog-name").textContent = data.catalog;
      if (!current) document.title = data.catalog + " · catalog";
    }
    renderResults(data, q);
  }

  function renderResults(data, q) {
    const list = $("results");
    clear(list);
    const pkgs = data.packages || [];
    const total = typeof data.total === "number" ? data.total : pkgs.length;
    let count = pkgs.length + " of " + total + " package" + (total === 1 ? "" : "s");
    if (q) count += " matching \u201c" + q + "\u201d";
    if (total === 0) count = q ? "No package matches \u201c" + q + "\u201d." : "The catalog has no packages.";
    $("results-count").textContent = count;
    for (const p of pkgs) {
      const a = el("a", { href: "#pkg=" + encodeURIComponent(p.name), "data-name": p.name });
      a.append(el("span", { class: "pkg-name" }, p.name));
      if (p.deprecated) a.append(el("span", { class: "badge warn", title: p.deprecated }, "deprecated"));
      const bundles = p.bundles + " bundle" + (p.bundles === 1 ? "" : "s");
      a.append(el("span", { class: "pkg-meta" }, (p.defaultChannel || "no default channel") + " \u00b7 " + bundles));
      const li = el("li", { class: p.deprecated ? "deprecated" : null }, a);
      if (p.name === current) a.setAttribute("aria-current", "page");
      list.append(li);
    }
  }

  function markCurrent() {
    for (const a of $("results").querySelectorAll("a[data-name]")) {
      if (a.dataset.name === current) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
  }

  // ---- One package ------------------------------------------------------

  let current = null; // the open package's name
  let currentPkg = null; // its JSON
  let pkgSeq = 0;

  function hashPackage() {
    const h = location.hash.replace(/^#/, "");
    for (const part of h.split("&")) {
      const [k, v] = part.split("=");
      if (k === "pkg" && v !== undefined) {
        try {
          return decodeURIComponent(v);
        } catch (e) {
          return null;
        }
      }
    }
    return null;
  }

  async function route() {
    const name = hashPackage();
    if (name === current && currentPkg) return;
    current = name;
    markCurrent();
    if (!name) {
      currentPkg = null;
      $("package").hidden = true;
      $("welcome").hidden = false;
      showStatus("package", "");
      return;
    }
    const seq = ++pkgSeq;
    let p;
    try {
      p = await getJSON(pkgURL(name));
    } catch (e) {
      if (seq !== pkgSeq) return;
      currentPkg = null;
      $("package").hidden = true;
      $("welcome").hidden = false;
      showStatus("package", "Cannot open package \u201c" + name + "\u201d: " + e.message);
      return;
    }
    if (seq !== pkgSeq) return;
    currentPkg = p;
    showStatus("package", "");
    renderPackage(p);
  }

  function renderPackage(p) {
    $("welcome").hidden = true;
    $("package").hidden = false;
    document.title = p.name + " · " + ($("catalog-name").textContent || "catalog");
    $("package-name").textContent = p.name;
    $("package-default-channel").textContent = p.defaultChannel || "(none)";

    const icon = $("package-icon");
    if (p.icon) {
      icon.src = pkgURL(p.name) + "/icon";
      icon.hidden = false;
    } else {
      icon.removeAttribute("src");
      icon.hidden = true;
    }
    const dep = $("package-deprecated");
    dep.textContent = p.deprecated ? "Deprecated: " + p.deprecated : "";
    dep.hidden = !p.deprecated;

    const desc = $("description");
    desc.textContent = p.description || "";
    $("description-box").hidden = !p.description;

    renderChannels(p);
    renderBundles(p);
    setupGraph(p);
    setupUpdates(p);
    setupInstall(p);
    window.scrollTo(0, 0);
  }

  function cell(text, cls) {
    return el("td", cls ? { class: cls } : null, text === undefined || text === null ? "" : String(text));
  }

  function renderChannels(p) {
    const box = $("channels");
    clear(box);
    const chans = p.channels || [];
    if (chans.length === 0) box.append(el("p", { class: "muted" }, "No channels."));
    for (const c of chans) {
      const n = (c.entries || []).length;
      const sum = el("summary", null, el("span", { class: "ch-name" }, c.name));
      if (c.name === p.defaultChannel) sum.append(el("span", { class: "badge" }, "default"));
      if (c.deprecated) sum.append(el("span", { class: "badge warn" }, "deprecated"));
      sum.append(el("span", { class: "muted ch-meta" }, "head ", el("code", null, c.head || "(none)"),
        " \u00b7 " + n + " entr" + (n === 1 ? "y" : "ies")));
      const div = el("details", { class: "channel", "data-channel": c.name, open: c.name === p.defaultChannel || chans.length === 1 }, sum);
      if (c.deprecated) div.append(el("p", { class: "deprecation" }, "Deprecated: " + c.deprecated));
      const tbody = el("tbody");
      for (const e of c.entries || []) {
        const name = el("td", null, el("code", null, e.name));
        if (e.inCatalog === false) name.append(el("span", { class: "badge warn", title: "named in the channel, but the catalog has no olm.bundle of that name" }, "not in catalog"));
        if (e.name === c.head) name.append(el("span", { class: "badge" }, "head"));
        tbody.append(el("tr", null,
          name,
          cell(e.version),
          cell(e.replaces, "mono"),
          cell((e.skips || []).join(", "), "mono"),
          cell(e.skipRange, "mono"),
          cell(e.deprecated, "warn-text")));
      }
      div.append(el("table", { class: "grid" },
        el("thead", null, el("tr", null,
          el("th", null, "Entry"), el("th", null, "Version"), el("th", null, "Replaces"),
          el("th", null, "Skips"), el("th", null, "Skip range"), el("th", null, "Deprecation"))),
        tbody));
      box.append(div);
    }
  }

  function renderBundles(p) {
    const tbody = $("bundles");
    clear(tbody);
    for (const b of p.bundles || []) {
      tbody.append(el("tr", { class: b.deprecated ? "deprecated" : null },
        el("td", null, el("code", null, b.name)),
        cell(b.version),
        cell(b.image, "mono wrap"),
        cell((b.channels || []).join(", ")),
        cell(b.deprecated, "warn-text")));
    }
    if ((p.bundles || []).length === 0) tbody.append(el("tr", null, el("td", { colspan: "5", class: "muted" }, "No bundles.")));
  }

  function channelOptions(select, p, withAll) {
    clear(select);
    if (withAll) select.append(el("option", { value: "" }, "all channels"));
    for (const c of p.channels || []) {
      select.append(el("option", { value: c.name }, c.name + (c.name === p.defaultChannel ? " (default)" : "")));
    }
    select.value = p.defaultChannel || "";
    if (select.selectedIndex < 0 && select.options.length) select.selectedIndex = 0;
  }

  // ---- The upgrade graph (loaded when its section is opened) ------------

  function setupGraph(p) {
    const g = $("graph");
    g.open = false;
    channelOptions($("graph-channel"), p, true);
    const img = $("graph-img");
    img.removeAttribute("src");
    img.hidden = true;
    $("graph-status").textContent = "";
    $("graph-open").removeAttribute("href");
  }

  function graphURL() {
    if (!currentPkg) return null;
    const ch = $("graph-channel").value;
    return pkgURL(currentPkg.name) + "/graph.svg" + (ch ? "?channel=" + encodeURIComponent(ch) : "");
  }

  function loadGraph() {
    const url = graphURL();
    if (!url || !$("graph").open) return;
    const img = $("graph-img");
    if (img.getAttribute("src") === url) return;
    $("graph-status").textContent = "Drawing the graph\u2026";
    $("graph-status").className = "muted";
    img.hidden = true;
    $("graph-open").href = url;
    img.src = url;
  }

  function graphLoaded() {
    $("graph-status").textContent = "";
    $("graph-img").hidden = false;
  }

  // graphFailed asks the server again for the message of its {"error"}.
  async function graphFailed() {
    const img = $("graph-img");
    const url = img.getAttribute("src");
    if (!url) return;
    img.hidden = true;
    let msg = "The graph could not be drawn.";
    try {
      await getJSON(url);
    } catch (e) {
      if (e.message) msg = "The graph could not be drawn: " + e.message;
    }
    if (img.getAttribute("src") !== url) return;
    $("graph-status").textContent = msg;
    $("graph-status").className = "error";
  }

  // ---- The upgrade question ---------------------------------------------

  function setupUpdates(p) {
    channelOptions($("updates-channel"), p, false);
    fillFrom();
    $("updates-version").value = "";
    clear($("updates-result"));
  }

  function fillFrom() {
    const sel = $("updates-from");
    clear(sel);
    sel.append(el("option", { value: "" }, "\u2014 the version typed \u2192"));
    const c = (currentPkg && currentPkg.channels || []).find((c) => c.name === $("updates-channel").value);
    const entries = c ? c.entries || [] : [];
    for (const e of entries) {
      sel.append(el("option", { value: e.name }, e.name + (e.version ? " (" + e.version + ")" : "")));
    }
    // Default to the channel's oldest entry: the longest path to show.
    if (entries.length) sel.value = entries[entries.length - 1].name;
  }

  let updSeq = 0;

  async function askUpdates(ev) {
    ev.preventDefault();
    if (!currentPkg) return;
    const from = $("updates-version").value.trim() || $("updates-from").value;
    const out = $("updates-result");
    clear(out);
    if (!from) {
      out.append(el("p", { id: "updates-error", class: "error" }, "Pick an installed bundle or type a version."));
      return;
    }
    const url = "api/v1/updates?package=" + encodeURIComponent(currentPkg.name) +
      "&channel=" + encodeURIComponent($("updates-channel").value) +
      "&from=" + encodeURIComponent(from);
    const seq = ++updSeq;
    out.append(el("p", { class: "muted" }, "Asking\u2026"));
    let a;
    try {
      a = await getJSON(url);
    } catch (e) {
      if (seq !== updSeq) return;
      clear(out);
      out.append(el("p", { id: "updates-error", class: "error" }, e.message));
      return;
    }
    if (seq !== updSeq) return;
    clear(out);
    renderAnswer(out, a);
  }

  function bundleText(b) {
    if (!b) return "";
    return b.name + (b.version ? " (" + b.version + ")" : "");
  }

  function renderAnswer(out, a) {
    const inst = a.installed || {};
    let installed = inst.name || inst.version || "";
    if (inst.name && inst.version) installed = inst.name + " (" + inst.version + ")";
    if (!inst.inCatalog) installed += " \u2014 not in the catalog";
    out.append(el("p", { id: "updates-summary" },
      "Channel ", el("strong", null, a.channel), a.defaultChannel ? " (default)" : "",
      "; head ", el("code", null, bundleText(a.head)),
      a.head && a.head.deprecated ? el("span", { class: "badge warn", title: a.head.deprecated }, "deprecated") : null,
      ". Installed: ", el("code", null, installed), "."));

    if (a.next) {
      out.append(el("p", { id: "updates-next", class: "next" },
        "Next update: ", el("code", null, a.next.from), " \u2192 ", el("code", null, bundleText(a.next.to)),
        " (" + (a.next.edges || []).join(", ") + ")"));
    } else {
      out.append(el("p", { id: "updates-next", class: "next" }, "No next update."));
    }

    const path = a.path || [];
    if (path.length) {
      const tbody = el("tbody");
      path.forEach((s, i) => {
        const others = (s.otherCandidates || []).map(bundleText).join(", ");
        const to = el("td", null, el("code", null, s.to ? s.to.name : ""));
        if (s.to && s.to.deprecated) to.append(el("span", { class: "badge warn", title: s.to.deprecated }, "deprecated"));
        tbody.append(el("tr", null,
          cell(String(i + 1)),
          el("td", null, el("code", null, s.from)),
          to,
          cell(s.to ? s.to.version : ""),
          cell((s.edges || []).join(", ")),
          cell(others, "mono")));
      });
      out.append(el("table", { id: "updates-path", class: "grid" },
        el("thead", null, el("tr", null,
          el("th", null, "#"), el("th", null, "From"), el("th", null, "To"), el("th", null, "Version"),
          el("th", null, "Edges"), el("th", null, "Other candidates"))),
        tbody));
    }

    if (a.reachesHead) {
      const msg = path.length === 0 ? "Already at the head of the channel." :
        "Reaches the head " + bundleText(a.head) + " in " + path.length + " step" + (path.length === 1 ? "" : "s") + ".";
      out.append(el("p", { id: "updates-verdict", class: "ok" }, msg));
    } else {
      out.append(el("p", { id: "updates-verdict", class: "error" }, a.problem || "Does not reach the head."));
    }
  }

  // ---- What a new Subscription installs ---------------------------------

  function setupInstall(p) {
    channelOptions($("install-channel"), p, false);
    clear($("install-result"));
  }

  let instSeq = 0;

  async function askInstall(ev) {
    ev.preventDefault();
    if (!currentPkg) return;
    const out = $("install-result");
    clear(out);
    const url = "api/v1/install?package=" + encodeURIComponent(currentPkg.name) +
      "&channel=" + encodeURIComponent($("install-channel").value);
    const seq = ++instSeq;
    out.append(el("p", { class: "muted" }, "Resolving\u2026"));
    let a;
    try {
      a = await getJSON(url);
    } catch (e) {
      if (seq !== instSeq) return;
      clear(out);
      out.append(el("p", { id: "install-error", class: "error" }, e.message));
      return;
    }
    if (seq !== instSeq) return;
    clear(out);
    renderInstall(out, a);
    askInstallOLMv1(out, seq);
  }

  // askInstallOLMv1 adds one line: what a ClusterExtension for the same
  // channel resolves to, and whether OLM v1 can install it.
  async function askInstallOLMv1(out, seq) {
    const url = "api/v1/olmv1/resolve?package=" + encodeURIComponent(currentPkg.name) +
      "&channel=" + encodeURIComponent($("install-channel").value);
    let msg, ok = false;
    try {
      const a = await getJSON(url);
      const inst = a.installable || {};
      if (!a.bundle) msg = "does not resolve: " + (a.error || "");
      else if (inst.status === "installable") {
        ok = true;
        msg = "a ClusterExtension gets " + a.bundle.name + " and OLM v1 can install it.";
      } else if (inst.status === "not installable") {
        msg = "a ClusterExtension gets " + a.bundle.name + ", which OLM v1 cannot install: " + (inst.reasons || []).join("; ");
      } else msg = "a ClusterExtension gets " + a.bundle.name + "; whether OLM v1 can install it is unknown (the catalog carries no bundle objects).";
    } catch (e) {
      msg = e.message;
    }
    if (seq !== instSeq) return;
    out.append(el("p", { id: "install-olmv1", class: ok ? "ok" : "error" }, "OLM v1: " + msg));
  }

  function installText(b) {
    return b.bundle + (b.version ? " (" + b.version + ")" : "") + " \u00b7 channel " + b.channel;
  }

  // installNode is a bundle of the tree with its dependencies beneath it.
  function installNode(n) {
    const li = el("li", null, el("code", null, n.bundle), " " + (n.version || "") + " \u00b7 channel " + n.channel);
    if (n.repeated) {
      li.append(el("span", { class: "muted" }, " (see above)"));
      return li;
    }
    const deps = n.dependencies || [];
    if (deps.length) {
      const ul = el("ul");
      for (const d of deps) {
        const sub = el("ul", null, installNode(d.provider || {}));
        ul.append(el("li", null, el("span", { class: "muted" }, (d.property && d.property.type ? d.property.type + ": " : "") + d.requirement), sub));
      }
      li.append(ul);
    }
    return li;
  }

  function renderInstall(out, a) {
    const n = (a.installs || []).length;
    if (a.status === "installable") {
      out.append(el("p", { id: "install-summary", class: "ok" },
        "A new Subscription installs " + n + " bundle" + (n === 1 ? "" : "s") + ": " +
        (a.installs || []).map(installText).join(", ") + "."));
      if (a.tree) out.append(el("ul", { id: "install-tree", class: "tree" }, installNode(a.tree)));
      return;
    }
    if (a.status === "unsatisfiable") {
      out.append(el("p", { id: "install-summary", class: "error" }, "A new Subscription cannot be installed:"));
      const ul = el("ul", { id: "install-reasons" });
      for (const r of a.reasons || []) ul.append(el("li", null, r));
      out.append(ul);
      return;
    }
    out.append(el("p", { id: "install-summary", class: "error" }, "OLM fails before it resolves: " + (a.error || "")));
  }

  // ---- Wiring -----------------------------------------------------------

  function init() {
    $("search").addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(search, DEBOUNCE_MS);
    });
    $("search").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        clearTimeout(searchTimer);
        search();
      }
    });
    $("package-icon").addEventListener("error", () => {
      $("package-icon").hidden = true;
    });
    $("graph").addEventListener("toggle", loadGraph);
    $("graph-channel").addEventListener("change", loadGraph);
    $("graph-img").addEventListener("load", graphLoaded);
    $("graph-fit").addEventListener("change", () => {
      $("graph-img").classList.toggle("fit", $("graph-fit").checked);
    });
    for (const b of document.querySelectorAll(".jump button[data-target]")) {
      b.addEventListener("click", () => {
        const t = $(b.dataset.target);
        if (!t) return;
        if (t.tagName === "DETAILS") t.open = true;
        t.scrollIntoView({ block: "start" });
      });
    }
    $("graph-img").addEventListener("error", graphFailed);
    $("updates-channel").addEventListener("change", () => {
      fillFrom();
      clear($("updates-result"));
    });
    $("updates-from").addEventListener("change", () => {
      if ($("updates-from").value) $("updates-version").value = "";
    });
    $("updates-form").addEventListener("submit", askUpdates);
    $("install-channel").addEventListener("change", () => clear($("install-result")));
    $("install-form").addEventListener("submit", askInstall);
    window.addEventListener("hashchange", route);
    search();
    route();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
