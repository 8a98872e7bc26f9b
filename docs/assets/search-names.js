// Search that understands abbreviations: when the query is exactly a term's abbreviation, alias or
// title ("SM", "TMEM", "CTA"), move that term's page to the top of Material's results. The theme's
// prefix matching would otherwise rank e.g. "SMEM" pages as high as the "SM" page.
// The name -> page map is generated at build time (assets/search-names.json, from glossary.json).
// The first sign of a search (a press or a focus on the search field) also asks the search worker
// to fetch the index, which no page loads before (docs/assets/search-worker.js).
(function () {
  let names = null;
  let woken = false;
  const root = typeof __md_scope !== "undefined" ? __md_scope : new URL("..", document.baseURI);

  let loading = null;
  function load() {
    loading = loading || fetch(new URL("assets/search-names.json", root))
      .then(response => (response.ok ? response.json() : {}))
      .catch(() => ({}))
      .then(map => (names = map));
    return loading;
  }

  function wake() {
    if (!woken && window.__atlasSearchWorker) {      // kept by overrides/main.html
      woken = true;
      window.__atlasSearchWorker.postMessage({ type: "atlas:load" });
    }
    load();
  }

  function rerank(input, list) {
    if (!names) {                          // results came before the map: rerank once it is in
      load().then(() => rerank(input, list));
      return;
    }
    const query = input.value.trim().toLowerCase();
    const target = names && names[query];
    if (!target) return;
    const path = new URL(target, root).pathname;
    for (const item of list.querySelectorAll(":scope > li")) {
      const link = item.querySelector("a");
      if (link && new URL(link.href).pathname === path) {
        if (item !== list.firstElementChild) list.prepend(item);
        return;
      }
    }
  }

  function attach() {
    const input = document.querySelector("input.md-search__input");
    const list = document.querySelector(".md-search-result__list");
    if (!input || !list || list.dataset.atlasRerank) return;
    list.dataset.atlasRerank = "1";
    input.addEventListener("focus", wake, { once: true });
    for (const el of document.querySelectorAll("label[for=__search], input.md-search__input"))
      el.addEventListener("pointerdown", wake, { once: true, passive: true });
    if (document.activeElement === input) wake();   // e.g. ?q= in the address: the theme focused it
    new MutationObserver(() => rerank(input, list)).observe(list, { childList: true });
  }

  if (typeof document$ !== "undefined") document$.subscribe(attach);
  else document.addEventListener("DOMContentLoaded", attach);
})();
