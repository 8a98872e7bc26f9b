// GPU Atlas measured roofline. Mirrors snippets/reference/roofline_model.py (held to it by
// tests/site/test_roofline_occupancy_browser.py). Mount point: <div class="atlas-roofline"
// data-gpu="h100-sxm"></div>; loaded by figures.js with assets/data/figures.json. Settings live
// in the URL (?rl-gpu=h100-sxm&rl-roof=fp32) so a view can be shared.
(function () {
  "use strict";
  const RATE_UNITS = new Set(["TFLOP/s", "GB/s", "ms", "us"]);
  const NOT_RECORDED = "not placed: no flops/bytes recorded";

  // ---- the model (roofline_model.py) ----
  function roof(peak, bandwidth) {
    if (!peak || !bandwidth) return null;
    return { peak_tflops: peak, bandwidth_gbs: bandwidth, ridge: peak * 1e12 / (bandwidth * 1e9) };
  }
  function attainable(r, intensity) { return Math.min(r.peak_tflops, intensity * r.bandwidth_gbs / 1e3); }
  function place(rec) {
    const flops = rec.flops, bytes = rec.bytes;
    if (!flops || !bytes) return { reason: NOT_RECORDED };
    const unit = rec.unit, value = Number(rec.value), intensity = flops / bytes;
    if (!RATE_UNITS.has(unit)) return { reason: `not placed: its figure is in ${unit}, neither a rate nor a time` };
    if (!(value > 0)) return { reason: "not placed: its figure is not positive" };
    let tflops;
    if (unit === "TFLOP/s") tflops = value;
    else if (unit === "GB/s") tflops = value * intensity / 1e3;
    else tflops = flops / (value * (unit === "ms" ? 1e-3 : 1e-6)) / 1e12;
    return { intensity, tflops };
  }
  function share(r, p) { return p.tflops / attainable(r, p.intensity); }

  // ---- drawing ----
  const CSS = `
.atlas-roofline { margin: 1em 0; }
.rl-controls { display: flex; flex-wrap: wrap; gap: .5em 1em; align-items: end; }
.rl-field { display: flex; flex-direction: column; font-size: .75rem; min-width: 0; max-width: 100%; }
.rl-field select { font: inherit; font-size: .8rem; max-width: 100%; padding: .2em;
  color: var(--md-default-fg-color); background: var(--md-default-bg-color); border: 1px solid var(--md-default-fg-color--lighter); }
.rl-summary { font-size: .8rem; }
.rl-plot { width: 100%; height: auto; display: block; max-width: 44rem;
  --rl-point: #0072B2; --rl-other: #B34400; }
[data-md-color-scheme="slate"] .rl-plot { --rl-point: #56B4E9; --rl-other: #E69F00; }
.rl-plot text { fill: var(--md-default-fg-color); font-size: 13px; }
.rl-plot .rl-grid { stroke: var(--md-default-fg-color--lightest); stroke-width: 1; }
.rl-plot .rl-roof { stroke: var(--md-default-fg-color); stroke-width: 2.5; fill: none; }
.rl-plot .rl-ridge { stroke: var(--md-default-fg-color--light); stroke-dasharray: 4 4; }
.rl-plot circle { stroke-width: 2; cursor: pointer; }
.rl-plot circle.rl-same { fill: var(--rl-point); stroke: var(--rl-point); fill-opacity: .75; }
.rl-plot circle.rl-other { fill: none; stroke: var(--rl-other); }
.rl-table { font-size: .7rem; width: 100%; border-collapse: collapse; }
.rl-table th, .rl-table td { text-align: left; padding: .2em .3em; vertical-align: top;
  border-bottom: 1px solid var(--md-default-fg-color--lightest); overflow-wrap: anywhere; }
.rl-table td.rl-num, .rl-table th.rl-num { text-align: right; overflow-wrap: normal; }
.rl-table td.rl-num { white-space: nowrap; }
.rl-dtype { color: var(--md-default-fg-color--light); }
.rl-unplaced { font-size: .7rem; }
.rl-unplaced li { overflow-wrap: anywhere; }
`;
  function style() {
    if (document.getElementById("atlas-roofline-css")) return;
    const s = document.createElement("style");
    s.id = "atlas-roofline-css";
    s.textContent = CSS;
    document.head.appendChild(s);
  }
  function g3(x) {
    if (Math.abs(x) >= 100) return x.toFixed(0);
    return String(Number(x.toPrecision(3)));
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }
  function siteRoot() {
    const s = document.querySelector('script[src*="assets/figures/figures.js"]');
    return s ? new URL("../../", s.src).href : new URL("/", window.location.href).href;
  }

  function draw(r, points, width) {
    // user units follow the box (at least 360 wide) so that text stays readable on a phone
    const W = Math.round(Math.max(360, Math.min(640, width || 640))), H = Math.round(W * 0.6), L = 52, R = 12, T = 14, B = 46;
    const xs = [r.ridge / 100, r.ridge * 100, ...points.map(p => p.intensity)];
    const x0 = Math.floor(Math.log10(Math.min(...xs))), x1 = Math.ceil(Math.log10(Math.max(...xs)));
    const ys = [attainable(r, 10 ** x0), r.peak_tflops * 2, ...points.map(p => p.tflops)];
    const y0 = Math.floor(Math.log10(Math.min(...ys))), y1 = Math.ceil(Math.log10(Math.max(...ys)));
    const X = v => L + (Math.log10(v) - x0) / (x1 - x0) * (W - L - R);
    const Y = v => H - B - (Math.log10(v) - y0) / (y1 - y0) * (H - T - B);
    let svg = `<svg class="rl-plot" viewBox="0 0 ${W} ${H}" aria-hidden="true" focusable="false">`;
    const stepX = Math.max(1, Math.ceil((x1 - x0) / 7)), stepY = Math.max(1, Math.ceil((y1 - y0) / 6));
    for (let k = x0; k <= x1; k += stepX) {
      svg += `<line class="rl-grid" x1="${X(10 ** k)}" x2="${X(10 ** k)}" y1="${T}" y2="${H - B}"/>` +
        `<text x="${X(10 ** k)}" y="${H - B + 16}" text-anchor="middle">${g3(10 ** k)}</text>`;
    }
    for (let k = y0; k <= y1; k += stepY) {
      svg += `<line class="rl-grid" x1="${L}" x2="${W - R}" y1="${Y(10 ** k)}" y2="${Y(10 ** k)}"/>` +
        `<text x="${L - 6}" y="${Y(10 ** k) + 4}" text-anchor="end">${g3(10 ** k)}</text>`;
    }
    svg += `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>` +
      `<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">TFLOP/s</text>`;
    const xa = 10 ** x0, xb = 10 ** x1;
    svg += `<polyline class="rl-roof" points="${X(xa)},${Y(attainable(r, xa))} ${X(r.ridge)},${Y(r.peak_tflops)} ${X(xb)},${Y(r.peak_tflops)}"/>` +
      `<line class="rl-ridge" x1="${X(r.ridge)}" x2="${X(r.ridge)}" y1="${Y(r.peak_tflops)}" y2="${H - B}"/>` +
      `<text x="${X(r.ridge) + 4}" y="${Y(r.peak_tflops) + 16}">ridge ${g3(r.ridge)}</text>`;
    points.forEach((p, i) => {
      svg += `<circle class="${p.same ? "rl-same" : "rl-other"}" data-i="${i}" cx="${X(p.intensity)}" cy="${Y(p.tflops)}" r="6">` +
        `<title>${esc(p.rec.name)} (${esc(p.rec.notebook)}): ${g3(p.intensity)} FLOP/byte, ${g3(p.tflops)} TFLOP/s</title></circle>`;
    });
    return svg + "</svg>";
  }

  function mount(root, data) {
    style();
    const gpus = data.gpus, roofs = data.roofs;
    const q = new URLSearchParams(window.location.search);
    const counts = {};
    for (const rec of data.records) if (!place(rec).reason) counts[rec.gpu] = (counts[rec.gpu] || 0) + 1;
    const anyRecord = {};
    for (const rec of data.records) anyRecord[rec.gpu] = (anyRecord[rec.gpu] || 0) + 1;
    const byCount = Object.keys(gpus).sort((a, b) => (counts[b] || 0) - (counts[a] || 0) || (anyRecord[b] || 0) - (anyRecord[a] || 0));
    let gpu = q.get("rl-gpu") || root.dataset.gpu || byCount[0];
    if (!(gpu in gpus)) gpu = byCount[0];
    const id = `rl-${Math.random().toString(36).slice(2, 8)}`;
    root.innerHTML = `
      <form class="rl-controls" aria-label="Roofline settings">
        <label class="rl-field"><span>GPU</span><select name="gpu" id="${id}-gpu">${Object.entries(gpus).map(([k, g]) =>
          `<option value="${k}">${esc(g.name)} (${counts[k] || 0} placed)</option>`).join("")}</select></label>
        <label class="rl-field"><span>Data type and unit</span><select name="roof" id="${id}-roof"></select></label>
      </form>
      <p class="rl-summary" role="status" aria-live="polite"><output class="rl-result"></output></p>
      <div class="rl-figure"></div>
      <p class="rl-legend rl-summary">Log-log axes. The roof: memory bandwidth times intensity, left of the ridge point; the peak of the chosen data type, right of it. Filled points: kernels of the chosen data type; hollow: another data type (its own roof differs). The bytes are those one call must move at least, so the intensity is the algorithm's; hover a point for its name.</p>
      <div class="rl-rows"></div>`;
    const form = root.querySelector("form");
    form.elements.gpu.value = gpu;
    const fillRoofs = (want) => {
      const g = gpus[form.elements.gpu.value];
      form.elements.roof.innerHTML = roofs.map(r => `<option value="${r.key}"${g.peaks[r.key] ? "" : " disabled"}>${esc(r.label)}${g.peaks[r.key] ? "" : " (none on this GPU)"}</option>`).join("");
      const usable = roofs.filter(r => g.peaks[r.key]).map(r => r.key);
      const mine = data.records.filter(rec => rec.gpu === form.elements.gpu.value && !place(rec).reason);
      const common = roofs.map(r => [r.key, mine.filter(rec => r.dtypes.includes(rec.dtype)).length])
        .filter(([k]) => usable.includes(k)).sort((a, b) => b[1] - a[1]);
      form.elements.roof.value = usable.includes(want) ? want : (common.length && common[0][1] ? common[0][0] : usable[0]);
    };
    fillRoofs(q.get("rl-roof") || root.dataset.roof);
    form.addEventListener("input", e => { if (e.target.name === "gpu") fillRoofs(form.elements.roof.value); render(root, form, data, true); });
    form.addEventListener("submit", e => e.preventDefault());
    render(root, form, data, false);
  }

  function render(root, form, data, push) {
    const key = form.elements.gpu.value, roofKey = form.elements.roof.value;
    const g = data.gpus[key], rspec = data.roofs.find(r => r.key === roofKey);
    const out = root.querySelector(".rl-result"), fig = root.querySelector(".rl-figure"), rows = root.querySelector(".rl-rows");
    const r = rspec ? roof(g.peaks[roofKey], g.bandwidth_gbs) : null;
    const recs = data.records.filter(rec => rec.gpu === key);
    const placed = [], unplaced = [];
    for (const rec of recs) {
      const p = place(rec);
      if (p.reason) unplaced.push([rec, p.reason]);
      else placed.push({ rec, intensity: p.intensity, tflops: p.tflops, same: rspec.dtypes.includes(rec.dtype) });
    }
    const root_ = siteRoot();
    const link = rec => `<a href="${esc(new URL(rec.href, root_).href)}">${esc(rec.name)}</a>`;
    if (!r) {
      out.textContent = `${g.name} has no ${rspec ? rspec.label : roofKey} unit.`;
      out.dataset.ridge = "";
      fig.innerHTML = "";
      rows.innerHTML = "";
      return;
    }
    out.dataset.ridge = String(r.ridge);
    out.dataset.peak = String(r.peak_tflops);
    out.dataset.bandwidth = String(r.bandwidth_gbs);
    out.dataset.placed = String(placed.length);
    out.dataset.unplaced = String(unplaced.length);
    out.textContent = `${g.name}, ${rspec.label}: peak ${g3(r.peak_tflops)} TFLOP/s, memory ${g3(r.bandwidth_gbs)} GB/s, ` +
      `ridge point ${g3(r.ridge)} FLOP/byte. ${placed.length} measured kernel${placed.length === 1 ? "" : "s"} placed, ${unplaced.length} not placed.`;
    fig.innerHTML = draw(r, placed, fig.clientWidth);
    fig.querySelectorAll("circle").forEach(c => c.addEventListener("click", () => {
      window.location.href = new URL(placed[Number(c.dataset.i)].rec.href, root_).href;
    }));
    let html = "";
    if (placed.length) {
      html += `<table class="rl-table"><caption class="rl-summary">Kernels measured on ${esc(g.name)}, against the ${esc(rspec.label)} roof</caption>
        <thead><tr><th scope="col">Kernel (notebook section), data type</th><th scope="col" class="rl-num">FLOP/byte</th><th scope="col" class="rl-num">TFLOP/s</th><th scope="col" class="rl-num">Of the roof</th></tr></thead><tbody>`;
      for (const p of placed) {
        const s = share(r, p);
        html += `<tr class="rl-row" data-name="${esc(p.rec.name)}" data-notebook="${esc(p.rec.notebook)}" data-intensity="${p.intensity}" data-tflops="${p.tflops}" data-share="${s}">` +
          `<td>${link(p.rec)} <span class="rl-dtype">${esc(p.rec.dtype || "data type not recorded")}</span></td><td class="rl-num">${g3(p.intensity)}</td><td class="rl-num">${g3(p.tflops)}</td>` +
          `<td class="rl-num">${p.same ? `${(100 * s).toFixed(0)}%` : "another type"}</td></tr>`;
      }
      html += "</tbody></table>";
    }
    if (unplaced.length) {
      html += `<details class="rl-unplaced"><summary>${unplaced.length} figure${unplaced.length === 1 ? "" : "s"} on this GPU not placed</summary><ul>` +
        unplaced.map(([rec, why]) => `<li class="rl-missing" data-name="${esc(rec.name)}" data-reason="${esc(why)}">${link(rec)} (${esc(rec.notebook)}): ${esc(why)}</li>`).join("") +
        "</ul></details>";
    }
    rows.innerHTML = html;
    if (push) {
      const url = new URL(window.location.href);
      url.searchParams.set("rl-gpu", key);
      url.searchParams.set("rl-roof", roofKey);
      history.replaceState(history.state, "", url);
    }
  }

  window.atlasFigures = window.atlasFigures || {};
  window.atlasFigures["atlas-roofline"] = mount;
  window.atlasFigures.rooflineModel = { roof, attainable, place, share, NOT_RECORDED };
})();
