// The catalog page of `opm serve --http-addr`: plain JavaScript, no build
// step. Every request URL is relative (the page is served at "/" and at
// "/catalogs/NAME/"). Catalog data reaches the page as text nodes; the one
// exception, a description's HTML, was rendered from Markdown and
// sanitized by the server, and is parsed inert here (DOMParser) and copied
// through an allowlist of elements and attributes (appendSafeHTML).
"use strict";

(function () {
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

  // The answers of one package come from its catalog: the page's own
  // (""), or, on a hub's page, "catalogs/NAME/" (ui/hub.js).
  let apiBase = "";
  function catalogBase(catalog) {
    return catalog ? "catalogs/" + encodeURIComponent(catalog) + "/" : "";
  }

  function pkgURL(name, base) {
    return (base === undefined ? apiBase : base) + "api/v1/packages/" + encodeURIComponent(name);
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many || one + "s");
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
  // "list" or "package"; clearing leaves the other source's error.
  function showStatus(source, msg) {
    const s = $("status");
    if (!msg && s.dataset.source !== source) return;
    s.textContent = msg || "";
    s.dataset.source = msg ? source : "";
    s.hidden = !msg;
  }

  // setTitle sets the window's title: the view's (main; null for the
  // package list), then the catalog's name, which may come after the view
  // (a package opened in a new tab): loadList sets it again then.
  let titleMain = null;
  function setTitle(main) {
    titleMain = main;
    const cat = $("catalog-name").textContent;
    document.title = main ? main + " \u00b7 " + (cat || "catalog") : (cat ? cat + " \u00b7 catalog" : "Catalog");
  }

  // ---- Sanitized HTML ----------------------------------------------------

  // The elements (and their attributes) a rendered description may hold:
  // what pkg/markdown's policy lets through. Anything else is dropped, its
  // text kept, except the elements whose content is not text.
  const SAFE = {
    P: [], BR: [], HR: [], H1: [], H2: [], H3: [], H4: [], H5: [], H6: [],
    UL: [], OL: ["start"], LI: [], BLOCKQUOTE: [], PRE: [], CODE: [], EM: [], STRONG: [], DEL: [], S: [],
    TABLE: [], THEAD: [], TBODY: [], TR: [], TH: ["align"], TD: ["align"], A: ["href", "title"],
  };
  const DROP = new Set(["SCRIPT", "STYLE", "TEMPLATE", "IFRAME", "OBJECT", "EMBED", "NOSCRIPT", "SVG", "MATH", "FORM", "INPUT", "TEXTAREA", "SELECT", "BUTTON"]);

  function copySafe(from, to) {
    for (const n of from.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) {
        to.append(document.createTextNode(n.data));
        continue;
      }
      if (n.nodeType !== Node.ELEMENT_NODE || DROP.has(n.tagName)) continue;
      const allowed = SAFE[n.tagName];
      if (!allowed) {
        copySafe(n, to);
        continue;
      }
      const e = document.createElement(n.tagName.toLowerCase());
      for (const a of allowed) {
        const v = n.getAttribute(a);
        if (v === null) continue;
        if (a === "href" && !/^(https?:|mailto:)/i.test(v.trim())) continue;
        e.setAttribute(a, v);
      }
      if (e.tagName === "A" && e.hasAttribute("href")) {
        e.setAttribute("target", "_blank");
        e.setAttribute("rel", "noopener noreferrer nofollow");
      }
      copySafe(n, e);
      if (e.tagName === "TABLE") to.append(el("div", { class: "scroll-x" }, e));
      else to.append(e);
    }
  }

  // appendSafeHTML parses html inert and appends its allowed content.
  function appendSafeHTML(container, html) {
    const doc = new DOMParser().parseFromString(String(html || ""), "text/html");
    copySafe(doc.body, container);
  }

  // ---- The address: which view ------------------------------------------

  const FACETS = [
    { key: "category", label: "Category", values: (p) => p.categories || [] },
    { key: "provider", label: "Provider", values: (p) => (p.provider ? [p.provider] : []) },
    { key: "capability", label: "Capability level", values: (p) => (p.capabilities ? [p.capabilities] : []),
      order: ["Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot"] },
    { key: "installMode", label: "Install mode", values: (p) => p.installModes || [],
      order: ["OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"] },
    { key: "infrastructure", label: "Infrastructure features", values: (p) => p.infrastructure || [] },
  ];

  function parseHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const v = { pkg: params.get("pkg"), channel: params.get("channel"), bundle: params.get("bundle"), q: params.get("q") || "", filters: {} };
    for (const f of FACETS) v.filters[f.key] = params.getAll(f.key);
    // A hub's views (ui/hub.js): a package's catalog and what installing
    // it into a namespace does; the installed operators; a namespace.
    if (v.pkg) {
      v.catalog = params.get("catalog");
      v.installInto = params.get("installInto");
      v.installChannel = params.get("installChannel");
    } else if (params.has("installed")) {
      v.installed = true;
    } else if (params.get("ns")) {
      v.ns = params.get("ns");
    }
    return v;
  }

  function hashOf(v) {
    const params = new URLSearchParams();
    if (v.pkg) {
      params.set("pkg", v.pkg);
      if (v.catalog) params.set("catalog", v.catalog);
      if (v.channel) params.set("channel", v.channel);
      if (v.bundle) params.set("bundle", v.bundle);
      if (v.installInto) params.set("installInto", v.installInto);
      if (v.installInto && v.installChannel) params.set("installChannel", v.installChannel);
    } else if (v.installed) {
      params.set("installed", "");
    } else if (v.ns) {
      params.set("ns", v.ns);
    } else {
      if (v.q) params.set("q", v.q);
      for (const f of FACETS) for (const x of (v.filters && v.filters[f.key]) || []) params.append(f.key, x);
    }
    const s = params.toString();
    return s ? "#" + s : "";
  }

  // pkgHash is the address of a package's view; on a hub's page it keeps
  // the catalog of the package open.
  function pkgHash(name, extra) {
    const cat = currentPkg && currentPkg.name === name && currentPkg.catalog && current.catalog ? { catalog: current.catalog } : {};
    return hashOf(Object.assign({ pkg: name }, cat, extra || {}));
  }

  // Hooks of the hub's script (ui/hub.js), which sets them before the
  // page starts: list(data) when the package list comes, tile(p, body)
  // for each tile, route(v, prev) for a view that is not the list's nor
  // a package's (true when it shows it), renderers for a package.
  const hooks = { list: null, tile: null, route: null, renderers: [] };

  // ---- The package list ---------------------------------------------------

  // Measured render times, read by the browser test (docs/performance.md).
  const timings = { firstRender: null, firstRenderAt: null, allTiles: null, filters: [], filtersComplete: [], filterParts: [] };
  window.catalogTimings = timings;

  const list = {
    loaded: false,
    total: 0,
    pkgs: [], // sorted by display name
    tiles: new Map(), // name -> li
    haystack: new Map(), // name -> lowercased text searched
    facetValues: new Map(), // name -> facet key -> its values, lowercased, each once
    boxes: {}, // facet key -> Map(lower value -> {input, count, li, value, shown, zero}: shown and zero as last written)
    selected: {}, // facet key -> Set(lower value)
    // The index by filter value: facet key -> Map(lower value -> the
    // positions in pkgs of the packages that have it), and each package's
    // values as positions; made once per list.
    postings: {},
    searched: null, // the last search: {words, hits: Uint8Array} (1: matches)
  };
  for (const f of FACETS) list.selected[f.key] = new Set();

  async function loadList() {
    let data;
    try {
      data = await getJSON("api/v1/packages?limit=all");
    } catch (e) {
      $("results-count").textContent = "";
      showStatus("list", "Cannot list the packages: " + e.message);
      return;
    }
    showStatus("list", "");
    list.tiles.clear();
    if (hooks.list) {
      hooks.list(data);
      current = parseHash(); // the hub's filters read from the address too
    }
    if (data.catalog) {
      $("catalog-name").textContent = data.catalog;
      setTitle(titleMain); // a view opened before the list came gets the name

    }
    const t0 = performance.now();
    const pkgs = data.packages || [];
    const key = (p) => (p.displayName || p.name).toLowerCase();
    pkgs.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    list.pkgs = pkgs;
    list.total = pkgs.length;
    for (const p of pkgs) {
      list.haystack.set(p.name, [p.name, p.displayName || "", p.shortDescription || "", ...(p.keywords || [])].join("\n").toLowerCase());
      // Each filter's values of the package, lowercased, once: a change
      // of the search or a filter only compares them.
      const fv = {};
      for (const f of FACETS) fv[f.key] = [...new Set(f.values(p).map((x) => String(x).toLowerCase()))];
      list.facetValues.set(p.name, fv);
    }
    indexFacets();
    buildFilters();
    list.loaded = true;
    applyHashToControls(current);
    const t1 = performance.now();
    applyFilters(() => {
      void document.body.offsetHeight;
      timings.allTiles = performance.now() - t0;
    });
    const t2 = performance.now();
    void document.body.offsetHeight; // the layout, in the measure
    const t3 = performance.now();
    timings.firstRender = t3 - t0;
    timings.firstRenderAt = t3;
    timings.firstRenderParts = { prepare: t1 - t0, tiles: t2 - t1, layout: t3 - t2 };
  }

  function tileOf(p) {
    let li = list.tiles.get(p.name);
    if (li) return li;
    const placeholder = () => el("span", { class: "tile-icon placeholder", "aria-hidden": "true" }, (p.displayName || p.name).charAt(0).toUpperCase());
    let icon = placeholder();
    if (p.icon) {
      // An icon the browser cannot show (its bytes are no image) gives
      // way to the placeholder.
      icon = el("img", { class: "tile-icon", src: pkgURL(p.name, catalogBase(p.catalog)) + "/icon", alt: "", loading: "lazy", decoding: "async" });
      icon.addEventListener("error", (ev) => ev.target.replaceWith(placeholder()), { once: true });
    }
    const title = el("span", { class: "tile-title" }, p.displayName || p.name);
    const body = el("span", { class: "tile-body" }, title);
    if (p.provider) body.append(el("span", { class: "tile-provider" }, "by " + p.provider));
    if (p.shortDescription) body.append(el("span", { class: "tile-desc" }, p.shortDescription));
    const meta = el("span", { class: "tile-meta" }, el("span", { class: "pkg-name" }, p.name));
    if (p.version) meta.append(" \u00b7 " + p.version);
    if (p.capabilities) meta.append(" \u00b7 " + p.capabilities);
    body.append(meta);
    if (p.deprecated) body.append(el("span", { class: "badge warn", title: p.deprecated }, "deprecated"));
    if (hooks.tile) hooks.tile(p, body);
    const a = el("a", { class: "tile", href: pkgHash(p.name), "data-name": p.name }, icon, body);
    li = el("li", { class: p.deprecated ? "deprecated" : null }, a);
    list.tiles.set(p.name, li);
    return li;
  }

  // indexFacets indexes the packages by filter value: a filter's
  // selection is then the union of its values' postings, not a test of
  // every package.
  function indexFacets() {
    list.searched = null;
    for (const f of FACETS) {
      const post = new Map();
      list.pkgs.forEach((p, i) => {
        for (const v of list.facetValues.get(p.name)[f.key]) {
          let a = post.get(v);
          if (!a) post.set(v, (a = []));
          a.push(i);
        }
      });
      list.postings[f.key] = post;
    }
  }

  // searchHits marks the packages whose text has every word. A search
  // that only narrows the last (each word of the last within a word of
  // this one) tests only the last one's hits; an unchanged search none.
  function searchHits(words) {
    const n = list.pkgs.length;
    const last = list.searched;
    if (last && last.words.length === words.length && last.words.every((w, i) => w === words[i])) return last.hits;
    const hits = new Uint8Array(n);
    const narrows = last && last.words.every((w) => words.some((x) => x.includes(w)));
    for (let i = 0; i < n; i++) {
      if (narrows && !last.hits[i]) continue;
      const hay = list.haystack.get(list.pkgs[i].name);
      let ok = 1;
      for (const w of words) if (!hay.includes(w)) { ok = 0; break; }
      hits[i] = ok;
    }
    list.searched = { words: words, hits: hits };
    return hits;
  }

  function lowerSet(values) {
    return new Set(values.map((x) => String(x).toLowerCase()));
  }

  // buildFilters makes one fieldset per facet, one checkbox per value,
  // once: a filter change updates counts, never rebuilds (the focus stays).
  function buildFilters() {
    const box = $("filters");
    clear(box);
    for (const f of FACETS) {
      const counts = new Map(); // lower -> [spelling, count]
      for (const p of list.pkgs) {
        for (const v of new Set(f.values(p))) {
          const k = v.toLowerCase();
          const c = counts.get(k);
          if (c) c[1]++;
          else counts.set(k, [v, 1]);
        }
      }
      let entries = [...counts.entries()];
      if (f.order) {
        const rank = (k) => {
          const i = f.order.findIndex((o) => o.toLowerCase() === k);
          return i < 0 ? f.order.length : i;
        };
        entries.sort((a, b) => rank(a[0]) - rank(b[0]) || (a[0] < b[0] ? -1 : 1));
      } else {
        entries.sort((a, b) => b[1][1] - a[1][1] || (a[0] < b[0] ? -1 : 1));
      }
      const fs = el("fieldset", { class: "facet", "data-facet": f.key }, el("legend", null, f.label));
      const ul = el("ul");
      fs.append(ul);
      const boxes = new Map();
      const SHOWN = 8;
      entries.forEach(([k, [v]], i) => {
        const id = "f-" + f.key + "-" + i;
        const input = el("input", { type: "checkbox", id: id, "data-value": v });
        const count = el("span", { class: "count" });
        const li = el("li", { class: i >= SHOWN ? "more" : null }, input, el("label", { for: id }, v, " ", count));
        input.addEventListener("change", () => {
          if (input.checked) list.selected[f.key].add(k);
          else list.selected[f.key].delete(k);
          filtersChanged();
        });
        boxes.set(k, { input, count, li, value: v, shown: -1, zero: null });
        ul.append(li);
      });
      if (entries.length === 0) ul.append(el("li", { class: "muted" }, "none in this catalog"));
      if (entries.length > SHOWN) {
        const more = el("button", { type: "button", class: "plain more-toggle", "aria-expanded": "false" }, "Show " + (entries.length - SHOWN) + " more");
        more.addEventListener("click", () => {
          const open = fs.classList.toggle("open");
          more.setAttribute("aria-expanded", open ? "true" : "false");
          more.textContent = open ? "Show fewer" : "Show " + (entries.length - SHOWN) + " more";
        });
        fs.append(more);
      }
      list.boxes[f.key] = boxes;
      box.append(fs);
    }
  }

  function searchWords() {
    return $("search").value.trim().toLowerCase().split(/\s+/).filter((w) => w);
  }

  // The tiles are put in the page a screenful first, the rest in chunks
  // in the tasks that follow, so that a list of hundreds of packages shows
  // at once and the page stays responsive; a new search or filter cancels
  // the chunks of the last.
  const FIRST_TILES = 60;
  const TILE_CHUNK = 200;
  let renderGen = 0;

  // Taking a tile out of the page costs about as much as laying out a
  // screenful (Chromium tears down each of its nodes), so a change that
  // leaves hundreds of tiles out (all 1,084 packages of a hub to a few)
  // would spend most of its time removing them. Instead, a list losing
  // more than a screenful is retired: a new, empty #results takes its
  // place, and the old list, without its id, inert and not rendered
  // (content-visibility: hidden, no height: nothing of it is drawn, laid
  // out, focused or read out), is emptied in idle time and then removed.
  // The tiles a change shows are moved out of it as they are put in the
  // new list; the page's and tests' "#results li a.tile" are the tiles
  // shown.
  const RETIRE_OVER = FIRST_TILES;
  const retired = [];
  let sweeping = false;

  function retireResults(old) {
    const fresh = old.cloneNode(false);
    old.removeAttribute("id");
    old.classList.add("retired");
    old.inert = true;
    old.before(fresh);
    retired.push(old);
    if (!sweeping) {
      sweeping = true;
      idle(sweep);
    }
    return fresh;
  }

  function idle(fn) {
    if (window.requestIdleCallback) requestIdleCallback(fn, { timeout: 500 });
    else setTimeout(() => fn({ timeRemaining: () => 5, didTimeout: true }), 0);
  }

  // sweep empties the retired lists, a few milliseconds of idle time at a
  // time, and removes them.
  function sweep(deadline) {
    const until = performance.now() + Math.min(Math.max(deadline.timeRemaining(), 2), 8);
    while (retired.length) {
      const ul = retired[0];
      while (ul.lastChild) {
        ul.removeChild(ul.lastChild);
        if (performance.now() >= until) {
          idle(sweep);
          return;
        }
      }
      ul.remove();
      retired.shift();
    }
    sweeping = false;
  }

  // applyFilters shows the matching tiles and updates every count; done,
  // when given, is called once every tile is in the page.
  //
  // One pass over the packages, with the index: each filter with a
  // selection marks the packages it lets through (its values' postings);
  // a package failing no filter is shown and counts in every filter, one
  // failing exactly one filter counts in that filter only (a filter's
  // counts are those of the others and the search), one failing more in
  // none. A count whose number did not change is not written again.
  function applyFilters(done) {
    if (!list.loaded) return;
    const tm0 = performance.now();
    const words = searchWords();
    const n = list.pkgs.length;
    const hits = searchHits(words);
    const fails = new Uint8Array(n); // filters the package fails
    const failed = new Int8Array(n); // the one it fails (when one)
    FACETS.forEach((f, fi) => {
      const sel = list.selected[f.key];
      if (sel.size === 0) return;
      const pass = new Uint8Array(n);
      const post = list.postings[f.key];
      for (const v of sel) for (const i of post.get(v) || []) pass[i] = 1;
      for (let i = 0; i < n; i++) {
        if (!pass[i]) {
          fails[i]++;
          failed[i] = fi;
        }
      }
    });
    const counts = FACETS.map(() => new Map());
    const shown = [];
    for (let i = 0; i < n; i++) {
      if (!hits[i] || fails[i] > 1) continue;
      const p = list.pkgs[i];
      const fv = list.facetValues.get(p.name);
      if (fails[i] === 0) {
        shown.push(p);
        FACETS.forEach((f, fi) => {
          const m = counts[fi];
          for (const v of fv[f.key]) m.set(v, (m.get(v) || 0) + 1);
        });
      } else {
        const fi = failed[i];
        const m = counts[fi];
        for (const v of fv[FACETS[fi].key]) m.set(v, (m.get(v) || 0) + 1);
      }
    }
    const gen = ++renderGen;
    let results = $("results");
    const tm1 = performance.now();
    const first = shown.slice(0, FIRST_TILES).map(tileOf);
    let staying = 0;
    for (const li of first) if (li.parentNode === results) staying++;
    if (results.childElementCount - staying > RETIRE_OVER) {
      results = retireResults(results);
      results.append(...first);
    } else {
      results.replaceChildren(...first);
    }
    const tm2 = performance.now();
    let next = FIRST_TILES;
    const more = () => {
      if (gen !== renderGen) return;
      if (next >= shown.length) {
        if (done) done();
        return;
      }
      const end = Math.min(next + TILE_CHUNK, shown.length);
      const frag = document.createDocumentFragment();
      for (; next < end; next++) frag.append(tileOf(shown[next]));
      results.append(frag);
      setTimeout(more, 0);
    };
    setTimeout(more, 0);
    FACETS.forEach((f, fi) => {
      const m = counts[fi];
      const sel = list.selected[f.key];
      for (const [k, b] of list.boxes[f.key]) {
        const c = m.get(k) || 0;
        const checked = sel.has(k);
        const zero = c === 0 && !checked;
        if (b.shown !== c) {
          b.count.textContent = "(" + c + ")";
          b.shown = c;
        }
        if (b.input.checked !== checked) b.input.checked = checked;
        if (b.zero !== zero) {
          b.li.classList.toggle("zero", zero);
          b.zero = zero;
        }
      }
    });
    timings.lastParts = { match: tm1 - tm0, tiles: tm2 - tm1, counts: performance.now() - tm2 };
    const q = $("search").value.trim();
    const filtered = FACETS.some((f) => list.selected[f.key].size > 0);
    let count = shown.length + " of " + plural(list.total, "package");
    if (q) count += " matching \u201c" + q + "\u201d";
    if (filtered) count += (q ? " and" : "") + " with the filters";
    if (list.total === 0) count = "The catalog has no packages.";
    else if (shown.length === 0) count = "No package" + (q ? " matches \u201c" + q + "\u201d" : "") + (filtered ? (q ? " with" : " matches") + " the filters" : "") + ".";
    $("results-count").textContent = count;
    $("filters-clear").hidden = !q && !filtered;
  }

  // filtersChanged applies the search and filters and keeps them in the
  // address (replacing it: typing is not history).
  function filtersChanged() {
    const t0 = performance.now();
    const n = timings.filters.length;
    applyFilters(() => {
      void document.body.offsetHeight;
      timings.filtersComplete[n] = performance.now() - t0;
    });
    const tl = performance.now();
    void document.body.offsetHeight;
    timings.filters.push(performance.now() - t0);
    timings.lastParts.layout = performance.now() - tl;
    timings.filterParts.push(timings.lastParts);
    const v = { q: $("search").value.trim(), filters: {} };
    for (const f of FACETS) v.filters[f.key] = [...list.boxes[f.key] || []].filter(([k]) => list.selected[f.key].has(k)).map(([, b]) => b.value);
    const h = hashOf(v);
    if (h !== location.hash && !(h === "" && location.hash === "#")) {
      history.replaceState(null, "", h || location.pathname + location.search);
      current = parseHash();
    }
    $("back-link").href = h || "#";
  }

  // applyHashToControls sets the search box and checkboxes from a view.
  function applyHashToControls(v) {
    if ($("search").value.trim() !== v.q) $("search").value = v.q;
    for (const f of FACETS) {
      list.selected[f.key] = lowerSet(v.filters[f.key] || []);
    }
  }

  // ---- One package --------------------------------------------------------

  let current = parseHash(); // the view shown
  let currentPkg = null; // the open package's JSON
  let pkgSeq = 0;
  let lastTile = null; // the package last opened, to focus back on the list

  async function route() {
    const v = parseHash();
    const prev = current;
    current = v;
    const hubView = hooks.route ? hooks.route(v, prev) : false;
    if (hubView) {
      pkgSeq++;
      $("browse").hidden = true;
      $("package").hidden = true;
      showStatus("package", "");
      return;
    }
    if (!v.pkg) {
      showBrowse(prev);
      return;
    }
    $("browse").hidden = true;
    showStatus("list", "");
    // On a hub's page, the package of the catalog named, or else of the
    // one a Subscription without a source uses (the first that offers it).
    const offers = currentPkg && currentPkg.catalogs;
    const wantCatalog = v.catalog || (offers && offers.length ? offers[0].catalog : "");
    let p = currentPkg && currentPkg.name === v.pkg && (!wantCatalog || currentPkg.catalog === wantCatalog) ? currentPkg : null;
    if (!p) {
      const seq = ++pkgSeq;
      try {
        // A hub answers at its root from the package's catalog (the one
        // named, or the one a Subscription without a source uses).
        p = await getJSON(pkgURL(v.pkg, "") + (v.catalog ? "?catalog=" + encodeURIComponent(v.catalog) : ""));
      } catch (e) {
        if (seq !== pkgSeq) return;
        currentPkg = null;
        $("package").hidden = true;
        showStatus("package", "Cannot open package \u201c" + v.pkg + "\u201d: " + e.message);
        setTitle("No package " + v.pkg);
        return;
      }
      if (seq !== pkgSeq || current.pkg !== v.pkg) return;
      currentPkg = p;
      apiBase = catalogBase(p.catalog);
      showStatus("package", "");
      renderPackage(p);
    }
    $("package").hidden = false;
    lastTile = v.pkg;
    await showView(p, v, prev);
  }

  function showBrowse(prev) {
    pkgSeq++;
    $("package").hidden = true;
    $("browse").hidden = false;
    showStatus("package", "");
    setTitle(null);
    $("back-link").href = hashOf(current) || "#";
    // Back from a package: the focus goes to its tile, once in the page.
    const refocus = prev && prev.pkg && lastTile ? () => {
      const li = list.tiles.get(lastTile);
      const a = li && li.parentNode === $("results") ? li.querySelector("a") : null;
      if (a) a.focus();
    } : null;
    if (list.loaded) {
      applyHashToControls(current);
      applyFilters(refocus);
    }
  }

  // The package's sections, in order: each renders from the package's
  // JSON (a section added later adds one line here, and one in index.html).
  const packageRenderers = [renderHeader, renderOverviewOf, setupUpdates, setupInstall, renderChannels, setupGraph, renderBundles];

  function renderPackage(p) {
    $("package").hidden = false;
    for (const r of packageRenderers) r(p);
    for (const r of hooks.renderers) r(p);
    renderJump();
  }

  function renderHeader(p) {
    const op = p.operator || {};
    $("package-title").textContent = op.displayName || p.name;
    $("package-name").textContent = p.name;
    $("crumb-package").textContent = op.displayName || p.name;
    $("crumb-package").href = pkgHash(p.name);
    $("package-provider").textContent = op.provider || "";
    $("package-provider-line").hidden = !op.provider;
    $("package-default-channel").textContent = p.defaultChannel || "(none)";
    const head = (p.bundles || []).find((b) => b.name === op.bundle);
    $("package-version").textContent = head ? head.version : "";
    $("package-version-line").hidden = !head;
    const badges = $("package-badges");
    clear(badges);
    if (op.capabilities) badges.append(el("span", { class: "badge" }, op.capabilities));
    for (const c of op.categories || []) badges.append(el("span", { class: "badge soft" }, c));
    if (p.deprecated) badges.append(el("span", { class: "badge warn" }, "deprecated"));

    const icon = $("package-icon");
    if (p.icon) {
      icon.src = pkgURL(p.name) + "/icon";
      icon.hidden = false;
    } else {
      icon.removeAttribute("src");
      icon.hidden = true;
    }
    const dep = $("package-deprecated");
    clear(dep);
    if (p.deprecated) dep.append(condition("PackageDeprecated", p.deprecated, "on every Subscription to the package"));
    dep.hidden = !p.deprecated;
  }

  // condition is a deprecation as OLM v0 reports it: a Subscription
  // condition of that type whose message is the catalog's.
  function condition(type, msg, when) {
    return el("span", null, "Deprecated. OLM sets the Subscription condition ", el("code", null, type),
      when ? " (" + when + ")" : "", ": \u201c" + msg + "\u201d");
  }

  function renderOverviewOf(p) {
    renderOverview(p.operator, p);
  }

  // renderOverview shows an operator's description, facts and custom
  // resources: the package's head's, or a bundle's.
  function renderOverview(op, p) {
    const desc = $("description");
    clear(desc);
    if (op && op.descriptionHTML) appendSafeHTML(desc, op.descriptionHTML);
    else if (p.descriptionHTML) appendSafeHTML(desc, p.descriptionHTML);
    else desc.append(el("p", { class: "muted" }, "No description."));

    const facts = $("facts");
    clear(facts);
    op = op || {};
    const fact = (label, ...value) => {
      if (value.every((v) => v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0))) return;
      facts.append(el("dt", null, label), el("dd", null, ...value.flat()));
    };
    const link = (url, text) => (/^(https?:\/\/|mailto:)/i.test(url || "") ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer nofollow" }, text || url) : (text || url || ""));
    if (op.bundle) fact("From bundle", el("a", { href: pkgHash(p.name, { bundle: op.bundle }) }, op.bundle));
    fact("Capability level", op.capabilities);
    fact("Provider", op.provider ? (op.providerURL ? link(op.providerURL, op.provider) : op.provider) : "");
    fact("Maturity", op.maturity);
    fact("Repository", op.repository ? link(op.repository) : "");
    fact("Container image", op.containerImage ? el("code", { class: "wrap" }, op.containerImage) : "");
    fact("Created at", op.createdAt);
    fact("Minimum Kubernetes version", op.minKubeVersion);
    fact("Support", op.support);
    fact("Suggested namespace", op.suggestedNamespace ? el("code", null, op.suggestedNamespace) : "");
    fact("Install modes", installModes(op));
    fact("Infrastructure features", (op.infrastructure || []).join(", "));
    fact("Valid subscription", (op.validSubscription || []).join(", "));
    fact("Categories", (op.categories || []).join(", "));
    fact("Keywords", (op.keywords || []).join(", "));
    fact("Maintainers", ...(op.maintainers || []).flatMap((m, i) => [i ? ", " : "", m.email ? link("mailto:" + m.email, m.name || m.email) : m.name || ""]));
    fact("Links", ...(op.links || []).flatMap((l, i) => [i ? ", " : "", link(l.url, l.name || l.url)]));
    if (!op.bundle) facts.append(el("dt", null, "Operator metadata"), el("dd", { class: "muted" }, "The head bundle carries no CSV metadata."));
    renderCRDs(op);
  }

  function installModes(op) {
    const yes = op.installModes || [];
    const no = op.unsupportedInstallModes || [];
    if (!yes.length && !no.length) return "";
    return (yes.length ? yes.join(", ") : "none") + (no.length ? " (not " + no.join(", ") + ")" : "");
  }

  function renderCRDs(op) {
    const box = $("crds");
    clear(box);
    const owned = op.ownedCRDs || [];
    const required = op.requiredCRDs || [];
    const services = (op.ownedAPIServices || []).concat(op.requiredAPIServices || []);
    if (!owned.length && !required.length && !services.length && !(op.examples || []).length) {
      box.append(el("p", { class: "muted" }, "The operator declares no custom resources."));
      return;
    }
    if (op.examplesProblem) box.append(el("p", { class: "warn-text" }, op.examplesProblem));
    if (owned.length) {
      box.append(el("h4", null, "Provided by the operator (owned CRDs)"));
      for (const c of owned) {
        const d = el("details", { class: "crd", "data-kind": c.kind },
          el("summary", null, el("strong", null, c.displayName || c.kind), " ", el("code", { class: "muted" }, c.name + " " + c.version),
            (c.examples || []).length ? el("span", { class: "badge soft" }, plural(c.examples.length, "example")) : null));
        if (c.description) d.append(el("p", null, c.description));
        for (const ex of c.examples || []) d.append(el("p", { class: "label" }, "Example " + c.kind), el("pre", { class: "example" }, ex));
        box.append(d);
      }
    }
    if ((op.examples || []).length) {
      box.append(el("h4", null, "Other examples"));
      for (const ex of op.examples) box.append(el("pre", { class: "example" }, ex));
    }
    if (required.length) {
      box.append(el("h4", null, "Required from other operators (required CRDs)"));
      const ul = el("ul", { class: "plain-list" });
      for (const c of required) ul.append(el("li", null, el("strong", null, c.displayName || c.kind), " ", el("code", { class: "muted" }, c.name + " " + c.version), c.description ? " \u2014 " + c.description : ""));
      box.append(ul);
    }
    if (services.length) {
      box.append(el("h4", null, "API services"));
      const ul = el("ul", { class: "plain-list" });
      for (const s of op.ownedAPIServices || []) ul.append(el("li", null, "owned: ", el("code", null, s.group + "/" + s.version + " " + s.kind), s.displayName ? " \u2014 " + s.displayName : ""));
      for (const s of op.requiredAPIServices || []) ul.append(el("li", null, "required: ", el("code", null, s.group + "/" + s.version + " " + s.kind), s.displayName ? " \u2014 " + s.displayName : ""));
      box.append(ul);
    }
  }

  function renderJump() {
    const nav = $("jump");
    clear(nav); // the sections shown may differ (a hub's)
    for (const s of document.querySelectorAll("#package .pkg-section[data-title]:not([hidden])")) {
      const b = el("button", { type: "button", "data-target": s.id }, s.dataset.title);
      b.addEventListener("click", () => {
        const d = s.querySelector("details");
        if (d) d.open = true;
        s.scrollIntoView({ block: "start" });
        const h = s.querySelector("h3, summary");
        if (h) {
          if (!h.hasAttribute("tabindex") && h.tagName !== "SUMMARY") h.setAttribute("tabindex", "-1");
          h.focus({ preventScroll: true });
        }
      });
      nav.append(b);
    }
  }

  // viewHeading names a channel or bundle view and its package: a deep
  // link may open on it, and the package's own heading above is then the
  // only other place that names the package.
  function viewHeading(kind, name, p) {
    const vt = $("view-title");
    clear(vt);
    vt.append(kind + " " + name, el("span", { class: "view-of" }, " of package " + p.name));
  }

  // scrollToView shows a channel or bundle view opened by a link, a deep
  // link or the history: the page from its top, so that the page's
  // header and the package's heading are seen above the view (which
  // follows them), and, if those are taller than the window, down to the
  // view's heading only. The view's heading takes the focus.
  function scrollToView() {
    const vt = $("view-title");
    window.scrollTo(0, 0);
    if (vt.getBoundingClientRect().bottom > window.innerHeight) vt.scrollIntoView({ block: "end" });
    vt.setAttribute("tabindex", "-1");
    vt.focus({ preventScroll: true });
  }

  // showView shows the package, one of its channels, or one of its
  // bundles.
  async function showView(p, v, prev) {
    const samePkg = prev && prev.pkg === v.pkg;
    const view = $("view");
    const facts = $("view-facts");
    const props = $("view-properties");
    const vdep = $("view-deprecation");
    clear(facts);
    clear(props);
    clear(vdep);
    vdep.hidden = true;
    const title = ($("package-title").textContent || p.name);
    if (v.channel) {
      const c = (p.channels || []).find((c) => c.name === v.channel);
      if (!c) {
        view.hidden = true;
        showStatus("package", "Package \u201c" + p.name + "\u201d has no channel \u201c" + v.channel + "\u201d.");
        setTitle("No channel " + v.channel + " \u00b7 " + title);
        return;
      }
      showStatus("package", "");
      if (prev && prev.bundle) renderOverview(p.operator, p);
      view.hidden = false;
      viewHeading("Channel", c.name, p);
      const dt = (k, ...x) => facts.append(el("dt", null, k), el("dd", null, ...x));
      dt("Head", c.head ? el("a", { href: pkgHash(p.name, { bundle: c.head }) }, c.head) : "(none)");
      dt("Entries", String((c.entries || []).length));
      if (c.name === p.defaultChannel) dt("Default", "the package's default channel: a Subscription that names no channel gets it");
      const head = (c.entries || []).find((e) => e.name === c.head);
      rollup(vdep, p, c, head, "on a Subscription to this channel with its head installed");
      openChannel(c.name);
      for (const id of ["updates-channel", "install-channel", "graph-channel"]) {
        const s = $(id);
        if (s.value !== c.name) {
          s.value = c.name;
          s.dispatchEvent(new Event("change"));
        }
      }
      setTitle("Channel " + c.name + " \u00b7 " + title);
      scrollToView();
      return;
    }
    if (v.bundle) {
      const seq = pkgSeq;
      let b;
      try {
        b = await getJSON(pkgURL(p.name) + "/bundles/" + encodeURIComponent(v.bundle));
      } catch (e) {
        if (seq !== pkgSeq) return;
        view.hidden = true;
        showStatus("package", "Cannot open bundle \u201c" + v.bundle + "\u201d: " + e.message);
        setTitle("No bundle " + v.bundle + " \u00b7 " + title);
        return;
      }
      if (seq !== pkgSeq || current.bundle !== v.bundle || current.pkg !== p.name) return;
      showStatus("package", "");
      view.hidden = false;
      viewHeading("Bundle", b.name, p);
      const dt = (k, ...x) => facts.append(el("dt", null, k), el("dd", null, ...x));
      dt("Version", b.version || "");
      dt("Image", el("code", { class: "wrap" }, b.image || "(none)"));
      dt("Channels", ...(b.channels || []).map((c, i) => [i ? ", " : "", el("a", { href: pkgHash(p.name, { channel: c }) }, c)]).flat());
      if (b.objects) dt("Objects", plural(b.objects, "manifest") + " in olm.bundle.object properties");
      const ch = (p.channels || []).find((c) => (b.channels || []).includes(c.name) && c.name === p.defaultChannel) ||
        (p.channels || []).find((c) => (b.channels || []).includes(c.name));
      const entry = ch ? (ch.entries || []).find((e) => e.name === b.name) : null;
      rollup(vdep, p, ch, entry, "on a Subscription" + (ch ? " to channel " + ch.name : "") + " with this bundle installed");
      if ((b.relatedImages || []).length) {
        props.append(el("h4", null, "Related images"));
        const ul = el("ul", { class: "plain-list" });
        for (const r of b.relatedImages) ul.append(el("li", null, r.name ? r.name + ": " : "", el("code", { class: "wrap" }, r.image)));
        props.append(ul);
      }
      if ((b.properties || []).length) {
        props.append(el("h4", null, "Properties"));
        const tbody = el("tbody");
        for (const pr of b.properties) tbody.append(el("tr", null, el("td", null, el("code", null, pr.type)), el("td", { class: "mono wrap" }, JSON.stringify(pr.value))));
        props.append(el("div", { class: "scroll-x" }, el("table", { class: "grid", id: "view-properties-table" },
          el("thead", null, el("tr", null, el("th", null, "Type"), el("th", null, "Value"))), tbody)));
      }
      renderOverview(b.operator, p);
      // The upgrade question, from this bundle.
      if (ch) {
        const s = $("updates-channel");
        if (s.value !== ch.name) {
          s.value = ch.name;
          s.dispatchEvent(new Event("change"));
        }
        $("updates-from").value = b.name;
        $("updates-version").value = "";
      }
      setTitle("Bundle " + b.name + " \u00b7 " + title);
      scrollToView();
      return;
    }
    view.hidden = true;
    showStatus("package", "");
    if (prev && prev.bundle && samePkg) renderOverview(p.operator, p);
    if (samePkg && (prev.channel || prev.bundle)) {
      for (const id of ["updates-channel", "install-channel"]) {
        const s = $(id);
        if (s.value !== (p.defaultChannel || "")) {
          s.value = p.defaultChannel || "";
          s.dispatchEvent(new Event("change"));
        }
      }
      openChannel(p.defaultChannel);
    }
    setTitle(title);
    window.scrollTo(0, 0);
    $("package-title").focus({ preventScroll: true });
  }

  // rollup shows the deprecations a Subscription would be told of, as
  // OLM v0 tells them: one condition per level (PackageDeprecated,
  // ChannelDeprecated, BundleDeprecated) and the Deprecated condition
  // joining their messages with "; ".
  function rollup(box, p, c, entry, when) {
    const parts = [];
    if (p.deprecated) parts.push(["PackageDeprecated", p.deprecated]);
    if (c && c.deprecated) parts.push(["ChannelDeprecated", c.deprecated]);
    if (entry && entry.deprecated) parts.push(["BundleDeprecated", entry.deprecated]);
    if (!parts.length) return;
    box.append("Deprecated. OLM sets, " + when + ":");
    const ul = el("ul");
    for (const [t, m] of parts) ul.append(el("li", null, el("code", null, t), ": \u201c" + m + "\u201d"));
    ul.append(el("li", null, el("code", null, "Deprecated"), ": \u201c" + parts.map((x) => x[1]).join("; ") + "\u201d"));
    box.append(ul);
    if (c && c.deprecated) box.append(el("p", { class: "muted" }, "ChannelDeprecated only when the Subscription names the channel (spec.channel)."));
    box.hidden = false;
  }

  function openChannel(name) {
    for (const d of document.querySelectorAll("#channels details.channel")) d.open = d.dataset.channel === name;
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
        " \u00b7 " + plural(n, "entry", "entries")));
      const div = el("details", { class: "channel", "data-channel": c.name, open: c.name === p.defaultChannel || chans.length === 1 }, sum);
      div.append(el("p", null, el("a", { href: pkgHash(p.name, { channel: c.name }), class: "ch-link" }, "Channel " + c.name + ": its own page")));
      if (c.deprecated) div.append(el("p", { class: "deprecation" }, condition("ChannelDeprecated", c.deprecated, "when the Subscription names this channel")));
      const tbody = el("tbody");
      for (const e of c.entries || []) {
        const name = el("td", null, e.inCatalog === false ? el("code", null, e.name) : el("a", { href: pkgHash(p.name, { bundle: e.name }) }, el("code", null, e.name)));
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
      div.append(el("div", { class: "scroll-x" }, el("table", { class: "grid" },
        el("thead", null, el("tr", null,
          el("th", null, "Entry"), el("th", null, "Version"), el("th", null, "Replaces"),
          el("th", null, "Skips"), el("th", null, "Skip range"), el("th", null, "Deprecation"))),
        tbody)));
      box.append(div);
    }
  }

  function renderBundles(p) {
    const tbody = $("bundles");
    clear(tbody);
    for (const b of p.bundles || []) {
      tbody.append(el("tr", { class: b.deprecated ? "deprecated" : null },
        el("td", null, el("a", { href: pkgHash(p.name, { bundle: b.name }) }, el("code", null, b.name))),
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
    const url = apiBase + "api/v1/updates?package=" + encodeURIComponent(currentPkg.name) +
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
          stepCRDs(s.crds),
          cell(others, "mono")));
      });
      out.append(el("div", { class: "scroll-x" }, el("table", { id: "updates-path", class: "grid" },
        el("thead", null, el("tr", null,
          el("th", null, "#"), el("th", null, "From"), el("th", null, "To"), el("th", null, "Version"),
          el("th", null, "Edges"), el("th", null, "CRDs"), el("th", null, "Other candidates"))),
        tbody)));
    }

    const refused = path.filter((s) => s.crds && (s.crds.changes || []).some((c) => c.olmV0 === "refuses" || c.olmV1 === "refuses")).length;
    if (refused) {
      out.append(el("p", { id: "updates-crds", class: "warn-text" },
        plural(refused, "step") + " of this path " + (refused === 1 ? "changes" : "change") + " a CRD in a way OLM refuses (the CRDs column says which and how)."));
    }

    if (a.reachesHead) {
      const msg = path.length === 0 ? "Already at the head of the channel." :
        "Reaches the head " + bundleText(a.head) + " in " + plural(path.length, "step") + ".";
      out.append(el("p", { id: "updates-verdict", class: "ok" }, msg));
    } else {
      out.append(el("p", { id: "updates-verdict", class: "error" }, a.problem || "Does not reach the head."));
    }
  }

  // who says in words which OLM refuses a CRD change (alpha/crdsafety's
  // Change.Who).
  function who(c) {
    const v0 = c.olmV0 || "", v1 = c.olmV1 || "";
    if (v0 === "refuses" && v1 === "refuses") return "OLM v0 and v1 refuse it";
    if (v1 === "refuses" && v0 === "refuses-if-resources-break") return "OLM v1 refuses it; OLM v0 refuses it if an existing resource breaks it";
    if (v0 === "not-checked" && v1 === "not-checked") return "not checked: whether OLM v0 and v1 refuse it is not known";
    if (v0 === "not-checked" || v1 === "not-checked") {
      const [known, unknown] = v0 === "not-checked" ? [{ olmV1: v1 }, "v0"] : [{ olmV0: v0 }, "v1"];
      if (!known.olmV0 && !known.olmV1) return "not checked: whether OLM " + unknown + " refuses it is not known";
      return who(known) + "; whether OLM " + unknown + " refuses it is not known (not checked)";
    }
    if (v1 === "refuses") return "OLM v1 refuses it";
    if (v0 === "refuses") return "OLM v0 refuses it";
    if (v0 === "refuses-if-resources-break") return "OLM v0 refuses it if an existing resource breaks it";
    return "neither OLM refuses it";
  }

  // stepCRDs is the CRDs cell of a step of the upgrade path: the changes
  // of its CRDs OLM refuses (docs/crd-safety.md), "compatible" when the
  // two bundles' CRDs were compared and none is, or why they were not.
  function stepCRDs(r) {
    if (!r) return cell("");
    if (r.unknown) return el("td", { class: "muted crds-unknown", title: r.unknown }, "not compared");
    const changes = r.changes || [];
    if (!changes.length) return el("td", { class: "ok crds-ok" }, "compatible");
    const ul = el("ul", { class: "plain-list" });
    for (const c of changes) {
      ul.append(el("li", null, el("code", null, c.crd + (c.version ? " " + c.version : "") + (c.field ? " " + c.field : "")),
        " " + c.check + ": " + c.message + " (" + who(c) + ")"));
    }
    return el("td", { class: "crds-changes" }, el("details", null,
      el("summary", { class: "error" }, plural(changes.length, "incompatible change")), ul));
  }

  // ---- What a new Subscription installs ---------------------------------

  // The answer for the default channel is asked as the package opens (and
  // for a channel as its view opens), so that the page shows what gets
  // installed beside the upgrade question; the form asks again.
  function setupInstall(p) {
    channelOptions($("install-channel"), p, false);
    clear($("install-result"));
    askInstall();
  }

  let instSeq = 0;

  async function askInstall(ev) {
    if (ev) ev.preventDefault();
    if (!currentPkg) return;
    const out = $("install-result");
    clear(out);
    const channel = $("install-channel").value;
    // On a hub's page, at its root: dependencies from every catalog.
    const url = "api/v1/install?package=" + encodeURIComponent(currentPkg.name) +
      "&channel=" + encodeURIComponent(channel) + (currentPkg.catalog ? "&catalog=" + encodeURIComponent(currentPkg.catalog) : "");
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
    const url = apiBase + "api/v1/olmv1/resolve?package=" + encodeURIComponent(currentPkg.name) +
      "&channel=" + encodeURIComponent($("install-channel").value);
    let msg, cls = "error";
    try {
      const a = await getJSON(url);
      const inst = a.installable || {};
      if (!a.bundle) msg = "does not resolve: " + (a.error || "");
      else if (inst.status === "installable") {
        cls = "ok";
        msg = "a ClusterExtension gets " + a.bundle.name + " and OLM v1 can install it.";
      } else if (inst.status === "not installable") {
        msg = "a ClusterExtension gets " + a.bundle.name + ", which OLM v1 cannot install: " + (inst.reasons || []).join("; ");
      } else {
        // Not known: not an error of the package (most catalogs carry no
        // bundle objects).
        cls = "muted";
        msg = "a ClusterExtension gets " + a.bundle.name + "; whether OLM v1 can install it is unknown (the catalog carries no bundle objects).";
      }
    } catch (e) {
      msg = e.message;
    }
    if (seq !== instSeq) return;
    out.append(el("p", { id: "install-olmv1", class: cls }, "OLM v1: " + msg));
  }

  function installText(b) {
    return b.bundle + (b.version ? " (" + b.version + ")" : "") + " \u00b7 channel " + b.channel;
  }

  // installNode is a bundle of the tree with its dependencies beneath it;
  // note is said after the bundle (the head of a continuation). A tree
  // stops 8 deep (the answer's continued bundles): each continuation
  // follows it as a tree of its own, so nothing nests deeper.
  function installNode(n, note) {
    const li = el("li", null, el("code", null, n.bundle), " " + (n.version || "") + " \u00b7 channel " + n.channel);
    if (note) li.append(el("span", { class: "muted" }, note));
    if (n.repeated) {
      li.append(el("span", { class: "muted" }, " (see above)"));
      return li;
    }
    if (n.continued) {
      li.append(el("span", { class: "muted" }, " (continued below)"));
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
        "A new Subscription installs " + plural(n, "bundle") + ": " +
        (a.installs || []).map(installText).join(", ") + "."));
      if (a.tree) out.append(el("ul", { id: "install-tree", class: "tree" }, installNode(a.tree)));
      for (const c of a.continuations || []) {
        out.append(el("ul", { class: "tree install-continuation" }, installNode(c, " (continued from above)")));
      }
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
    $("search").addEventListener("input", filtersChanged);
    $("search").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === "ArrowDown") {
        const first = $("results").querySelector("a.tile");
        if (first) {
          ev.preventDefault();
          first.focus();
        }
      } else if (ev.key === "Escape" && $("search").value) {
        $("search").value = "";
        filtersChanged();
      }
    });
    // Arrow keys move between tiles; "/" goes to the search box.
    // (On #browse: a change may put a new #results in place, see
    // retireResults.)
    $("browse").addEventListener("keydown", (ev) => {
      if (!["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight"].includes(ev.key)) return;
      if (!ev.target.closest || !ev.target.closest("#results")) return;
      const tiles = [...$("results").querySelectorAll("a.tile")];
      const i = tiles.indexOf(document.activeElement);
      if (i < 0) return;
      ev.preventDefault();
      const j = ev.key === "ArrowDown" || ev.key === "ArrowRight" ? i + 1 : i - 1;
      if (j < 0) $("search").focus();
      else if (j < tiles.length) tiles[j].focus();
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.key !== "/" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const t = ev.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
      if (current.pkg) return;
      ev.preventDefault();
      $("search").focus();
      $("search").select();
    });
    $("filters-clear").addEventListener("click", () => {
      $("search").value = "";
      for (const f of FACETS) list.selected[f.key].clear();
      filtersChanged();
      $("search").focus();
    });
    document.querySelector("a.skip").addEventListener("click", (ev) => {
      ev.preventDefault();
      const t = current.pkg ? $("package-title") : $("search");
      t.focus();
    });
    if (window.matchMedia && window.matchMedia("(max-width: 700px)").matches) $("filters-box").open = false;
    $("package-icon").addEventListener("error", () => {
      $("package-icon").hidden = true;
    });
    $("graph").addEventListener("toggle", loadGraph);
    $("graph-channel").addEventListener("change", loadGraph);
    $("graph-img").addEventListener("load", graphLoaded);
    $("graph-fit").addEventListener("change", () => {
      $("graph-img").classList.toggle("fit", $("graph-fit").checked);
    });
    $("graph-img").addEventListener("error", graphFailed);
    $("updates-channel").addEventListener("change", () => {
      fillFrom();
      clear($("updates-result"));
    });
    $("updates-from").addEventListener("change", () => {
      if ($("updates-from").value) $("updates-version").value = "";
    });
    $("updates-form").addEventListener("submit", askUpdates);
    $("install-channel").addEventListener("change", () => askInstall());
    $("install-form").addEventListener("submit", askInstall);
    window.addEventListener("hashchange", route);
    loadList();
    route();
  }

  // The page's other scripts (ui/hub.js), loaded before this one, get
  // what they build on.
  const page = {
    $, el, clear, plural, getJSON, showStatus, setTitle, hashOf, pkgHash, catalogBase, FACETS, list, hooks, applyFilters, renderJump,
    current: () => current,
    currentPkg: () => currentPkg,
    route: () => route(),
    // reload fetches the package list and the open package again (a
    // catalog of a hub was swapped).
    reload: async () => {
      currentPkg = null;
      await loadList();
      await route();
    },
  };
  for (const ext of window.opmPageExtensions || []) ext(page);

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
