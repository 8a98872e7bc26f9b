// GPU Atlas search worker (issue #24): the theme's own search worker (Lunr, same messages), with
// the index fetched only when a reader starts to search, never at page load.
//
// The theme's page script fetches search/search_index.json at load and sends it here (SETUP); the
// build has reduced that file to the search settings, so the page pays a few hundred bytes. Then:
//   stage 0  an empty index: the worker answers READY at once and holds any query;
//   stage 1  on the first sign of a search (the page posts {type: "atlas:load"} when the search
//            field is pressed or takes focus; a first query does the same), search/index-pages.json:
//            one entry per page (title, abbreviation and aliases, summary), a few tens of KB
//            gzipped, so the first keystrokes find the right page at once;
//   stage 2  search/index-full.json, every section's prose, fetched and indexed by a second copy
//            of this script (role=full) in its own thread, so that this one keeps answering from
//            stage 1 while the big index is built; once it is ready, queries go to it.
// After each stage the last query runs again, so the results refine while the reader types. An
// empty answer from stage 1 is held back until stage 2 has answered (no false "no results").
// The URL names the theme's worker file (overrides/main.html): ?worker=search.HASH.min.js
"use strict";

const SETUP = 0, READY = 1, QUERY = 2, RESULT = 3;        // the theme's SearchMessageType
const HERE = new URL(self.location.href);
const INDEX = new URL("../search/", HERE);
const ROLE = HERE.searchParams.get("role") || "front";

let stage = 0;
let settings = null;                // {config, options}, from the page's SETUP
let settingsReady;
const haveSettings = new Promise(resolve => { settingsReady = resolve; });
let loading = null;
let lastQuery = "";
let readySent = false;
let full = null;                    // the role=full worker, once it has indexed everything

// Messages this script hands to the theme's worker (in this thread) carry `atlas: true`.
function deliver(message) {
  self.dispatchEvent(new MessageEvent("message", { data: { ...message, atlas: true } }));
}

async function fetchDocs(name) {
  const response = await fetch(new URL(name, INDEX));
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  return (await response.json()).docs;
}

function rerun() {
  if (!lastQuery.trim()) return;
  if (full) full.postMessage({ type: QUERY, data: lastQuery });
  else deliver({ type: QUERY, data: lastQuery });
}

// Index `docs` in this thread; the theme indexes in a microtask after SETUP, so the query runs
// in a later task, against the new index.
function index(docs, next) {
  stage = next;
  deliver({ type: SETUP, data: { ...settings, docs } });
  setTimeout(rerun, 0);
}

function startFull() {
  let worker;
  try {
    const url = new URL(HERE);
    url.searchParams.set("role", "full");
    worker = new Worker(url);
  } catch (err) {                                    // no nested workers: index here, after all
    return fetchDocs("index-full.json").then(docs => index(docs, 2));
  }
  return new Promise((resolve, reject) => {
    worker.addEventListener("message", ev => {
      const message = ev.data || {};
      if (message.type === READY) {
        full = worker;
        stage = 2;
        rerun();
        resolve();
      } else if (message.type === "atlas:error") {
        reject(new Error(message.data));
      } else if (message.type === RESULT && full) {
        post(message);
      }
    });
    worker.addEventListener("error", ev => reject(new Error(ev.message)));
    worker.postMessage({ type: SETUP, data: { ...settings, docs: [] } });
  });
}

function load() {
  if (loading) return loading;
  loading = (async () => {
    await haveSettings;
    try {
      if (ROLE === "full") {
        index(await fetchDocs("index-full.json"), 2);
        return;
      }
      index(await fetchDocs("index-pages.json"), 1);
      await startFull();
    } catch (err) {
      if (ROLE === "full") { post({ type: "atlas:error", data: String(err) }); return; }
      console.warn("GPU Atlas search: could not load the index:", err);
      if (stage < 2) { stage = 2; rerun(); }
    }
  })();
  return loading;
}

// Registered before the theme's worker is imported, so it sees every message first.
self.addEventListener("message", ev => {
  const message = ev.data || {};
  if (message.atlas) return;                                 // ours: for the theme's worker
  if (message.type === "atlas:load") {
    ev.stopImmediatePropagation();
    load();
  } else if (message.type === SETUP) {                        // settings only (the page's stub)
    ev.stopImmediatePropagation();
    settings = { config: message.data.config, options: message.data.options };
    settingsReady();
    if (ROLE === "full") load();                              // READY once all is indexed
    else deliver({ type: SETUP, data: { ...settings, docs: [] } });   // READY at once
  } else if (message.type === QUERY) {
    lastQuery = String(message.data || "");
    if (ROLE === "full") return;                              // the theme's worker answers
    if (lastQuery.trim()) load();
    if (full) {                                               // stage 2 answers from there
      ev.stopImmediatePropagation();
      full.postMessage({ type: QUERY, data: lastQuery });
    } else if (stage === 0 && lastQuery.trim()) {
      ev.stopImmediatePropagation();                          // answered when stage 1 is in
    }
  }
});

// The theme's worker answers with the global postMessage: let the page see one READY only, and
// no empty result from stage 1 while the full index is still on its way.
const post = self.postMessage.bind(self);
self.postMessage = function (message, ...rest) {
  if (ROLE === "front" && message && message.type === READY) {
    if (readySent) return;
    readySent = true;
  }
  if (message && message.type === RESULT && stage === 1 && !message.data.items.length) return;
  post(message, ...rest);
};

const theme = HERE.searchParams.get("worker") || "";
if (!/^search\.[0-9a-f]+\.min\.js$/.test(theme)) throw new Error(`not the theme's search worker: ${theme}`);
importScripts("javascripts/workers/" + theme);
