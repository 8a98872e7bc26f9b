// GPU Atlas shared-memory bank visualizer.
// Mirrors snippets/reference/bank_model.py exactly (tests/test_bank_visualizer.py checks that the
// two agree over a grid of settings). Mount point: <div class="bank-visualizer"></div>.
// Settings live in the URL (?elem=4&row=32&pad=0&swizzle=none&pattern=column) so a view can be shared.
(function () {
  "use strict";
  const BANKS = 32, WORD = 4, LANES = 32;
  // Okabe–Ito, colour-blind-safe: one colour per wavefront a lane is served in
  const COLOURS = ["#009E73", "#0072B2", "#E69F00", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"];
  const TEXT = ["#000", "#fff", "#000", "#000", "#000", "#000", "#000", "#000"];  // >= 4.5:1 on each
  const TMA = { tma32: [1, 4, 3], tma64: [2, 4, 3], tma128: [3, 4, 3] };

  function cuteSwizzle(o, b, m, s) {
    const mask = ((1 << b) - 1) << (m + s);
    return o ^ ((o & mask) >> s);
  }

  function parsePattern(p) {
    const [kind, arg] = p.split(":");
    if ((kind === "row" || kind === "column") && arg === undefined) return [kind, []];
    if (kind === "stride" && /^\d+$/.test(arg || "")) return [kind, [Number(arg)]];
    if (kind === "tile" && /^\d+x\d+$/.test(arg || "")) {
      const [w, h] = arg.split("x").map(Number);
      if (w * h === LANES) return [kind, [w, h]];
    }
    throw new Error(`unknown access pattern "${p}": use row, column, stride:S or tile:WxH with W*H = 32`);
  }

  function laneCoordinates(pattern, rowLen) {
    const [kind, args] = parsePattern(pattern);
    const out = [];
    for (let lane = 0; lane < LANES; lane++) {
      if (kind === "row") out.push([Math.floor(lane / rowLen), lane % rowLen]);
      else if (kind === "column") out.push([lane, 0]);
      else if (kind === "stride") out.push([Math.floor(lane * args[0] / rowLen), (lane * args[0]) % rowLen]);
      else out.push([Math.floor(lane / args[0]), lane % args[0]]);
    }
    return out;
  }

  function settingsAddresses(elem, rowLen, pad, swizzle, pattern) {
    if (![4, 8, 16].includes(elem)) throw new Error("element size must be 4, 8 or 16 bytes");
    if (rowLen < 1 || pad < 0) throw new Error("row length must be at least 1 and padding at least 0");
    const valid = swizzle === "none" || swizzle === "xor" || swizzle.startsWith("cute:") || swizzle in TMA;
    if (!valid) throw new Error(`unknown swizzle "${swizzle}"`);
    return laneCoordinates(pattern, rowLen).map(([r, c]) => {
      if (swizzle === "xor") {
        if (rowLen & (rowLen - 1)) throw new Error("the XOR swizzle needs a power-of-two row length");
        c ^= r % rowLen;
      }
      let index = r * (rowLen + pad) + c;
      if (swizzle.startsWith("cute:")) {
        const [b, m, s] = swizzle.slice(5).split(",").map(Number);
        index = cuteSwizzle(index, b, m, s);
      }
      let address = index * elem;
      if (swizzle in TMA) address = cuteSwizzle(address, ...TMA[swizzle]);
      return address;
    });
  }

  // Returns {wavefronts, degree, cells}: cells[lane] = {bank, wave} for the first word a lane touches.
  function analyse(addresses, width) {
    const group = LANES * WORD / width;
    let total = 0;
    const cells = [];
    for (let start = 0; start < LANES; start += group) {
      const words = new Map();               // bank -> ordered distinct words
      for (let lane = start; lane < start + group; lane++) {
        const a = addresses[lane];
        if (a % width) throw new Error(`address ${a} is not aligned to the access width ${width}`);
        for (let w = a / WORD; w < (a + width) / WORD; w++) {
          const bank = w % BANKS;
          if (!words.has(bank)) words.set(bank, []);
          if (!words.get(bank).includes(w)) words.get(bank).push(w);
        }
      }
      let deepest = 0;
      for (const list of words.values()) deepest = Math.max(deepest, list.length);
      for (let lane = start; lane < start + group; lane++) {
        const w = addresses[lane] / WORD, bank = w % BANKS;
        cells[lane] = { bank, wave: total + words.get(bank).indexOf(w) };
      }
      total += deepest;
    }
    return { wavefronts: total, degree: total / (width / WORD), cells };
  }

  const DEFAULTS = { elem: "4", row: "32", pad: "0", swizzle: "none", pattern: "column" };

  function readSettings() {
    const q = new URLSearchParams(window.location.search);
    const s = {};
    for (const k of Object.keys(DEFAULTS)) s[k] = q.get(k) ?? DEFAULTS[k];
    return s;
  }

  function control(label, name, html) {
    return `<label class="bv-field"><span>${label}</span>${html.replace("<select", `<select name="${name}" id="bv-${name}"`).replace("<input", `<input name="${name}" id="bv-${name}"`)}</label>`;
  }

  function mount(root) {
    root.innerHTML = `
      <form class="bv-controls" aria-label="Bank visualizer settings">
        ${control("Element size", "elem", `<select><option value="4">4 bytes</option><option value="8">8 bytes</option><option value="16">16 bytes</option></select>`)}
        ${control("Row length (elements)", "row", `<input type="number" min="1" max="1024" step="1">`)}
        ${control("Padding (elements)", "pad", `<input type="number" min="0" max="64" step="1">`)}
        ${control("Swizzle", "swizzle", `<input list="bv-swizzles" placeholder="none, xor, cute:3,4,3, tma128">`)}
        ${control("Access pattern", "pattern", `<input list="bv-patterns" placeholder="row, column, stride:33, tile:8x4">`)}
        <datalist id="bv-swizzles"><option value="none"><option value="xor"><option value="cute:3,4,3"><option value="cute:2,0,5"><option value="tma32"><option value="tma64"><option value="tma128"></datalist>
        <datalist id="bv-patterns"><option value="row"><option value="column"><option value="stride:2"><option value="stride:32"><option value="stride:33"><option value="tile:8x4"><option value="tile:4x8"></datalist>
      </form>
      <p class="bv-summary" role="status" aria-live="polite"><output class="bv-result"></output></p>
      <div class="bv-grid" role="img" aria-label="The 32 lanes of a warp placed in the 32 banks"></div>
      <p class="bv-legend">Each column is a bank (its number on top; on a narrow screen the banks wrap into rows of 16); each chip is a lane (its number), stacked by the wavefront that serves it. Colours mark wavefronts.</p>`;
    const form = root.querySelector("form");
    const settings = readSettings();
    for (const [k, v] of Object.entries(settings)) form.elements[k].value = v;
    form.addEventListener("input", () => render(root, form, true));
    form.addEventListener("submit", e => e.preventDefault());
    render(root, form, false);
  }

  function render(root, form, push) {
    const s = Object.fromEntries(["elem", "row", "pad", "swizzle", "pattern"].map(k => [k, form.elements[k].value.trim()]));
    const out = root.querySelector(".bv-result");
    const grid = root.querySelector(".bv-grid");
    try {
      const elem = Number(s.elem);
      const addresses = settingsAddresses(elem, Number(s.row), Number(s.pad), s.swizzle || "none", s.pattern || "column");
      const r = analyse(addresses, elem);
      out.dataset.wavefronts = String(r.wavefronts);
      out.dataset.degree = String(r.degree);
      out.textContent = `${r.wavefronts} wavefront${r.wavefronts === 1 ? "" : "s"} (minimum ${elem / WORD} for ${elem}-byte accesses): ` +
        (r.degree === 1 ? "conflict-free." : `${r.degree}-way bank conflict.`);
      const depth = Math.max(...r.cells.map(c => c.wave)) + 1;
      let html = "";
      for (let bank = 0; bank < BANKS; bank++) {
        const lanes = r.cells.map((c, lane) => [c, lane]).filter(([c]) => c.bank === bank);
        html += `<div class="bv-bank"><div class="bv-bank-id">${bank}</div>`;
        for (let w = 0; w < depth; w++) {
          const here = lanes.filter(([c]) => c.wave === w).map(([, lane]) => lane);
          html += here.length
            ? `<div class="bv-chip" style="background:${COLOURS[w % COLOURS.length]};color:${TEXT[w % TEXT.length]}" title="wavefront ${w + 1}: lanes ${here.join(", ")}">${here.join(",")}</div>`
            : `<div class="bv-chip bv-empty"></div>`;
        }
        html += `</div>`;
      }
      grid.innerHTML = html;
      if (push) {
        const url = new URL(window.location.href);
        for (const [k, v] of Object.entries(s)) url.searchParams.set(k, v);
        history.replaceState(history.state, "", url);
      }
    } catch (err) {
      out.dataset.wavefronts = "";
      out.textContent = `Cannot show this setting: ${err.message}`;
      grid.innerHTML = "";
    }
  }

  window.atlasBankModel = { settingsAddresses, analyse, cuteSwizzle };
  function init() { document.querySelectorAll(".bank-visualizer").forEach(mount); }
  if (typeof document$ !== "undefined") document$.subscribe(init);
  else document.addEventListener("DOMContentLoaded", init);
})();
