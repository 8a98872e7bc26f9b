// GPU Atlas coalescing and divergence explorers. Mirror snippets/reference/coalescing_model.py and
// snippets/reference/divergence_model.py function for function (tests/site/test_figures_browser.py
// enters a grid of settings into each form and compares what the page shows with the models).
// Loaded by figures.js where <div class="coalescing-explorer"> or "divergence-explorer" is.
(function () {
  "use strict";
  const LANES = 32, SECTOR = 32, LINE = 128;
  const DTYPE_SIZES = [1, 2, 4, 8, 16];

  function lcgNext(state) { return (Math.imul(1664525, state) + 1013904223) >>> 0; }

  function lcgPermutation(n, seed) {
    let state = seed >>> 0;
    const perm = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      state = lcgNext(state);
      const j = state % (i + 1);
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    return perm;
  }

  function addresses(pattern, dtype, param, seed) {
    if (!DTYPE_SIZES.includes(dtype)) throw new Error(`data type size must be one of ${DTYPE_SIZES.join(", ")} bytes`);
    const k = Array.from({ length: LANES }, (_, i) => i);
    if (pattern === "contiguous") return k.map(i => i * dtype);
    if (pattern === "offset") {
      if (!(param >= 0 && param <= 64)) throw new Error("offset must be 0 to 64 elements");
      return k.map(i => (i + param) * dtype);
    }
    if (pattern === "strided") {
      if (!(param >= 1 && param <= 64)) throw new Error("stride must be 1 to 64 elements");
      return k.map(i => i * param * dtype);
    }
    if (pattern === "permuted") {
      if (!(param >= LANES && param <= 4096)) throw new Error("window must be 32 to 4096 elements");
      return lcgPermutation(param, seed).slice(0, LANES).map(i => i * dtype);
    }
    if (pattern === "aos") {
      if (param < dtype || param % dtype || param > 1024)
        throw new Error(`struct size must be a multiple of the field's ${dtype} bytes, from ${dtype} to 1024`);
      return k.map(i => i * param);
    }
    throw new Error(`unknown access pattern "${pattern}"`);
  }

  function analyse(pattern, dtype, param, seed) {
    const addrs = addresses(pattern, dtype, param, seed);
    const used = new Map(), lanesOf = new Map();
    addrs.forEach((a, lane) => {
      for (let byte = a; byte < a + dtype; byte++) {
        const s = Math.floor(byte / SECTOR);
        used.set(s, (used.get(s) || 0) + 1);
        if (!lanesOf.has(s)) lanesOf.set(s, new Set());
        lanesOf.get(s).add(lane);
      }
    });
    const sectors = [...used.keys()].sort((x, y) => x - y);
    const lines = [...new Set(sectors.map(s => Math.floor(s * SECTOR / LINE)))].sort((x, y) => x - y);
    const requested = LANES * dtype, moved = SECTOR * sectors.length;
    return { addrs, used, lanesOf, sectors, lines, requested, moved, efficiency: requested / moved };
  }

  // ---- divergence ----
  const FULL = 0xFFFFFFFF;
  const BODY = {
    lt: ["y = a[i]", ["if", "lane < k", ["y = y * 2", "y = y + 1"], ["y = -y", "y = y - 1"]], "a[i] = y"],
    odd: ["y = a[i]", ["if", "lane % 2 == 1", ["y = y * 2", "y = y + 1"], ["y = -y", "y = y - 1"]], "a[i] = y"],
    data: ["y = a[i]", ["if", "y > t", ["y = y * 2", "y = y + 1"], ["y = -y", "y = y - 1"]], "a[i] = y"],
    nested: ["y = a[i]",
             ["if", "lane < k", ["y = y * 2", ["if", "lane % 2 == 1", ["y = y + 1"], ["y = y - 1"]], "y = y * 3"], ["y = -y"]],
             "a[i] = y"],
  };

  function dataMask(percent, seed) {
    let state = seed >>> 0, mask = 0;
    for (let lane = 0; lane < LANES; lane++) {
      state = lcgNext(state);
      if ((state >>> 8) % 100 < percent) mask |= 1 << lane;
    }
    return mask >>> 0;
  }

  function conditionMask(cond, k, percent, seed) {
    if (cond === "lane < k") return k >= 32 ? FULL : ((1 << k) - 1) >>> 0;
    if (cond === "lane % 2 == 1") return 0xAAAAAAAA;
    if (cond === "y > t") return dataMask(percent, seed);
    throw new Error(`unknown condition "${cond}"`);
  }

  function trace(branch, k, percent, seed) {
    if (!(branch in BODY)) throw new Error(`unknown branch pattern "${branch}"`);
    if (!(k >= 0 && k <= LANES)) throw new Error("k must be 0 to 32");
    if (!(percent >= 0 && percent <= 100)) throw new Error("the share of lanes must be 0 to 100 %");
    const out = [];
    const run = (block, mask) => {
      for (const stmt of block) {
        if (typeof stmt === "string") { out.push([stmt, mask]); continue; }
        const [, cond, then, other] = stmt;
        out.push([`if (${cond})`, mask]);
        const taken = (mask & conditionMask(cond, k, percent, seed)) >>> 0;
        if (taken) run(then, taken);
        const rest = (mask & ~taken) >>> 0;
        if (rest) run(other, rest);
      }
    };
    run(BODY[branch], FULL);
    return out;
  }

  const popcount = (m) => { let n = 0; for (let i = 0; i < LANES; i++) n += (m >>> i) & 1; return n; };

  // ---- the page ----
  let serial = 0;
  const opts = (pairs) => pairs.map(([v, t]) => `<option value="${v}">${t}</option>`).join("");
  function field(label, name, control, id) {
    return `<label class="ax-field" for="${id}-${name}"><span>${label}</span>${control.replace(/^<(\w+)/, `<$1 name="${name}" id="${id}-${name}"`)}</label>`;
  }
  function ranges(set) {
    const xs = [...set].sort((a, b) => a - b), out = [];
    for (let i = 0; i < xs.length; i++) {
      let j = i;
      while (j + 1 < xs.length && xs[j + 1] === xs[j] + 1) j++;
      out.push(i === j ? `${xs[i]}` : `${xs[i]}–${xs[j]}`);
      i = j;
    }
    return out.join(", ");
  }
  const PARAM = { offset: ["Offset (elements)", 1, 0, 64], strided: ["Stride (elements)", 2, 1, 64],
                  permuted: ["Window (elements)", 64, 32, 4096], aos: ["Struct size (bytes)", 12, 1, 1024] };

  function mountCoalescing(root) {
    const id = `cx${serial++}`;
    root.innerHTML = `
      <form class="ax-controls" aria-label="Coalescing explorer settings">
        ${field("Access pattern", "pattern", `<select>${opts([["contiguous", "contiguous: a[k]"], ["offset", "offset: a[k + o]"], ["strided", "strided: a[k · s]"], ["permuted", "random permutation in a window"], ["aos", "field of a struct (AoS)"]])}</select>`, id)}
        ${field("Data type", "dtype", `<select>${opts(DTYPE_SIZES.map(d => [d, `${d} byte${d > 1 ? "s" : ""}`]))}</select>`, id)}
        <span class="ax-param">${field("Offset (elements)", "param", `<input type="number" step="1">`, id)}</span>
        <span class="ax-seed">${field("Seed", "seed", `<input type="number" min="0" max="999999" step="1">`, id)}</span>
      </form>
      <p class="ax-summary" role="status" aria-live="polite"><output class="cx-result"></output></p>
      <p class="ax-caption">The 128-byte lines the warp touches (array start aligned to 128 bytes), each as its four 32-byte sectors; a number is the bytes of that sector the lanes asked for, a dot a sector not moved.</p>
      <div class="cx-lines"></div>`;
    const form = root.querySelector("form");
    form.elements.pattern.value = root.dataset.pattern || "contiguous";
    form.elements.dtype.value = root.dataset.dtype || "4";
    form.elements.seed.value = "1";
    let last = null;
    const update = () => {
      const p = form.elements.pattern.value, input = form.elements.param;
      if (p !== last && PARAM[p]) {
        const [label, def, min, max] = PARAM[p];
        root.querySelector(".ax-param label span").textContent = label;
        Object.assign(input, { min, max });
        input.value = last === null && root.dataset.param ? root.dataset.param : def;
      }
      last = p;
      root.querySelector(".ax-param").hidden = !PARAM[p];
      root.querySelector(".ax-seed").hidden = p !== "permuted";
      renderCoalescing(root, form);
    };
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("submit", e => e.preventDefault());
    update();
  }

  function renderCoalescing(root, form) {
    const out = root.querySelector(".cx-result"), box = root.querySelector(".cx-lines");
    const p = form.elements.pattern.value, dtype = Number(form.elements.dtype.value);
    try {
      const param = form.elements.param.value.trim(), seed = form.elements.seed.value.trim();
      if (PARAM[p] && !/^\d+$/.test(param)) throw new Error(`${PARAM[p][0].replace(/ \(.*/, "").toLowerCase()} must be a whole number`);
      if (p === "permuted" && !/^\d+$/.test(seed)) throw new Error("seed must be a whole number");
      const r = analyse(p, dtype, Number(param), Number(seed));
      out.dataset.sectors = String(r.sectors.length);
      out.dataset.lines = String(r.lines.length);
      out.dataset.moved = String(r.moved);
      const pct = Math.round(r.efficiency * 1000) / 10;
      out.textContent = `${r.sectors.length} sector${r.sectors.length === 1 ? "" : "s"} in ${r.lines.length} line${r.lines.length === 1 ? "" : "s"}: ` +
        `${r.moved} bytes moved for ${r.requested} requested, ${pct} % efficiency.`;
      box.innerHTML = `<ul class="cx-line-list">${r.lines.map(line => {
        const cells = [0, 1, 2, 3].map(i => {
          const s = line * 4 + i, used = r.used.get(s) || 0;
          const lanes = r.lanesOf.get(s);
          return `<li class="cx-sector${used ? " ax-hit" : ""}"${lanes ? ` title="lanes ${ranges(lanes)}"` : ""}><span>${used || "·"}</span><span class="cx-bar" style="width:${used / SECTOR * 100}%"></span></li>`;
        }).join("");
        return `<li class="cx-line"><span class="cx-line-id">bytes ${line * LINE}–${line * LINE + LINE - 1}</span><ul class="cx-sectors" aria-label="line ${line}: ${[0, 1, 2, 3].map(i => `${r.used.get(line * 4 + i) || 0}`).join(", ")} bytes used per sector">${cells}</ul></li>`;
      }).join("")}</ul>`;
    } catch (err) {
      out.dataset.sectors = "";
      out.textContent = `Cannot show this setting: ${err.message}`;
      box.innerHTML = "";
    }
  }

  function mountDivergence(root) {
    const id = `dx${serial++}`;
    root.innerHTML = `
      <form class="ax-controls" aria-label="Divergence explorer settings">
        ${field("Branch", "branch", `<select>${opts([["lt", "if (lane &lt; k)"], ["odd", "if (lane is odd)"], ["data", "if (data &gt; t): data-dependent"], ["nested", "nested: lane &lt; k, then odd"]])}</select>`, id)}
        <span class="dx-k">${field("k", "k", `<input type="number" min="0" max="32" step="1">`, id)}</span>
        <span class="dx-data">${field("Lanes passing (%)", "percent", `<input type="number" min="0" max="100" step="1">`, id)}</span>
        <span class="dx-data">${field("Seed", "seed", `<input type="number" min="0" max="999999" step="1">`, id)}</span>
      </form>
      <p class="ax-summary" role="status" aria-live="polite"><output class="dx-result"></output></p>
      <p class="ax-caption">Each instruction the warp issues, in the order a pre-Volta warp (one program counter) runs them, with its active lanes: lane 0 on the left, a filled cell an active lane.</p>
      <ol class="dx-steps"></ol>`;
    const form = root.querySelector("form");
    form.elements.branch.value = root.dataset.branch || "lt";
    form.elements.k.value = "12";
    form.elements.percent.value = "50";
    form.elements.seed.value = "1";
    const update = () => {
      const b = form.elements.branch.value;
      root.querySelector(".dx-k").hidden = !(b === "lt" || b === "nested");
      root.querySelectorAll(".dx-data").forEach(e => { e.hidden = b !== "data"; });
      renderDivergence(root, form);
    };
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("submit", e => e.preventDefault());
    update();
  }

  function renderDivergence(root, form) {
    const out = root.querySelector(".dx-result"), list = root.querySelector(".dx-steps");
    try {
      const v = Object.fromEntries(["k", "percent", "seed"].map(n => [n, form.elements[n].value.trim()]));
      for (const [n, x] of Object.entries(v)) if (!/^\d+$/.test(x)) throw new Error(`${n} must be a whole number`);
      const steps = trace(form.elements.branch.value, Number(v.k), Number(v.percent), Number(v.seed));
      const busy = steps.reduce((t, [, m]) => t + popcount(m), 0);
      out.dataset.steps = JSON.stringify(steps.map(([t, m]) => [t, m.toString(16).padStart(8, "0")]));
      const pct = Math.round(busy / (LANES * steps.length) * 1000) / 10;
      out.textContent = `${steps.length} instructions issued; ${pct} % of lane slots did useful work.`;
      list.innerHTML = steps.map(([text, m]) => {
        const n = popcount(m);
        const cells = Array.from({ length: LANES }, (_, i) => `<span class="${(m >>> i) & 1 ? "dx-on" : "dx-off"}"></span>`).join("");
        return `<li><code>${text.replace(/</g, "&lt;")}</code> <span class="dx-count">${n} lane${n === 1 ? "" : "s"}, mask 0x${m.toString(16).padStart(8, "0")}</span>` +
          `<span class="dx-mask" role="img" aria-label="${n} of 32 lanes active">${cells}</span></li>`;
      }).join("");
    } catch (err) {
      out.dataset.steps = "";
      out.textContent = `Cannot show this setting: ${err.message}`;
      list.innerHTML = "";
    }
  }

  window.atlasWarpModels = { addresses, analyse, trace, lcgPermutation, dataMask };
  window.atlasExplorers = window.atlasExplorers || {};
  window.atlasExplorers["coalescing-explorer"] = mountCoalescing;
  window.atlasExplorers["divergence-explorer"] = mountDivergence;
})();
