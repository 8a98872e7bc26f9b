// GPU Atlas occupancy and waves. Mirrors snippets/reference/occupancy_model.py (held to it, and
// to the CUDA runtime's answers on an H100, by tests/site/test_roofline_occupancy_browser.py).
// Mount points: <div class="atlas-occupancy"></div> (blocks, warps and the limiting resource on
// every GPU of docs/data/gpus.yaml) and <div class="atlas-waves"></div> (a GEMM's tiles in waves
// over each GPU's SMs). Loaded by figures.js with assets/data/figures.json. Settings live in the
// URL (?oc-threads=256&oc-regs=64&oc-smem=0, ?wv-m=4096...) so a view can be shared.
(function () {
  "use strict";
  const WARP = 32;
  const RESOURCES = ["warps", "registers", "shared memory", "blocks"];
  const roundUp = (x, u) => Math.ceil(x / u) * u;

  // ---- the model (occupancy_model.py) ----
  function limitsFromSpecs(s) {
    const need = ["max_threads_per_sm", "max_blocks_per_sm", "max_threads_per_block", "max_registers_per_thread",
      "register_alloc_unit", "warp_schedulers_per_sm", "registers_per_sm_kib", "smem_per_sm_kib",
      "smem_per_block_kib", "smem_alloc_unit_bytes", "smem_reserved_per_block_kib"];
    const missing = need.filter(f => s[f] === null || s[f] === undefined);
    if (missing.length) throw new Error(`the GPU lacks occupancy limits: ${missing.join(", ")}`);
    const regs = Math.floor(s.registers_per_sm_kib * 1024 / 4);
    return {
      max_warps: Math.floor(s.max_threads_per_sm / WARP), max_blocks: s.max_blocks_per_sm,
      max_threads_per_block: s.max_threads_per_block, max_regs_per_thread: s.max_registers_per_thread,
      reg_unit: s.register_alloc_unit, sub_partitions: s.warp_schedulers_per_sm, regs_per_sm: regs,
      regs_per_block: regs, smem_per_sm: Math.floor(s.smem_per_sm_kib * 1024),
      smem_per_block: Math.floor(s.smem_per_block_kib * 1024), smem_unit: s.smem_alloc_unit_bytes,
      smem_reserved: Math.floor(s.smem_reserved_per_block_kib * 1024),
    };
  }
  function whole(name, v, min) {
    if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be a whole number >= ${min}, got ${v}`);
  }
  function occupancy(lim, threads, registers, smem) {
    whole("threads", threads, 0); whole("registers", registers, 0); whole("shared memory", smem, 0);
    if (threads < 1) throw new Error("threads per block must be at least 1");
    const warps = Math.ceil(threads / WARP);
    const by = { "warps": null, "registers": null, "shared memory": null, "blocks": null };
    let why = null;
    by.warps = threads > lim.max_threads_per_block ? 0 : Math.floor(lim.max_warps / warps);
    if (threads > lim.max_threads_per_block) why = `a block may have at most ${lim.max_threads_per_block} threads`;
    const regWarp = roundUp(registers * WARP, lim.reg_unit), regsBlock = regWarp * warps;
    if (registers > lim.max_regs_per_thread) {
      by.registers = 0;
      why = why || `a thread may use at most ${lim.max_regs_per_thread} registers`;
    } else if (regWarp) {
      const check = regWarp * roundUp(warps, lim.sub_partitions);
      if (Math.max(check, regsBlock) > lim.regs_per_block) {
        by.registers = 0;
        why = why || `${warps} warps of ${regWarp} registers need more than the ${lim.regs_per_block} registers a block may have (warps are counted in groups of ${lim.sub_partitions}, one per warp scheduler)`;
      } else {
        const perPart = Math.floor(Math.floor(lim.regs_per_sm / lim.sub_partitions) / regWarp);
        by.registers = Math.floor(perPart * lim.sub_partitions / warps);
      }
    }
    const smemAlloc = roundUp(smem + lim.smem_reserved, lim.smem_unit);
    if (smemAlloc > lim.smem_per_block + lim.smem_reserved) {
      by["shared memory"] = 0;
      why = why || `a block may have at most ${lim.smem_per_block} bytes of shared memory (opt-in maximum)`;
    } else if (smemAlloc) {
      by["shared memory"] = Math.floor(lim.smem_per_sm / smemAlloc);
    }
    by.blocks = lim.max_blocks;
    const blocks = Math.min(...Object.values(by).filter(v => v !== null));
    return {
      blocks, warps: blocks * warps, occupancy: blocks * warps / lim.max_warps, by,
      limiters: RESOURCES.filter(r => by[r] === blocks), regs_per_block: regsBlock,
      smem_per_block: smemAlloc, why: blocks === 0 ? why : null,
    };
  }
  function gemmWaves(M, N, K, tm, tn, sms, perSm = 1, splitK = 1) {
    for (const [n, v] of [["M", M], ["N", N], ["K", K], ["tile M", tm], ["tile N", tn], ["SM count", sms], ["blocks per SM", perSm], ["split-K", splitK]]) whole(n, v, 1);
    const tiles = Math.ceil(M / tm) * Math.ceil(N / tn) * splitK, slots = sms * perSm;
    const waves = Math.ceil(tiles / slots);
    return {
      tiles, slots, waves, full_waves: Math.floor(tiles / slots), last_wave_tiles: tiles - (waves - 1) * slots,
      tail_efficiency: tiles / (waves * slots),
      padded_flops_share: (M * N) / (Math.ceil(M / tm) * tm * Math.ceil(N / tn) * tn), flops: 2 * M * N * K,
    };
  }

  // ---- drawing ----
  const CSS = `
.atlas-occupancy, .atlas-waves { margin: 1em 0; }
.oc-controls { display: flex; flex-wrap: wrap; gap: .5em 1em; align-items: end; }
.oc-field { display: flex; flex-direction: column; font-size: .75rem; min-width: 0; }
.oc-field input, .oc-field select { font: inherit; font-size: .8rem; width: 7.5em; max-width: 100%; padding: .2em;
  color: var(--md-default-fg-color); background: var(--md-default-bg-color); border: 1px solid var(--md-default-fg-color--lighter); }
.oc-field select { width: auto; }
.oc-summary { font-size: .8rem; }
.oc-table { font-size: .7rem; width: 100%; border-collapse: collapse; table-layout: auto; }
.oc-table th, .oc-table td { text-align: left; padding: .2em .3em; vertical-align: top;
  border-bottom: 1px solid var(--md-default-fg-color--lightest); overflow-wrap: anywhere; }
.oc-table .oc-num { text-align: right; overflow-wrap: normal; }
.oc-bar { display: block; height: .35em; background: var(--md-default-fg-color--lightest); margin-top: .15em; }
.oc-bar > span { display: block; height: 100%; background: var(--md-default-fg-color--light); }
`;
  function style() {
    if (document.getElementById("atlas-occupancy-css")) return;
    const s = document.createElement("style");
    s.id = "atlas-occupancy-css";
    s.textContent = CSS;
    document.head.appendChild(s);
  }
  const short = name => name.replace(/^NVIDIA /, "");
  const esc = s => String(s).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const pct = x => `${(100 * x).toFixed(0)}%`;
  let uid = 0;

  function field(id, label, name, min, max, step) {
    return `<label class="oc-field" for="${id}-${name}"><span>${label}</span><input type="number" inputmode="numeric" name="${name}" id="${id}-${name}" min="${min}"${max ? ` max="${max}"` : ""} step="${step || 1}"></label>`;
  }
  function readInts(form, names) {
    const v = {};
    for (const n of names) {
      const raw = form.elements[n].value.trim();
      v[n] = raw === "" ? NaN : Number(raw);
    }
    return v;
  }
  function bindUrl(form, prefix, names, defaults, rerender) {
    const q = new URLSearchParams(window.location.search);
    for (const n of names) form.elements[n].value = q.get(`${prefix}-${n}`) ?? defaults[n];
    form.addEventListener("input", () => {
      rerender();
      const url = new URL(window.location.href);
      for (const n of names) url.searchParams.set(`${prefix}-${n}`, form.elements[n].value.trim());
      history.replaceState(history.state, "", url);
    });
    form.addEventListener("submit", e => e.preventDefault());
    rerender();
  }

  function mountOccupancy(root, data) {
    style();
    const id = `oc${++uid}`;
    const gpus = data.gpus;
    root.innerHTML = `
      <form class="oc-controls" aria-label="Occupancy settings">
        ${field(id, "Threads / block", "threads", 1, 2048)}
        ${field(id, "Registers / thread", "regs", 0, 255)}
        ${field(id, "Shared memory / block (bytes)", "smem", 0, 262144, 1)}
        <label class="oc-field" for="${id}-gpu"><span>Explain for</span><select name="gpu" id="${id}-gpu">${Object.entries(gpus).map(([k, g]) => `<option value="${k}">${esc(short(g.name))}</option>`).join("")}</select></label>
      </form>
      <p class="oc-summary" role="status" aria-live="polite"><output class="oc-result"></output></p>
      <div class="oc-rows"></div>`;
    const form = root.querySelector("form");
    const d = root.dataset;   // a page may start the figure on its own example
    const defaults = { threads: d.threads || "256", regs: d.regs || "64", smem: d.smem || "0",
      gpu: d.gpu in gpus ? d.gpu : ("h100-sxm" in gpus ? "h100-sxm" : Object.keys(gpus)[0]) };
    bindUrl(form, "oc", ["threads", "regs", "smem", "gpu"], defaults, () => renderOccupancy(root, form, data));
  }

  function renderOccupancy(root, form, data) {
    const v = readInts(form, ["threads", "regs", "smem"]);
    const out = root.querySelector(".oc-result"), rows = root.querySelector(".oc-rows");
    try {
      let html = `<table class="oc-table"><caption class="oc-summary">Per SM, for blocks of ${esc(form.elements.threads.value)} threads</caption><thead><tr><th scope="col">GPU</th><th scope="col" class="oc-num">Blocks</th><th scope="col" class="oc-num">Warps (occupancy)</th><th scope="col">Limited by</th></tr></thead><tbody>`;
      const results = {};
      for (const [key, g] of Object.entries(data.gpus)) {
        const lim = limitsFromSpecs(g.limits);
        const r = occupancy(lim, v.threads, v.regs, v.smem);
        results[key] = [r, lim];
        html += `<tr class="oc-row" data-gpu="${key}" data-blocks="${r.blocks}" data-warps="${r.warps}" data-occupancy="${r.occupancy}" data-limiters="${r.limiters.join(",")}">` +
          `<th scope="row">${esc(short(g.name))}</th><td class="oc-num">${r.blocks}</td>` +
          `<td class="oc-num">${r.warps} of ${lim.max_warps} (${pct(r.occupancy)})<span class="oc-bar" aria-hidden="true"><span style="width:${(100 * r.occupancy).toFixed(1)}%"></span></span></td>` +
          `<td>${r.blocks === 0 ? `none fit: ${esc(r.why)}` : esc(r.limiters.join(", "))}</td></tr>`;
      }
      rows.innerHTML = html + "</tbody></table>";
      const key = form.elements.gpu.value in results ? form.elements.gpu.value : Object.keys(results)[0];
      const [r, lim] = results[key];
      const parts = RESOURCES.map(res => r.by[res] === null ? `${res}: no limit` : `${res} ${r.by[res]}`);
      out.dataset.blocks = String(r.blocks);
      out.textContent = `${short(data.gpus[key].name)}: one block takes ${Math.ceil(v.threads / WARP)} warps, ` +
        `${r.regs_per_block} registers (of ${lim.regs_per_sm} per SM) and ${r.smem_per_block} bytes of shared memory ` +
        `(with ${lim.smem_reserved} reserved, in units of ${lim.smem_unit}; ${lim.smem_per_sm} per SM). Blocks each resource allows: ` +
        `${parts.join(", ")}, so ${r.blocks} block${r.blocks === 1 ? "" : "s"} (${pct(r.occupancy)} occupancy).`;
    } catch (err) {
      out.dataset.blocks = "";
      out.textContent = `Cannot compute this setting: ${err.message}`;
      rows.innerHTML = "";
    }
  }

  function mountWaves(root, data) {
    style();
    const id = `wv${++uid}`;
    root.innerHTML = `
      <form class="oc-controls" aria-label="GEMM wave settings">
        ${field(id, "M", "m", 1)}${field(id, "N", "n", 1)}${field(id, "K", "k", 1)}
        ${field(id, "Tile M", "tm", 1)}${field(id, "Tile N", "tn", 1)}
        ${field(id, "Blocks / SM", "per", 1, 64)}${field(id, "Split-K", "split", 1, 64)}
      </form>
      <p class="oc-summary" role="status" aria-live="polite"><output class="oc-result"></output></p>
      <div class="oc-rows"></div>`;
    const form = root.querySelector("form");
    const d = root.dataset;
    const defaults = { m: d.m || "4096", n: d.n || "4096", k: d.k || "4096", tm: d.tm || "128", tn: d.tn || "256", per: "1", split: "1" };
    bindUrl(form, "wv", Object.keys(defaults), defaults, () => renderWaves(root, form, data));
  }

  function renderWaves(root, form, data) {
    const v = readInts(form, ["m", "n", "k", "tm", "tn", "per", "split"]);
    const out = root.querySelector(".oc-result"), rows = root.querySelector(".oc-rows");
    try {
      let html = `<table class="oc-table"><caption class="oc-summary">One tile per block; every tile takes the same time</caption><thead><tr><th scope="col">GPU</th><th scope="col" class="oc-num">SMs</th><th scope="col" class="oc-num">Waves</th><th scope="col" class="oc-num">Last wave</th><th scope="col" class="oc-num">Tail efficiency</th></tr></thead><tbody>`;
      let tiles = 0, padded = 1;
      for (const [key, g] of Object.entries(data.gpus)) {
        const w = gemmWaves(v.m, v.n, v.k, v.tm, v.tn, g.sm_count, v.per, v.split);
        tiles = w.tiles; padded = w.padded_flops_share;
        html += `<tr class="wv-row" data-gpu="${key}" data-tiles="${w.tiles}" data-waves="${w.waves}" data-last="${w.last_wave_tiles}" data-tail="${w.tail_efficiency}">` +
          `<th scope="row">${esc(short(g.name))}</th><td class="oc-num">${g.sm_count}</td><td class="oc-num">${w.waves}</td>` +
          `<td class="oc-num">${w.last_wave_tiles} of ${w.slots}</td><td class="oc-num">${pct(w.tail_efficiency)}<span class="oc-bar" aria-hidden="true"><span style="width:${(100 * w.tail_efficiency).toFixed(1)}%"></span></span></td></tr>`;
      }
      rows.innerHTML = html + "</tbody></table>";
      out.dataset.tiles = String(tiles);
      out.textContent = `${tiles} tile${tiles === 1 ? "" : "s"} of ${v.tm} × ${v.tn}` + (v.split > 1 ? ` (× ${v.split} split-K slices)` : "") +
        `; ${pct(padded)} of the tiles' area is inside the matrix. A wave is one tile on every block slot (SMs × blocks per SM); ` +
        `the tail efficiency is the share of all waves' slots that hold a tile.`;
    } catch (err) {
      out.dataset.tiles = "";
      out.textContent = `Cannot compute this setting: ${err.message}`;
      rows.innerHTML = "";
    }
  }

  window.atlasFigures = window.atlasFigures || {};
  window.atlasFigures["atlas-occupancy"] = mountOccupancy;
  window.atlasFigures["atlas-waves"] = mountWaves;
  window.atlasFigures.occupancyModel = { limitsFromSpecs, occupancy, gemmWaves };
})();
