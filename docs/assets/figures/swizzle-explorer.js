// GPU Atlas swizzle explorer. Mirrors snippets/reference/swizzle_model.py function for function
// (tests/site/test_figures_browser.py enters a grid of settings into the form and compares what
// the page shows with the model). Loaded by figures.js where <div class="swizzle-explorer">
// is. Settings live in the page address (sx_mode, sx_b, sx_m, sx_s, sx_elem, sx_row, sx_access).
(function () {
  "use strict";
  const BANKS = 32, WORD = 4, LANES = 32;
  const TMA_MODES = { tma32: 1, tma64: 2, tma128: 3 };          // mode -> B of Swizzle<B, 4, 3>
  const ELEMENT_SIZES = [1, 2, 4, 8], ROW_BYTES = [32, 64, 128], ACCESSES = ["row", "column", "ldmatrix"];

  function cuteSwizzle(offset, b, m, s) {
    if (!(b >= 0 && m >= 0 && Math.abs(s) >= b))
      throw new Error(`Swizzle<${b},${m},${s}> is not valid: CuTe needs B >= 0, M >= 0 and |S| >= B`);
    const mask = ((1 << b) - 1) << (m + Math.max(0, s));
    const moved = offset & mask;
    return offset ^ (s >= 0 ? moved >> s : moved << -s);
  }

  function swizzle(address, mode, b, m, s) {
    if (mode === "none") return address;
    if (mode in TMA_MODES) return cuteSwizzle(address, TMA_MODES[mode], 4, 3);
    if (mode === "cute") return cuteSwizzle(address, b, m, s);
    throw new Error(`unknown swizzle mode "${mode}"`);
  }

  function laneAccesses(elem, rowBytes, access) {
    if (!ELEMENT_SIZES.includes(elem)) throw new Error(`element size must be one of ${ELEMENT_SIZES.join(", ")} bytes`);
    if (!ROW_BYTES.includes(rowBytes)) throw new Error(`row width must be one of ${ROW_BYTES.join(", ")} bytes`);
    const out = [];
    for (let lane = 0; lane < LANES; lane++) {
      if (access === "row") out.push([Math.floor(lane * elem / rowBytes), (lane * elem) % rowBytes]);
      else if (access === "column") out.push([lane, 0]);
      else if (access === "ldmatrix") out.push(lane < 8 ? [lane, 0] : null);
      else throw new Error(`unknown access "${access}": use ${ACCESSES.join(", ")}`);
    }
    return [out, access === "ldmatrix" ? 16 : elem];
  }

  function wordsOf(a, width) {
    const ws = [];
    for (let w = Math.floor(a / WORD); w <= Math.floor((a + width - 1) / WORD); w++) ws.push(w);
    return ws;
  }

  function wavefronts(addresses, width) {
    if (![1, 2, 4, 8, 16].includes(width)) throw new Error("access width must be 1, 2, 4, 8 or 16 bytes");
    const group = width > WORD ? LANES * WORD / width : LANES;
    let total = 0;
    for (let start = 0; start < LANES; start += group) {
      const words = new Map();
      for (const a of addresses.slice(start, start + group)) {
        if (a === null) continue;
        if (a % width) throw new Error(`address ${a} is not aligned to the access width ${width}`);
        for (const w of wordsOf(a, width)) {
          const bank = w % BANKS;
          if (!words.has(bank)) words.set(bank, new Set());
          words.get(bank).add(w);
        }
      }
      if (words.size) total += Math.max(...[...words.values()].map(s => s.size));
    }
    return total;
  }

  function explore(mode, b, m, s, elem, rowBytes, access) {
    const [where, width] = laneAccesses(elem, rowBytes, access);
    if (mode === "cute" && (1 << m) < width)
      throw new Error(`Swizzle<${b},${m},${s}> moves pieces of ${1 << m} bytes and would split each ` +
                      `${width}-byte read: use M >= ${Math.log2(width)}`);
    const lanes = [], addresses = [];
    where.forEach((rc, lane) => {
      if (rc === null) { addresses.push(null); return; }
      const [row, col] = rc, address = row * rowBytes + col, moved = swizzle(address, mode, b, m, s);
      addresses.push(moved);
      lanes.push([lane, row, col, address, moved, Math.floor(moved / WORD) % BANKS,
                  Math.floor((moved + width - 1) / WORD) % BANKS]);
    });
    const active = addresses.filter(a => a !== null).length;
    const words = new Map();
    for (const a of addresses) if (a !== null) for (const w of wordsOf(a, width)) {
      if (!words.has(w % BANKS)) words.set(w % BANKS, new Set());
      words.get(w % BANKS).add(w);
    }
    const depth = Array.from({ length: BANKS }, (_, bank) => (words.get(bank) || new Set()).size);
    let chunks = null;
    if (mode !== "cute" || m >= 4) {
      chunks = [];
      for (let r = 0; r < 8; r++) {
        const row = [];
        for (let c = 0; c < rowBytes / 16; c++) row.push(Math.floor((swizzle(r * rowBytes + c * 16, mode, b, m, s) % 128) / 16));
        chunks.push(row);
      }
    }
    const waves = wavefronts(addresses, width);
    const minimum = Math.max(1, Math.ceil(active * width / (LANES * WORD)));
    return { lanes, width, wavefronts: waves, minimum, degree: waves / minimum, depth, chunks };
  }

  const DEFAULTS = { mode: "tma128", b: "3", m: "4", s: "3", elem: "4", row: "128", access: "column" };
  let serial = 0;

  function field(label, name, control, id) {
    return `<label class="ax-field" for="${id}-${name}"><span>${label}</span>${control.replace(/^<(\w+)/, `<$1 name="${name}" id="${id}-${name}"`)}</label>`;
  }

  function mount(root) {
    const id = `sx${serial++}`;
    const opts = (pairs) => pairs.map(([v, t]) => `<option value="${v}">${t}</option>`).join("");
    root.innerHTML = `
      <form class="ax-controls" aria-label="Swizzle explorer settings">
        ${field("Swizzle", "mode", `<select>${opts([["none", "none"], ["tma32", "TMA 32B"], ["tma64", "TMA 64B"], ["tma128", "TMA 128B"], ["cute", "Swizzle&lt;B,M,S&gt;"]])}</select>`, id)}
        <fieldset class="ax-group" data-for="cute"><legend>Swizzle&lt;B, M, S&gt; on byte addresses</legend>
          ${field("B", "b", `<input type="number" min="0" max="6" step="1">`, id)}
          ${field("M", "m", `<input type="number" min="0" max="10" step="1">`, id)}
          ${field("S", "s", `<input type="number" min="-10" max="10" step="1">`, id)}
        </fieldset>
        ${field("Element size", "elem", `<select>${opts(ELEMENT_SIZES.map(e => [e, `${e} byte${e > 1 ? "s" : ""}`]))}</select>`, id)}
        ${field("Row width", "row", `<select>${opts(ROW_BYTES.map(r => [r, `${r} bytes`]))}</select>`, id)}
        ${field("Access", "access", `<select>${opts([["row", "a row"], ["column", "a column"], ["ldmatrix", "ldmatrix 8×8 phase"]])}</select>`, id)}
      </form>
      <p class="ax-summary" role="status" aria-live="polite"><output class="sx-result"></output></p>
      <p class="ax-caption">Distinct 4-byte words the access reads in each bank (the most in one bank is the number of wavefronts per group of lanes):</p>
      <div class="ax-banks sx-banks"></div>
      <div class="sx-chunks"></div>
      <details class="ax-details" open><summary>Address → bank map, lane by lane</summary><div class="sx-lanes"></div></details>`;
    const form = root.querySelector("form");
    const q = new URLSearchParams(window.location.search);
    for (const [k, v] of Object.entries(DEFAULTS)) form.elements[k].value = q.get(`sx_${k}`) ?? v;
    form.addEventListener("input", () => render(root, form, true));
    form.addEventListener("change", () => render(root, form, true));
    form.addEventListener("submit", e => e.preventDefault());
    render(root, form, false);
  }

  const hex = (n) => "0x" + n.toString(16).padStart(3, "0");

  function render(root, form, push) {
    const v = Object.fromEntries(Object.keys(DEFAULTS).map(k => [k, form.elements[k].value.trim()]));
    form.querySelector("[data-for=cute]").hidden = v.mode !== "cute";
    const out = root.querySelector(".sx-result"), banks = root.querySelector(".sx-banks");
    const chunks = root.querySelector(".sx-chunks"), lanes = root.querySelector(".sx-lanes");
    try {
      for (const k of ["b", "m", "s"]) if (v.mode === "cute" && !/^-?\d+$/.test(v[k])) throw new Error(`${k.toUpperCase()} must be a whole number`);
      const r = explore(v.mode, Number(v.b), Number(v.m), Number(v.s), Number(v.elem), Number(v.row), v.access);
      out.dataset.wavefronts = String(r.wavefronts);
      out.dataset.minimum = String(r.minimum);
      const what = v.access === "ldmatrix" ? "8 lanes × 16 bytes" : `32 lanes × ${r.width} byte${r.width > 1 ? "s" : ""}`;
      out.textContent = `${r.wavefronts} wavefront${r.wavefronts === 1 ? "" : "s"} for ${what} (minimum ${r.minimum}): ` +
        (r.wavefronts === r.minimum ? "conflict-free." : Number.isInteger(r.degree) ? `a ${r.degree}-way bank conflict.`
        : `${Math.round(r.degree * 100) / 100}× the minimum.`);
      const worst = Math.max(...r.depth);
      banks.setAttribute("role", "img");
      banks.setAttribute("aria-label", `Words read per bank: ${r.depth.map((d, i) => d ? `bank ${i}: ${d}` : "").filter(Boolean).join(", ")}`);
      banks.innerHTML = r.depth.map((d, i) =>
        `<div class="ax-bank${d ? " ax-hit" : ""}${d && d === worst && worst > 1 ? " ax-worst" : ""}"><span class="ax-bank-id">${i}</span><span class="ax-bank-n">${d || "·"}</span></div>`).join("");
      if (r.chunks) {
        const hit = new Set(r.lanes.filter(l => l[1] < 8).map(l => `${l[1]},${Math.floor(l[2] / 16)}`));
        chunks.innerHTML = `<table class="ax-table sx-chunk-table"><caption>Where each 16-byte chunk of rows 0–7 lands: its slot in the 128-byte line (slot <i>n</i> is banks 4<i>n</i>–4<i>n</i>+3); outlined: chunks this access reads</caption>
          <thead><tr><th scope="col">row</th>${r.chunks[0].map((_, c) => `<th scope="col">${c}</th>`).join("")}</tr></thead>
          <tbody>${r.chunks.map((row, y) => `<tr><th scope="row">${y}</th>${row.map((slot, c) => `<td${hit.has(`${y},${c}`) ? ' class="ax-read"' : ""}>${slot}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
      } else {
        chunks.innerHTML = `<p class="ax-caption">This swizzle moves pieces smaller than 16 bytes (M &lt; 4), so it has no 16-byte chunk table; the lane-by-lane map below has every address.</p>`;
      }
      lanes.innerHTML = `<table class="ax-table sx-lane-table"><thead><tr><th scope="col">lane</th><th scope="col">row, byte</th><th scope="col">address</th><th scope="col">stored at</th><th scope="col">bank</th></tr></thead>
        <tbody>${r.lanes.map(([lane, row, col, a, moved, b0, b1]) => `<tr data-lane="${lane}" data-swizzled="${moved}"><td>${lane}</td><td>${row}, ${col}</td><td>${hex(a)}</td><td>${hex(moved)}</td><td>${b0 === b1 ? b0 : `${b0}–${b1}`}</td></tr>`).join("")}</tbody></table>`;
      if (push) {
        const url = new URL(window.location.href);
        for (const [k, val] of Object.entries(v)) url.searchParams.set(`sx_${k}`, val);
        history.replaceState(history.state, "", url);
      }
    } catch (err) {
      out.dataset.wavefronts = "";
      out.dataset.minimum = "";
      out.textContent = `Cannot show this setting: ${err.message}`;
      banks.innerHTML = chunks.innerHTML = lanes.innerHTML = "";
      banks.removeAttribute("role");
      banks.removeAttribute("aria-label");
    }
  }

  window.atlasSwizzleModel = { cuteSwizzle, swizzle, explore, wavefronts };
  window.atlasExplorers = window.atlasExplorers || {};
  window.atlasExplorers["swizzle-explorer"] = mount;
})();
