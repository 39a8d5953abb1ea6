// ktrace report: draws the launch data embedded in #ktrace-data.
// Plain JavaScript on <canvas>; no libraries, nothing from the network.
(function () {
  'use strict';

  const loadStart = performance.now();
  const D = JSON.parse(document.getElementById('ktrace-data').textContent);
  const H = D.header;

  // Region colours: distinct, readable on white; region i gets PALETTE[i].
  const PALETTE = [
    '#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948',
    '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#a0cbe8',
    '#8cd17d', '#ffbe7d', '#499894', '#f1ce63', '#79706e', '#bab0ac',
  ];
  // Waiting regions (names starting with "wait") get muted tones so the
  // work stands out.
  const WAIT_PALETTE = ['#b9c0cc', '#e6b0aa', '#d9c7a0', '#a9c6de', '#c9b6d6'];
  const regionColours = (() => {
    let work = 0, wait = 0;
    return D.regions.map((name) => (/^wait/i.test(name)
      ? WAIT_PALETTE[wait++ % WAIT_PALETTE.length]
      : PALETTE[work++ % PALETTE.length]));
  })();
  const colour = (i) => regionColours[i] || PALETTE[i % PALETTE.length];
  // The same as 32-bit RGBA pixels (little-endian: 0xAABBGGRR).
  const colourWord = D.regions.map((_, i) => {
    const c = parseInt(colour(i).slice(1), 16);
    return (0xff000000 | ((c & 0xff) << 16) | (c & 0xff00) | (c >> 16)) >>> 0;
  });
  const hidden = new Set(); // region indices switched off in the legend

  // ---------------------------------------------------------------- helpers

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'style') e.style.cssText = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  // A duration or time given in ns, with a unit that suits it.
  function fmtNs(ns) {
    const a = Math.abs(ns);
    if (a < 1) return (ns === 0 ? '0' : ns.toFixed(2)) + ' ns';
    if (a < 1e3) return (a < 10 ? ns.toFixed(1) : ns.toFixed(0)) + ' ns';
    if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 3 : a < 1e5 ? 2 : 1) + ' µs';
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 3 : 2) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }
  const fmtUs = (us) => fmtNs(us * 1e3);

  // An axis tick in ns: as short as the step allows ("5 µs", "2.5 µs").
  function fmtTick(ns, step) {
    const [div, unit] = step >= 1e9 ? [1e9, 's'] : step >= 1e6 ? [1e6, 'ms'] : step >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
    const digits = Math.max(0, -Math.floor(Math.log10(step / div) + 1e-9));
    return (ns / div).toFixed(digits) + ' ' + unit;
  }
  const fmtInt = (n) => Number(n).toLocaleString('en-US');

  function fmtNumber(v) {
    if (typeof v !== 'number') return String(v);
    if (Number.isInteger(v)) return fmtInt(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e9)) return v.toExponential(3);
    return v.toFixed(a < 10 ? 3 : a < 1000 ? 2 : 1);
  }

  // A nice step for about `target` ticks over `range`.
  function niceStep(range, target) {
    const raw = range / Math.max(1, target);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  const prettyKey = (k) => String(k).replace(/_/g, ' ');

  // A canvas sized to its CSS box at the device's pixel ratio.
  function fitCanvas(canvas, cssW, cssH) {
    const dpr = window.devicePixelRatio || 1;
    canvas.style.width = cssW + 'px';
    canvas.style.height = cssH + 'px';
    canvas.width = Math.max(1, Math.round(cssW * dpr));
    canvas.height = Math.max(1, Math.round(cssH * dpr));
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  const tooltip = document.getElementById('tooltip');
  function showTip(ev, html) {
    tooltip.innerHTML = html;
    tooltip.hidden = false;
    const pad = 14;
    let x = ev.clientX + pad;
    let y = ev.clientY + pad;
    const r = tooltip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 4) x = ev.clientX - r.width - pad;
    if (y + r.height > window.innerHeight - 4) y = ev.clientY - r.height - pad;
    tooltip.style.left = Math.max(2, x) + 'px';
    tooltip.style.top = Math.max(2, y) + 'px';
  }
  const hideTip = () => { tooltip.hidden = true; };
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({
    '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
  })[c]);

  // ---------------------------------------------------------------- header

  function renderHeader() {
    const h = document.getElementById('header');
    h.append(el('h1', {}, H.kernel ? H.kernel : H.title));
    h.append(el('div', { class: 'sub' },
      `launch ${H.launch} · ${H.device}` + (H.sm_count ? ` · ${H.sm_count} SMs` : '') + ` · ${D.tool}`));
    const facts = el('div', { class: 'facts' });
    const fact = (k, v, warn) => facts.append(
      el('div', { class: 'fact' + (warn ? ' warn' : '') }, el('span', { class: 'k' }, k), el('span', { class: 'v' }, v)));
    const dims = (d) => d.filter((x, i) => i === 0 || x !== 1 || d.slice(i).some((y) => y !== 1)).join(' × ');
    fact('grid (blocks)', `${dims(H.grid)} = ${fmtInt(H.blocks)}`);
    fact('block (threads)', `${dims(H.block)} = ${H.warps_per_block} warps`);
    fact('traced warps', `${fmtInt(H.warps)} (${fmtInt(H.blocks_traced)} blocks × ${H.warps_traced_per_block})`);
    fact('kernel time (first to last event)', H.kernel_time_us === null ? 'no events' : fmtUs(H.kernel_time_us));
    fact('events', fmtInt(H.events));
    fact('spans · marks', `${fmtInt(H.spans)} · ${fmtInt(H.marks)}`);
    fact('dropped events', fmtInt(H.dropped), H.dropped > 0);
    const c = H.clock;
    fact('SM clock (measured)', c.slowest_mhz ? `${(c.slowest_mhz / 1e3).toFixed(3)}–${(c.fastest_mhz / 1e3).toFixed(3)} GHz`
      : (c.time_model === 'two_point' ? 'one rate per warp' : 'not measured'));
    const nd = H.diagnostics.count || 0;
    fact('diagnostics', nd ? `${fmtInt(nd)} (see below)` : 'none', nd > 0);
    h.append(facts);
    h.append(el('div', { class: 'clock' }, `${c.text}; time model: ${c.time_model}.`));
    h.append(el('div', { class: 'clock' }, H.ring_fill));
  }

  // ---------------------------------------------------------------- lanes

  // Each lane's spans in levels: a span goes to the first level whose last
  // span has ended, so spans of one level never overlap and their ends are
  // sorted like their starts (both searchable).
  let maxLevel = 0;
  let endNs = 0;
  const lanes = D.lanes.block.map((block, i) => {
    const flat = D.lanes.spans[i];
    const n = flat.length / 3;
    const level = new Uint8Array(n);
    const levelEnd = [];
    for (let k = 0; k < n; k++) {
      const s = flat[3 * k + 1];
      const e = s + flat[3 * k + 2];
      let l = 0;
      while (l < levelEnd.length && levelEnd[l] > s) l++;
      if (l > 250) l = 250;
      levelEnd[l] = e;
      level[k] = l;
      if (e > endNs) endNs = e;
    }
    const levels = levelEnd.map(() => ({ n: 0 }));
    for (let k = 0; k < n; k++) levels[level[k]].n++;
    for (const L of levels) {
      L.s = new Float64Array(L.n); L.e = new Float64Array(L.n); L.r = new Uint16Array(L.n);
      L.i = new Uint32Array(L.n); L.n = 0;
    }
    for (let k = 0; k < n; k++) {
      const L = levels[level[k]];
      const s = flat[3 * k + 1];
      L.s[L.n] = s; L.e[L.n] = s + flat[3 * k + 2]; L.r[L.n] = flat[3 * k]; L.i[L.n] = k; L.n++;
    }
    maxLevel = Math.max(maxLevel, levels.length - 1);
    const m = D.lanes.marks[i];
    for (let k = 1; k < m.length; k += 2) if (m[k] > endNs) endNs = m[k];
    // Values recorded with events, by span or mark index.
    let spanValues = null, markValues = null;
    const sv = (D.lanes.span_values || [])[i] || [];
    if (sv.length) {
      spanValues = new Map();
      for (let q = 0; q < sv.length; q += 3) spanValues.set(sv[q], [sv[q + 1], sv[q + 2]]);
    }
    const mv = (D.lanes.mark_values || [])[i] || [];
    if (mv.length) {
      markValues = new Map();
      for (let q = 0; q < mv.length; q += 2) markValues.set(mv[q], mv[q + 1]);
    }
    return {
      block, warp: D.lanes.warp[i], sm: D.lanes.sm[i], dropped: D.lanes.dropped[i], levels, marks: m,
      spanValues, markValues,
    };
  });
  if (endNs <= 0) endNs = 1000;

  // First index of a sorted array whose value is >= x.
  function lowerBound(a, n, x) {
    let lo = 0, hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // First even index of a flat [region, t, ...] array whose t is >= x.
  function lowerBound2(a, x) {
    let lo = 0, hi = a.length >> 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[2 * mid + 1] < x) lo = mid + 1; else hi = mid;
    }
    return 2 * lo;
  }

  // ---------------------------------------------------------------- timeline

  const AXIS = 26;    // px of the time axis above the lanes
  const GUTTER = 92;  // px of group and lane labels left of the lanes

  const tl = {
    canvas: document.getElementById('timeline'),
    group: 'sm',
    laneHeight: 'auto',
    order: [],      // lane indices in display order
    groupStart: [], // display positions where a group starts
    t0: 0, t1: 0,   // visible time range, ns
    scroll: 0,      // px of lanes scrolled out above
    h: 1,           // px per lane (may be below 1: then lanes are sampled)
    width: 0, height: 0,
    pending: false,
  };

  function resetView() {
    const pad = endNs * 0.01;
    tl.t0 = -pad;
    tl.t1 = endNs + pad;
    tl.scroll = 0;
  }

  function layoutLanes() {
    const key = tl.group === 'sm'
      ? (i) => [lanes[i].sm, lanes[i].block, lanes[i].warp]
      : (i) => [lanes[i].block, lanes[i].warp, 0];
    const keys = lanes.map((_, i) => key(i));
    tl.order = lanes.map((_, i) => i).sort((a, b) => {
      const x = keys[a], y = keys[b];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
    tl.groupStart = [];
    let prev = null;
    tl.order.forEach((li, pos) => {
      const g = tl.group === 'sm' ? lanes[li].sm : lanes[li].block;
      if (g !== prev) tl.groupStart.push(pos);
      prev = g;
    });
  }

  function groupLabel(li) {
    return tl.group === 'sm' ? `SM ${lanes[li].sm}` : `block ${lanes[li].block}`;
  }

  function sizeTimeline() {
    const wrap = document.getElementById('timeline-wrap');
    tl.width = Math.max(320, wrap.clientWidth);
    const n = Math.max(1, lanes.length);
    const maxLanesPx = Math.max(360, Math.min(760, Math.round(window.innerHeight * 0.62) - AXIS));
    if (tl.laneHeight === 'auto') {
      // Every lane in view: whole pixels per lane where they fit,
      // otherwise one sampled lane per pixel row.
      const fit = maxLanesPx / n;
      tl.h = fit >= 1 ? Math.min(18, Math.floor(fit)) : fit;
    } else {
      tl.h = Number(tl.laneHeight);
    }
    const content = n * tl.h;
    tl.height = AXIS + Math.max(60, Math.min(maxLanesPx, Math.ceil(content)));
    fitCanvas(tl.canvas, tl.width, tl.height);
    clampScroll();
  }

  function clampScroll() {
    const content = lanes.length * tl.h;
    const view = tl.height - AXIS;
    tl.scroll = Math.max(0, Math.min(tl.scroll, content - view));
  }

  function requestDraw() {
    if (tl.pending) return;
    tl.pending = true;
    requestAnimationFrame(() => { tl.pending = false; drawTimeline(); });
  }

  // Display position of the lane at canvas y (CSS px), or -1.
  function laneAtY(y) {
    if (y < AXIS) return -1;
    const pos = Math.floor((y - AXIS + tl.scroll) / tl.h);
    return pos >= 0 && pos < tl.order.length ? pos : -1;
  }

  function drawTimeline() {
    const ctx = tl.canvas.getContext('2d');
    const W = tl.width, Ht = tl.height;
    const x0 = GUTTER, plotW = W - GUTTER - 8;
    const k = plotW / (tl.t1 - tl.t0); // px per ns
    const tx = (t) => x0 + (t - tl.t0) * k;
    ctx.clearRect(0, 0, W, Ht);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, W, Ht);

    // Lanes in view, each with its pixel rows: whole rows where a lane
    // has one or more, else the pixel row it falls in (several lanes then
    // share a row, drawn one over the other).
    const view = Ht - AXIS;
    const rows = [];
    const first = Math.max(0, Math.floor(tl.scroll / tl.h));
    const last = Math.min(tl.order.length - 1, Math.floor((tl.scroll + view) / tl.h));
    for (let p = first; p <= last; p++) {
      let y0 = AXIS + Math.round(p * tl.h - tl.scroll);
      let y1 = AXIS + Math.round((p + 1) * tl.h - tl.scroll);
      if (tl.h < 1) { y0 = AXIS + Math.floor(p * tl.h - tl.scroll); y1 = y0 + 1; }
      if (y0 >= Ht) break;
      rows.push([p, y0, y1]);
    }

    // Alternate group backgrounds.
    let gi = 0;
    const groupOf = new Int32Array(tl.order.length);
    for (let p = 0; p < tl.order.length; p++) {
      if (gi + 1 < tl.groupStart.length && tl.groupStart[gi + 1] === p) gi++;
      groupOf[p] = gi;
    }
    for (const [p, y0, y1] of rows) {
      if (groupOf[p] % 2 === 1) {
        ctx.fillStyle = '#f3f5f9';
        ctx.fillRect(0, y0, W, y1 - y0);
      }
    }

    // Vertical grid and axis labels.
    const step = niceStep(tl.t1 - tl.t0, Math.max(2, Math.floor(plotW / 110)));
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    for (let t = Math.ceil(tl.t0 / step) * step; t <= tl.t1; t += step) {
      const x = Math.round(tx(t)) + 0.5;
      ctx.fillStyle = '#e6e9ef';
      ctx.fillRect(x - 0.5, AXIS, 1, view);
      ctx.fillStyle = '#5b6475';
      ctx.fillText(fmtTick(t, step), x, AXIS / 2);
    }

    // Spans are rasterised into one pixel buffer (device pixels): each
    // lane level's spans fill one pixel row, which is then copied down
    // the level's band, so the cost follows the pixels, not the spans.
    // Of several spans in one pixel the longest shows.
    const dpr = window.devicePixelRatio || 1;
    const BW = Math.max(1, Math.round(plotW * dpr)), BH = Math.max(1, Math.round(view * dpr));
    if (!tl.layer || tl.layer.width !== BW || tl.layer.height !== BH) {
      tl.layer = document.createElement('canvas');
      tl.layer.width = BW;
      tl.layer.height = BH;
      tl.image = tl.layer.getContext('2d').createImageData(BW, BH);
      tl.pixels = new Uint32Array(tl.image.data.buffer);
    }
    const px = tl.pixels;
    px.fill(0);
    const k2 = k * dpr; // device px per ns
    let painted = 0;
    const inset = maxLevel > 0 ? 0.45 / maxLevel : 0;
    for (const [p, y0, y1] of rows) {
      const lane = lanes[tl.order[p]];
      const lh = y1 - y0;
      const gap = lh >= 6 ? 1 : 0;
      for (let l = 0; l < lane.levels.length; l++) {
        const L = lane.levels[l];
        const top = y0 + (lh >= 6 ? Math.round(l * inset * lh) : 0);
        const rowA = Math.max(0, Math.round((top - AXIS) * dpr));
        const rowB = Math.min(BH, Math.round((y1 - gap - AXIS) * dpr));
        if (rowB <= rowA) continue;
        const base = rowA * BW;
        let minX = BW, maxX = -1, lastPx = -1, lastLen = -1;
        for (let i = lowerBound(L.e, L.n, tl.t0); i < L.n; i++) {
          const s = L.s[i];
          if (s > tl.t1) break;
          const r = L.r[i];
          if (hidden.has(r)) continue;
          let a = Math.floor((s - tl.t0) * k2), b = Math.ceil((L.e[i] - tl.t0) * k2);
          if (a < 0) a = 0;
          if (b > BW) b = BW;
          if (b <= a) b = a + 1;
          if (a >= BW) continue;
          const len = L.e[i] - s;
          if (b - a === 1) {
            // A span within one pixel: keep the pixel's longest.
            if (a === lastPx && len <= lastLen) continue;
            lastPx = a; lastLen = len;
          } else {
            lastPx = b - 1; lastLen = len;
          }
          const word = colourWord[r];
          if (b - a > 8) px.fill(word, base + a, base + b);
          else for (let x = base + a, end = base + b; x < end; x++) px[x] = word;
          painted++;
          if (a < minX) minX = a;
          if (b > maxX) maxX = b;
        }
        for (let y = rowA + 1; y < rowB && maxX > minX; y++) {
          px.copyWithin(y * BW + minX, base + minX, base + maxX);
        }
      }
    }
    // Marks: a dark tick each, over the lane's whole band.
    const markWord = 0xff30231d >>> 0; // #1d2330
    for (const [p, y0, y1] of rows) {
      const m = lanes[tl.order[p]].marks;
      if (!m.length) continue;
      const rowA = Math.max(0, Math.round((y0 - AXIS) * dpr));
      const rowB = Math.min(BH, Math.max(rowA + 1, Math.round((y1 - AXIS) * dpr)));
      for (let q = lowerBound2(m, tl.t0); q < m.length; q += 2) {
        const t = m[q + 1];
        if (t > tl.t1) break;
        if (hidden.has(m[q])) continue;
        const x = Math.floor((t - tl.t0) * k2);
        if (x < 0 || x >= BW) continue;
        for (let y = rowA; y < rowB; y++) px[y * BW + x] = markWord;
      }
    }
    tl.layer.getContext('2d').putImageData(tl.image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(tl.layer, x0, AXIS, plotW, view);
    const drawn = rows.map((row) => row[0]);

    // Gutter: group separators and labels, lane labels when tall enough.
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, AXIS, GUTTER - 4, view);
    ctx.textAlign = 'left';
    const groupPx = tl.h * (lanes.length / Math.max(1, tl.groupStart.length));
    let lastLabelY = -1e9;
    for (let g = 0; g < tl.groupStart.length; g++) {
      const p = tl.groupStart[g];
      const y = AXIS + p * tl.h - tl.scroll;
      const next = g + 1 < tl.groupStart.length ? tl.groupStart[g + 1] : tl.order.length;
      const yEnd = AXIS + next * tl.h - tl.scroll;
      if (yEnd < AXIS || y > Ht) continue;
      if (groupOf[p] % 2 === 1) {
        ctx.fillStyle = '#f3f5f9';
        ctx.fillRect(0, Math.max(AXIS, y), GUTTER - 4, Math.min(Ht, yEnd) - Math.max(AXIS, y));
      }
      if (groupPx >= 3 && y >= AXIS) {
        ctx.fillStyle = '#c9ced8';
        ctx.fillRect(0, Math.round(y), W, 1);
      }
      const ly = Math.max(AXIS + 9, y + Math.min(8, (yEnd - y) / 2));
      if (ly - lastLabelY >= 13 && ly < Ht - 3 && ly < yEnd + 2) {
        ctx.fillStyle = '#1d2330';
        ctx.font = '11px system-ui, sans-serif';
        ctx.fillText(groupLabel(tl.order[p]), 6, ly);
        lastLabelY = ly;
      }
    }
    if (tl.h >= 12) {
      ctx.fillStyle = '#5b6475';
      ctx.textAlign = 'right';
      for (const [p, y0, y1] of rows) {
        const lane = lanes[tl.order[p]];
        const label = tl.group === 'sm' ? `b${lane.block} w${lane.warp}` : `w${lane.warp}`;
        ctx.fillText(label, GUTTER - 8, (y0 + y1) / 2);
      }
    }
    ctx.fillStyle = '#c9ced8';
    ctx.fillRect(GUTTER - 4, AXIS, 1, view);
    ctx.fillRect(0, AXIS - 1, W, 1);

    const sampled = tl.h < 1;
    document.getElementById('timeline-status').textContent =
      `${fmtInt(drawn.length)} of ${fmtInt(lanes.length)} lanes drawn` +
      (sampled ? ` (${(1 / tl.h).toFixed(1)} lanes per pixel row; pick a lane height to see each apart)` : '') +
      ` · ${fmtNs(tl.t0)} to ${fmtNs(tl.t1)} · ${fmtInt(painted)} spans painted`;
    const r = tl.canvas.getBoundingClientRect();
    document.body.setAttribute('data-lanes-drawn', String(drawn.length));
    document.body.setAttribute('data-spans-painted', String(painted));
    document.body.setAttribute('data-lane-px', tl.h.toFixed(3));
    document.body.setAttribute('data-timeline-rect', [
      Math.round(r.left + window.scrollX + GUTTER), Math.round(r.top + window.scrollY + AXIS),
      Math.round(plotW), Math.round(Math.min(view, lanes.length * tl.h)),
    ].join(','));
  }

  // The span (or mark) under canvas point (x, y), for the tooltip.
  function hitTimeline(x, y) {
    const pos = laneAtY(y);
    if (pos < 0 || x < GUTTER) return null;
    const lane = lanes[tl.order[pos]];
    const plotW = tl.width - GUTTER - 8;
    const nsPerPx = (tl.t1 - tl.t0) / plotW;
    const t = tl.t0 + (x - GUTTER) * nsPerPx;
    const tol = 2 * nsPerPx;
    let best = null;
    for (let l = lane.levels.length - 1; l >= 0 && !best; l--) {
      const L = lane.levels[l];
      let i = lowerBound(L.e, L.n, t - tol);
      for (; i < L.n && L.s[i] <= t + tol; i++) {
        if (hidden.has(L.r[i])) continue;
        const d = L.s[i] > t ? L.s[i] - t : L.e[i] < t ? t - L.e[i] : 0;
        if (!best || d < best.d) best = { d, s: L.s[i], e: L.e[i], r: L.r[i], level: l, index: L.i[i] };
      }
    }
    let mark = null;
    for (let q = 0; q < lane.marks.length; q += 2) {
      const d = Math.abs(lane.marks[q + 1] - t);
      if (d <= tol && !hidden.has(lane.marks[q]) && (!mark || d < mark.d)) mark = { d, t: lane.marks[q + 1], r: lane.marks[q], index: q / 2 };
    }
    return { lane, span: best, mark, t };
  }

  function timelineTip(ev) {
    const rect = tl.canvas.getBoundingClientRect();
    const hit = hitTimeline(ev.clientX - rect.left, ev.clientY - rect.top);
    if (!hit || (!hit.span && !hit.mark)) { hideTip(); return; }
    const L = hit.lane;
    const where = `block ${L.block} · warp ${L.warp} · SM ${L.sm}`;
    let html;
    if (hit.mark && (!hit.span || hit.mark.d <= hit.span.d)) {
      html = `<b>${esc(D.regions[hit.mark.r])}</b> (mark)<br>${where}<br>at ${fmtNs(hit.mark.t)}`;
      const v = L.markValues && L.markValues.get(hit.mark.index);
      if (v !== undefined && v !== null) html += `<br>value ${v}`;
    } else {
      const s = hit.span;
      html = `<b><span class="swatch" style="background:${colour(s.r)}"></span> ${esc(D.regions[s.r])}</b><br>${where}` +
        `<br>start ${fmtNs(s.s)} · duration <b>${fmtNs(s.e - s.s)}</b>` +
        (s.level > 0 ? `<br>nested, level ${s.level}` : '');
      const v = L.spanValues && L.spanValues.get(s.index);
      if (v) {
        html += '<br>' + [v[0] >= 0 ? `begin value ${v[0]}` : '', v[1] >= 0 ? `end value ${v[1]}` : '']
          .filter(Boolean).join(' · ');
      }
    }
    if (L.dropped > 0) html += `<br>this warp dropped ${fmtInt(L.dropped)} events`;
    showTip(ev, html);
  }

  function zoomAt(x, factor) {
    const plotW = tl.width - GUTTER - 8;
    const f = Math.min(1, Math.max(0, (x - GUTTER) / plotW));
    const t = tl.t0 + f * (tl.t1 - tl.t0);
    let range = (tl.t1 - tl.t0) * factor;
    range = Math.max(20, Math.min(range, endNs * 4 + 1000));
    tl.t0 = t - f * range;
    tl.t1 = tl.t0 + range;
  }

  function setupTimeline() {
    const c = tl.canvas;
    c.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const rect = c.getBoundingClientRect();
      if (ev.shiftKey) {
        tl.scroll += ev.deltaY || ev.deltaX;
        clampScroll();
      } else {
        zoomAt(ev.clientX - rect.left, Math.exp(ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015)));
      }
      requestDraw();
      timelineTip(ev);
    }, { passive: false });
    let drag = null;
    c.addEventListener('pointerdown', (ev) => {
      drag = { x: ev.clientX, y: ev.clientY, t0: tl.t0, t1: tl.t1, scroll: tl.scroll };
      c.setPointerCapture(ev.pointerId);
      c.classList.add('dragging');
      hideTip();
    });
    c.addEventListener('pointermove', (ev) => {
      if (!drag) { timelineTip(ev); return; }
      const plotW = tl.width - GUTTER - 8;
      const dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / plotW;
      tl.t0 = drag.t0 - dt;
      tl.t1 = drag.t1 - dt;
      tl.scroll = drag.scroll - (ev.clientY - drag.y);
      clampScroll();
      requestDraw();
    });
    const end = () => { drag = null; c.classList.remove('dragging'); };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => { if (!drag) hideTip(); });
    c.addEventListener('dblclick', () => { resetView(); requestDraw(); });
    document.getElementById('reset-view').addEventListener('click', () => { resetView(); requestDraw(); });
    for (const r of document.querySelectorAll('input[name=group]')) {
      r.addEventListener('change', () => { tl.group = r.value; layoutLanes(); clampScroll(); requestDraw(); });
    }
    document.getElementById('lane-height').addEventListener('change', (ev) => {
      tl.laneHeight = ev.target.value;
      sizeTimeline();
      requestDraw();
    });
    window.addEventListener('resize', () => { sizeTimeline(); requestDraw(); drawCharts(); });
  }

  function renderLegend() {
    const lg = document.getElementById('legend');
    lg.replaceChildren();
    D.regions.forEach((name, i) => {
      const item = el('span', { class: 'item' + (hidden.has(i) ? ' off' : ''), title: 'click to hide or show' },
        el('span', { class: 'swatch', style: `background:${colour(i)}` }), name);
      item.addEventListener('click', () => {
        if (hidden.has(i)) hidden.delete(i); else hidden.add(i);
        renderLegend();
        requestDraw();
      });
      lg.append(item);
    });
    if (H.marks > 0) lg.append(el('span', { class: 'item' }, el('span', { class: 'swatch', style: 'background:#1d2330;width:2px' }), 'mark'));
  }

  // ---------------------------------------------------------------- regions

  const charts = []; // functions that redraw a chart at its current width

  function renderRegionTable() {
    const t = el('table');
    t.append(el('tr', {}, ...['region', 'count', 'total', 'mean', 'p50', 'p90', 'p99', 'max', 'cv']
      .map((h) => el('th', {}, h))));
    for (const r of D.stats) {
      const s = r.stats;
      t.append(el('tr', {},
        el('td', {}, el('span', { class: 'swatch', style: `background:${colour(r.region)}` }), ' ', D.regions[r.region]),
        el('td', {}, fmtInt(s.count)),
        el('td', {}, fmtUs(s.mean_dur * s.count)),
        el('td', {}, fmtUs(s.mean_dur)),
        el('td', {}, fmtUs(s.percentiles.p50)),
        el('td', {}, fmtUs(s.percentiles.p90)),
        el('td', {}, fmtUs(s.percentiles.p99)),
        el('td', {}, fmtUs(s.max_dur)),
        el('td', {}, s.cv_dur === null ? '–' : s.cv_dur.toFixed(2))));
    }
    const box = document.getElementById('region-table');
    box.append(D.stats.length ? t : el('p', { class: 'note' }, 'No complete region in this launch.'));
  }

  function drawHistogram(canvas, r) {
    const s = r.stats, hst = s.hist;
    const W = canvas.parentElement.clientWidth - 2, Hh = 130;
    const ctx = fitCanvas(canvas, W, Hh);
    const L = 8, R = 8, T = 8, B = 22;
    const pw = W - L - R, ph = Hh - T - B;
    const maxP = Math.max(...hst.prob, 1e-12);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, W, Hh);
    ctx.fillStyle = colour(r.region);
    const bw = pw / hst.bins;
    hst.prob.forEach((p, i) => {
      if (p <= 0) return;
      const h = Math.max(1, (p / maxP) * ph);
      ctx.fillRect(L + i * bw, T + ph - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
    });
    ctx.fillStyle = '#c9ced8';
    ctx.fillRect(L, T + ph, pw, 1);
    const span = hst.max - hst.min;
    const xOf = (us) => L + (span > 0 ? (us - hst.min) / span : 0) * pw;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    for (const [name, v, c] of [['p50', s.percentiles.p50, '#1d2330'], ['p90', s.percentiles.p90, '#7a4b00'], ['p99', s.percentiles.p99, '#b3261e']]) {
      const x = Math.round(xOf(v)) + 0.5;
      ctx.fillStyle = c;
      ctx.fillRect(x - 0.5, T, 1, ph);
      ctx.textAlign = x > W - 40 ? 'right' : 'left';
      ctx.fillText(name, x + (x > W - 40 ? -3 : 3), T + (name === 'p50' ? 0 : name === 'p90' ? 12 : 24));
    }
    ctx.fillStyle = '#5b6475';
    ctx.textAlign = 'left';
    ctx.fillText(fmtUs(hst.min), L, T + ph + 5);
    ctx.textAlign = 'right';
    ctx.fillText(fmtUs(hst.max), L + pw, T + ph + 5);
    ctx.textAlign = 'center';
    ctx.fillText('duration', L + pw / 2, T + ph + 5);
  }

  // Viridis-like scale from 0 to 1.
  const SCALE = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function scaleColour(f) {
    const x = Math.min(1, Math.max(0, f)) * (SCALE.length - 1);
    const i = Math.min(SCALE.length - 2, Math.floor(x));
    const u = x - i;
    const c = SCALE[i].map((a, j) => Math.round(a + (SCALE[i + 1][j] - a) * u));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  let heatBy = 'block';
  function drawHeatmap(canvas, r) {
    const hm = heatBy === 'sm' ? r.by_sm : r.by_block;
    const rows = hm.rows.length, cols = hm.cols.length;
    const W = canvas.parentElement.clientWidth - 2;
    const cellH = rows ? Math.max(2, Math.min(16, Math.floor(260 / rows))) : 0;
    const L = 64, T = 16, B = 26, R = 8;
    const Hh = T + rows * cellH + B;
    const ctx = fitCanvas(canvas, W, Hh);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, W, Hh);
    const cw = (W - L - R) / Math.max(1, cols);
    let lo = Infinity, hi = -Infinity;
    for (const v of hm.mean_us) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const v = hm.mean_us[i * cols + j];
        ctx.fillStyle = v === null ? '#eef0f4' : scaleColour(hi > lo ? (v - lo) / (hi - lo) : 0.5);
        ctx.fillRect(L + j * cw, T + i * cellH, Math.ceil(cw), cellH);
      }
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#5b6475';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    const colEvery = Math.ceil(24 / Math.max(1, cw));
    hm.cols.forEach((c, j) => { if (j % colEvery === 0) ctx.fillText(`w${c}`, L + (j + 0.5) * cw, T - 8); });
    ctx.textAlign = 'right';
    const rowEvery = Math.ceil(13 / Math.max(1, cellH));
    const unit = heatBy === 'sm' ? 'SM' : 'block';
    hm.rows.forEach((v, i) => {
      if (i % rowEvery === 0) ctx.fillText(`${unit} ${v}`, L - 4, T + (i + 0.5) * cellH);
    });
    // Colour scale.
    const y = T + rows * cellH + 10;
    const sw = Math.min(160, W - L - R - 140);
    for (let x = 0; x < sw; x++) {
      ctx.fillStyle = scaleColour(x / sw);
      ctx.fillRect(L + 60 + x, y, 1, 10);
    }
    ctx.fillStyle = '#5b6475';
    ctx.textAlign = 'right';
    ctx.fillText(isFinite(lo) ? fmtUs(lo) : '–', L + 56, y + 5);
    ctx.textAlign = 'left';
    ctx.fillText(isFinite(hi) ? fmtUs(hi) + ' mean' : '', L + 64 + sw, y + 5);
    canvas.onmousemove = (ev) => {
      const b = canvas.getBoundingClientRect();
      const j = Math.floor((ev.clientX - b.left - L) / cw), i = Math.floor((ev.clientY - b.top - T) / cellH);
      if (i < 0 || j < 0 || i >= rows || j >= cols) { hideTip(); return; }
      const v = hm.mean_us[i * cols + j];
      showTip(ev, `<b>${esc(D.regions[r.region])}</b><br>${unit} ${hm.rows[i]} · warp ${hm.cols[j]}<br>mean ${v === null ? 'no span' : fmtUs(v)}`);
    };
    canvas.onmouseleave = hideTip;
  }

  function renderRegionCards() {
    const box = document.getElementById('region-cards');
    for (const r of D.stats) {
      const s = r.stats;
      const hist = el('canvas', { class: 'hist' });
      const heat = el('canvas', { class: 'heat' });
      box.append(el('div', { class: 'card' },
        el('h3', {}, el('span', { class: 'swatch', style: `background:${colour(r.region)}` }), D.regions[r.region]),
        el('div', { class: 'pct' },
          `${fmtInt(s.count)} spans · mean ${fmtUs(s.mean_dur)} · p50 ${fmtUs(s.percentiles.p50)} · ` +
          `p90 ${fmtUs(s.percentiles.p90)} · p99 ${fmtUs(s.percentiles.p99)} · max ${fmtUs(s.max_dur)}`),
        ...stallLines(D.regions[r.region]),
        hist, heat));
      charts.push(() => { drawHistogram(hist, r); drawHeatmap(heat, r); });
    }
    if (D.stalls) {
      const st = D.stalls;
      const others = [st.outside, st.markers, st.unplaced].filter((g) => g.samples > 0);
      box.append(el('div', { class: 'card' },
        el('h3', {}, 'PC samples'),
        el('div', { class: 'pct' },
          `${fmtInt(st.samples)} samples of ${st.kernel} (${st.traced ? 'traced' : 'untraced'} build), ` +
          `one every 2^${st.period_log2} cycles per SM`),
        ...others.flatMap((g) => stallLines(g.name, g))));
    }
    for (const inp of document.querySelectorAll('input[name=heat]')) {
      inp.addEventListener('change', () => { heatBy = inp.value; drawCharts(); });
    }
  }

  // A region's stall reasons and hottest instructions (ktrace stalls).
  function stallLines(name, group) {
    const g = group || (D.stalls && D.stalls.regions.find((x) => x.name === name));
    if (!g) return [];
    const reasons = g.reasons.map(([n, , share]) => `${n} ${share.toFixed(1)}%`).join(' · ');
    const hot = g.hottest.slice(0, 3).map((h) =>
      el('div', { class: 'note' }, `+0x${h.offset.toString(16)} ${h.opcode} ${h.source} · ${fmtInt(h.samples)} · ${h.reason}`));
    return [el('div', { class: 'pct stalls' },
      `${group ? name + ': ' : ''}${fmtInt(g.samples)} PC samples (${g.share.toFixed(1)}% of the kernel's) · ${reasons}`), ...hot];
  }

  function drawCharts() { for (const f of charts) f(); }

  // ---------------------------------------------------------------- analysis

  const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  // A series worth a chart: more than four numbers (a grid's or a block's
  // three dimensions are shown as text).
  const isNumArray = (v) => Array.isArray(v) && v.length > 4 && v.every((x) => typeof x === 'number');

  // A series: an array of numbers, or an object whose arrays of numbers
  // share one length (an x axis named t, t_us, t_ns, time or time_us when
  // present).
  function seriesOf(v) {
    if (isNumArray(v)) return { x: null, xName: '', lines: [['value', v]] };
    if (!isPlainObject(v)) return null;
    const arrays = Object.entries(v).filter(([, a]) => isNumArray(a));
    const nested = Object.entries(v).filter(([, a]) => isPlainObject(a) && Object.values(a).every(isNumArray) && Object.keys(a).length);
    let lines = arrays;
    for (const [, obj] of nested) lines = lines.concat(Object.entries(obj));
    if (!lines.length) return null;
    const len = lines[0][1].length;
    if (!lines.every(([, a]) => a.length === len)) return null;
    const others = Object.entries(v).filter(([k, a]) => !isNumArray(a) && !nested.some(([n]) => n === k));
    if (others.some(([, a]) => typeof a === 'object' && a !== null)) return null;
    const xKey = ['t_us', 't_ns', 't', 'time_us', 'time_ns', 'time'].find((k) => isNumArray(v[k]));
    return {
      x: xKey ? v[xKey] : null,
      xName: xKey || '',
      lines: lines.filter(([k]) => k !== xKey),
      scalars: others,
    };
  }

  function lineChart(series) {
    const canvas = el('canvas', { class: 'line' });
    const draw = () => {
      const W = Math.min(900, canvas.parentElement ? canvas.parentElement.clientWidth - 2 : 600), Hh = 190;
      const ctx = fitCanvas(canvas, W, Hh);
      const L = 54, R = 12, T = 10, B = 24;
      const pw = W - L - R, ph = Hh - T - B;
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, W, Hh);
      const n = series.lines[0][1].length;
      const xs = series.x || Array.from({ length: n }, (_, i) => i);
      const xmin = Math.min(...xs), xmax = Math.max(...xs);
      let ymax = 0;
      for (const [, a] of series.lines) for (const y of a) if (y > ymax) ymax = y;
      if (ymax <= 0) ymax = 1;
      const X = (x) => L + (xmax > xmin ? (x - xmin) / (xmax - xmin) : 0) * pw;
      const Y = (y) => T + ph - (y / ymax) * ph;
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = '#5b6475';
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      const ys = niceStep(ymax, 4);
      for (let y = 0; y <= ymax + 1e-9; y += ys) {
        ctx.fillStyle = '#e6e9ef';
        ctx.fillRect(L, Math.round(Y(y)), pw, 1);
        ctx.fillStyle = '#5b6475';
        ctx.fillText(fmtNumber(y), L - 6, Y(y));
      }
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      const xsStep = niceStep(xmax - xmin || 1, Math.max(2, Math.floor(pw / 100)));
      for (let x = Math.ceil(xmin / xsStep) * xsStep; x <= xmax; x += xsStep) {
        ctx.fillText(fmtNumber(x) + (series.xName.endsWith('us') ? ' µs' : series.xName.endsWith('ns') ? ' ns' : ''), X(x), T + ph + 6);
      }
      series.lines.forEach(([name, a], i) => {
        const ri = D.regions.indexOf(name);
        ctx.strokeStyle = ri >= 0 ? colour(ri) : PALETTE[(i + 6) % PALETTE.length];
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        a.forEach((y, k) => { if (k === 0) ctx.moveTo(X(xs[k]), Y(y)); else ctx.lineTo(X(xs[k]), Y(y)); });
        ctx.stroke();
      });
    };
    charts.push(draw);
    const legend = el('div', { class: 'legend' });
    series.lines.forEach(([name], i) => {
      const ri = D.regions.indexOf(name);
      legend.append(el('span', { class: 'item' }, el('span', {
        class: 'swatch', style: `background:${ri >= 0 ? colour(ri) : PALETTE[(i + 6) % PALETTE.length]}`,
      }), ri >= 0 ? name : prettyKey(name)));
    });
    return el('div', {}, legend, canvas);
  }

  // A number as its key says: *_ns a duration, *share* a percentage.
  function fmtKeyed(key, v) {
    if (typeof v !== 'number') return null;
    if (/_ns$/.test(key)) return fmtNs(v);
    if (/_us$/.test(key)) return fmtUs(v);
    if (/share/.test(key)) return (v * 100).toFixed(1) + ' %';
    return null;
  }

  function cell(v, key) {
    if (v === null || v === undefined) return '–';
    const keyed = key ? fmtKeyed(key, v) : null;
    if (keyed !== null) return keyed;
    if (typeof v === 'number') return fmtNumber(v);
    if (Array.isArray(v) && v.length && v.every(isPlainObject)) return table(v, true);
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return v.map((x) => (typeof x === 'number' ? fmtNumber(x) : x)).join(', ');
    if (typeof v === 'object') {
      return Object.entries(v).map(([k, x]) => `${prettyKey(k)}: ${typeof x === 'number' ? fmtNumber(x) : typeof x === 'object' ? JSON.stringify(x) : x}`).join('; ');
    }
    return String(v);
  }

  // A table of row objects (columns: every key, in first-seen order);
  // long ones fold away behind a summary line.
  function table(rows, nested) {
    const cols = [];
    for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k) && !isNumArray(r[k])) cols.push(k);
    const t = el('table', nested ? { class: 'nested' } : {});
    t.append(el('tr', {}, ...cols.map((c) => el('th', {}, prettyKey(c)))));
    for (const r of rows) {
      t.append(el('tr', {}, ...cols.map((c) => {
        const v = r[c];
        return el('td', { class: typeof v === 'number' ? '' : 'text' }, cell(v, c));
      })));
    }
    const box = el('div', { style: 'overflow-x:auto' }, t);
    if (nested || rows.length <= 24) return box;
    return el('details', {}, el('summary', {}, `${fmtInt(rows.length)} rows`), box);
  }

  // Rows that each carry one array of numbers of a common length (a
  // series per row, named by the row's first text field), or null.
  function rowSeries(rows, parent) {
    if (!rows.length || !rows.every(isPlainObject)) return null;
    const key = Object.keys(rows[0]).find((k) => isNumArray(rows[0][k]));
    if (!key) return null;
    const len = rows[0][key].length;
    if (!rows.every((r) => isNumArray(r[key]) && r[key].length === len)) return null;
    const nameKey = Object.keys(rows[0]).find((k) => typeof rows[0][k] === 'string');
    let x = null, xName = '';
    if (parent && typeof parent.bin_ns === 'number') {
      const start = typeof parent.start_ns === 'number' ? parent.start_ns : 0;
      x = Array.from({ length: len }, (_, i) => (start + (i + 0.5) * parent.bin_ns) / 1e3);
      xName = 't_us';
    }
    return { x, xName, lines: rows.map((r, i) => [nameKey ? r[nameKey] : String(i), r[key]]) };
  }

  function renderAnalysisValue(box, key, v, depth, parent) {
    const heading = () => key !== null && box.append(el(depth <= 1 ? 'h3' : 'h4', {}, prettyKey(key)));
    const series = seriesOf(v);
    if (series && !(isPlainObject(v) && Object.keys(v).length === 0)) {
      heading();
      for (const [k, x] of series.scalars || []) box.append(el('div', { class: 'scalar' }, el('span', { class: 'k' }, prettyKey(k) + ': '), cell(x, k)));
      box.append(lineChart(series));
      return;
    }
    if (Array.isArray(v)) {
      heading();
      const rs = rowSeries(v, parent);
      if (rs) box.append(lineChart(rs));
      if (!v.length) box.append(el('p', { class: 'note' }, 'none'));
      else if (v.every(isPlainObject)) box.append(table(v));
      else box.append(el('div', { class: 'scalar' }, cell(v)));
      return;
    }
    if (isPlainObject(v)) {
      heading();
      const inner = el('div', { class: 'analysis-block' });
      const scalars = Object.entries(v).filter(([, x]) => x === null || typeof x !== 'object' || (Array.isArray(x) && x.every((y) => typeof y !== 'object') && !isNumArray(x)));
      if (scalars.length) inner.append(table([Object.fromEntries(scalars)]));
      for (const [k, x] of Object.entries(v)) {
        if (!scalars.some(([s]) => s === k)) renderAnalysisValue(inner, k, x, depth + 1, v);
      }
      box.append(inner);
      return;
    }
    box.append(el('div', { class: 'scalar' }, key !== null ? el('span', { class: 'k' }, prettyKey(key) + ': ') : null, cell(v, key)));
  }

  function renderAnalysis() {
    const box = document.getElementById('analysis');
    if (D.analysis === null || D.analysis === undefined) {
      box.append(el('p', { class: 'note' }, 'No analysis of this launch is included in this report.'));
      return;
    }
    renderAnalysisValue(box, null, D.analysis, 0, null);
    document.body.setAttribute('data-analysis-charts', String(box.querySelectorAll('canvas').length));
  }

  function renderDiagnostics() {
    const box = document.getElementById('diagnostics');
    const d = H.diagnostics;
    if (!d.count) {
      box.append(el('p', { class: 'note' }, 'None: every warp decoded cleanly.'));
      return;
    }
    box.append(table(Object.entries(d.by_kind).map(([kind, n]) => ({ kind, count: n }))));
    const ul = el('ul', { class: 'diag' });
    for (const m of d.messages) ul.append(el('li', {}, m));
    box.append(ul);
    if (d.messages_omitted) box.append(el('p', { class: 'note' }, `${fmtInt(d.messages_omitted)} more not listed.`));
  }

  // ---------------------------------------------------------------- start

  // Options in the address's #fragment: group=block|sm, lanes=PX (a lane
  // height), bench (times redraws over a series of zooms and pans).
  const hashOpts = new URLSearchParams(location.hash.slice(1));
  if (hashOpts.get('group') === 'block' || hashOpts.get('group') === 'sm') {
    tl.group = hashOpts.get('group');
    for (const r of document.querySelectorAll('input[name=group]')) r.checked = r.value === tl.group;
  }
  if (hashOpts.has('lanes')) {
    const sel = document.getElementById('lane-height');
    if ([...sel.options].some((o) => o.value === hashOpts.get('lanes'))) {
      tl.laneHeight = sel.value = hashOpts.get('lanes');
    }
  }

  renderHeader();
  renderLegend();
  renderRegionTable();
  renderRegionCards();
  renderAnalysis();
  renderDiagnostics();
  resetView();
  layoutLanes();
  sizeTimeline();
  setupTimeline();
  const started = performance.now();
  drawTimeline();
  document.body.setAttribute('data-draw-ms', (performance.now() - started).toFixed(1));
  drawCharts();
  document.body.setAttribute('data-load-ms', (performance.now() - loadStart).toFixed(1));
  document.body.setAttribute('data-region-colours', D.regions.map((_, i) => colour(i)).join(' '));
  if (hashOpts.has('bench')) {
    // Zoom in step by step about a third of the way in, pan, then zoom
    // out again; the slowest redraw is what a user would feel.
    let slowest = 0;
    const frame = () => {
      const t = performance.now();
      drawTimeline();
      slowest = Math.max(slowest, performance.now() - t);
    };
    const x = GUTTER + (tl.width - GUTTER) / 3;
    for (let i = 0; i < 12; i++) { zoomAt(x, 0.5); frame(); }
    for (let i = 0; i < 6; i++) { const d = (tl.t1 - tl.t0) / 4; tl.t0 += d; tl.t1 += d; tl.scroll += 40; clampScroll(); frame(); }
    for (let i = 0; i < 14; i++) { zoomAt(x, 2); frame(); }
    resetView();
    frame();
    document.body.setAttribute('data-bench-slowest-ms', slowest.toFixed(1));
  }
  document.body.setAttribute('data-ready', '1');
})();
