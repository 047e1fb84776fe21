// rasplab explorer: renders the JSON embedded in the page (no network, no libraries).
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, text) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
let step = 0;

function stepCount() {
  if (DATA.kind === "program") return DATA.steps.length;
  if (DATA.kind === "run") return Math.max(DATA.layers.length, 1);
  return 1;
}

function setStep(s) {
  step = Math.max(0, Math.min(stepCount() - 1, s));
  $("step").value = step;
  if (stepCount() > 1 && window.history && history.replaceState) {
    history.replaceState(null, "", `#step=${step}`);  // a link opens where the reader is
  }
  render();
}

function initialStep() {
  // #step=N or #step=last in the URL, else the step the page was written for (default last)
  const m = /(?:^#|&)step=(last|\d+)/.exec(window.location.hash);
  const want = m ? m[1] : (DATA.initial_step === undefined ? "last" : String(DATA.initial_step));
  return want === "last" ? stepCount() - 1 : Number(want);
}

function gridTable(id, header, rows) {
  // rows: [{name, cls, cells: [{text, cls, title}]}]
  const t = el("table", { class: "grid", id: id });
  const hr = el("tr");
  hr.appendChild(el("th", { class: "name" }, header.name));
  header.cells.forEach((c) => hr.appendChild(el("th", {}, c)));
  t.appendChild(hr);
  for (const r of rows) {
    const tr = el("tr", r.cls ? { class: r.cls } : {});
    tr.appendChild(el("th", { class: "name" }, r.name));
    for (const c of r.cells) {
      const td = el("td", c.cls ? { class: c.cls } : {}, c.text);
      if (c.title) td.title = c.title;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  return t;
}

function heatmap(t, rowsOf, selectedOf, label, tokens) {
  // rowsOf(i) -> [[j, w]...]; selectedOf(i) -> [j...] or null; returns [canvas, agreeing].
  // Rows are query positions (left axis), columns key positions (top axis), each labelled
  // with its position and, where the cells are wide enough, its token.
  const cellPx = Math.max(2, Math.min(24, Math.floor(360 / Math.max(t, 1))));
  const names = tokens || [];
  const wide = cellPx >= 14;
  const longest = Math.max(1, ...names.map((x) => String(x).length));
  const left = 34 + (wide ? Math.min(6, longest) * 7 : 0), top = 34;
  const c = el("canvas", {
    width: left + t * cellPx + 2, height: top + t * cellPx + 2, "aria-label": label,
  });
  const g = c.getContext("2d");
  g.fillStyle = "#fff";
  g.fillRect(0, 0, c.width, c.height);
  g.fillStyle = "#444";
  g.font = "10px sans-serif";
  g.fillText("key position \u2192", left, 10);
  g.save();
  g.translate(10, top + 2);
  g.rotate(Math.PI / 2);
  g.fillText("query position \u2192", 0, 0);
  g.restore();
  const every = Math.max(1, Math.ceil(14 / cellPx));
  for (let p = 0; p < t; p += every) {
    const tok = wide && names[p] !== undefined ? String(names[p]).slice(0, 6) : "";
    g.textAlign = "center";
    g.fillText(String(p), left + p * cellPx + cellPx / 2, 22);
    if (tok) g.fillText(tok, left + p * cellPx + cellPx / 2, 32);
    g.textAlign = "right";
    g.fillText(tok ? `${p} ${tok}` : String(p), left - 3, top + p * cellPx + cellPx / 2 + 3);
  }
  g.textAlign = "left";
  g.strokeStyle = "#ccc";
  g.strokeRect(left - 0.5, top - 0.5, t * cellPx + 1, t * cellPx + 1);
  let agree = true;
  for (let i = 0; i < t; i++) {
    const row = rowsOf(i);
    for (const [j, w] of row) {
      const shade = Math.round(255 * (1 - Math.min(1, w)));
      g.fillStyle = `rgb(${shade},${shade},255)`;
      g.fillRect(left + j * cellPx, top + i * cellPx, cellPx, cellPx);
    }
    const sel = selectedOf ? selectedOf(i) : null;
    if (sel) {
      g.fillStyle = "#d00";
      for (const j of sel) {
        g.fillRect(left + j * cellPx + cellPx / 2 - 1, top + i * cellPx + cellPx / 2 - 1, 2, 2);
      }
      const got = row.map((p) => p[0]).join(" ");
      if (got !== sel.join(" ")) agree = false;
    }
  }
  return [c, agree];
}

function parseRow(text) {
  return text === "" ? [] : text.split(" ").map((p) => {
    const [j, w] = p.split(":");
    return [Number(j), Number(w)];
  });
}

function renderProgram(box) {
  const st = DATA.steps[step];
  const prev = step > 0 ? DATA.steps[step - 1] : null;
  const stageName = { initial: "initial (embedding)", attention: "after attention", mlp: "after MLP" };
  $("step-label").textContent = `step ${step}: layer ${st.layer}, ${stageName[st.stage]}`;
  const header = { name: "position", cells: DATA.tokens.map((_, p) => String(p)) };
  const tokRow = { name: "token id", cells: DATA.tokens.map((t) => ({ text: t })) };
  const interp = [tokRow], compiled = [tokRow];
  DATA.variables.forEach((v, vi) => {
    const cells = DATA.rows[st.interp[vi]].split(" ");
    const before = prev ? DATA.rows[prev.interp[vi]].split(" ") : null;
    const diff = st.diff[String(vi)] || {};
    const cls = v.output ? "output" : "";
    interp.push({
      name: v.name, cls,
      cells: cells.map((x, p) => ({
        text: x,
        cls: [before && before[p] !== x ? "changed" : "", x === "-" ? "undef" : ""].join(" ").trim(),
      })),
    });
    compiled.push({
      name: v.name, cls,
      cells: cells.map((x, p) => {
        const bad = Object.prototype.hasOwnProperty.call(diff, String(p));
        return {
          text: bad ? diff[String(p)] : x,
          cls: bad ? "disagree" : "agree",
          title: bad ? `interpreter: ${x}, compiled: ${diff[String(p)]}` : "agrees",
        };
      }),
    });
  });
  if (st.fired) {
    interp.push({ name: "rules fired", cells: st.fired.map((f) => ({ text: f || "-" })) });
    compiled.push({
      name: "rules fired",
      cells: (st.fired_compiled || st.fired.map(() => "?")).map((f, p) => ({
        text: f || "-", cls: f === st.fired[p] ? "agree" : "disagree",
      })),
    });
  }
  const panes = el("div", { class: "panes" });
  const left = el("div", { class: "scroll" });
  left.appendChild(el("h2", {}, "Interpreter: residual stream (variables × positions)"));
  left.appendChild(gridTable("interp-table", header, interp));
  const right = el("div", { class: "scroll" });
  right.appendChild(el("h2", {}, "Compiled weights, decoded (green: agrees, red: differs)"));
  right.appendChild(gridTable("compiled-table", header, compiled));
  panes.append(left, right);
  box.appendChild(panes);
  if (st.fired) {
    const used = new Set();
    st.fired.forEach((f) => f && f.split(",").forEach((r) => used.add(r)));
    box.appendChild(el("h2", {}, `Rules that fired in layer ${st.layer}`));
    const ul = el("ul", { class: "rules", id: "rules" });
    [...used].sort((a, b) => a - b).forEach((r) => ul.appendChild(el("li", {}, `[${r}] ${DATA.rules[r]}`)));
    if (!used.size) ul.appendChild(el("li", {}, "none"));
    box.appendChild(ul);
  }
  if (st.heads) {
    box.appendChild(el("h2", {}, `Attention weights, layer ${st.layer} (red dots: the interpreter's selection)`));
    const t = DATA.tokens.length;
    st.heads.forEach((h, hi) => {
      const info = DATA.heads[hi];
      const div = el("div", { class: "head" });
      div.appendChild(el("div", { class: "head-title" }, `head ${info.name}: query ${info.query}, key ${info.key}` +
        (info.relative ? (info.relative.length > 6 ? `, ${info.relative.length} offsets` : `, offsets ${info.relative.join(",")}`) : "")));
      const rowsOf = (i) => (h.weights ? parseRow(DATA.attention_rows[h.weights[i]]) : []);
      const selOf = (i) => { const r = DATA.attention_rows[h.selected[i]]; return r === "" ? [] : r.split(" ").map(Number); };
      const [canvas, agree] = heatmap(t, rowsOf, selOf, `head ${info.name}`, DATA.tokens);
      div.appendChild(canvas);
      div.appendChild(el("div", { class: agree ? "note" : "note bad" },
        agree ? "selections agree" : "selections differ"));
      box.appendChild(div);
    });
  }
}

function svgChart(points, opts) {
  // points: [[x, y]] with y in [0, 1] unless opts.ymax; a polyline (or bars) in inline SVG
  const W = 360, H = 160, P = 30;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("id", opts.id);
  const xs = points.map((p) => p[0]);
  const ymax = opts.ymax || Math.max(1e-9, ...points.map((p) => p[1]));
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  const X = (x) => P + (xmax > xmin ? (x - xmin) / (xmax - xmin) : 0.5) * (W - 2 * P);
  const Y = (y) => H - P + -(y / ymax) * (H - 2 * P);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e); return e;
  };
  add("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, stroke: "#888" });
  add("line", { x1: P, y1: P, x2: P, y2: H - P, stroke: "#888" });
  add("text", { x: 2, y: P, fill: "#444" }, String(Number(ymax.toPrecision(3))));
  add("text", { x: 2, y: H - P, fill: "#444" }, "0");
  add("text", { x: P, y: 14, fill: "#222" }, opts.title);
  if (opts.bars) {
    const bw = (W - 2 * P) / Math.max(points.length, 1);
    points.forEach((p, i) => {
      add("rect", { x: P + i * bw + 2, y: Y(p[1]), width: bw - 4, height: H - P - Y(p[1]), fill: "#6a8fd8" });
      add("text", { x: P + i * bw + 2, y: H - P + 12, fill: "#444" }, opts.labels[i]);
      add("text", { x: P + i * bw + 2, y: Y(p[1]) - 2, fill: "#222" }, p[1].toFixed(2));
    });
  } else {
    add("polyline", { points: points.map((p) => `${X(p[0])},${Y(p[1])}`).join(" "), fill: "none", stroke: "#c44" });
    add("text", { x: W - P - 40, y: H - P + 12, fill: "#444" }, `step ${xmax}`);
  }
  return svg;
}

function renderRun(box) {
  const t = DATA.tokens.length;
  const header = { name: "position", cells: DATA.tokens.map((_, p) => String(p)) };
  const rows = [
    { name: "token", cells: DATA.tokens.map((x) => ({ text: x })) },
    { name: "target", cells: DATA.targets.map((x) => ({ text: x === null ? "" : x })) },
    { name: "prediction", cells: DATA.predictions.map((x, p) => ({
      text: x, cls: DATA.targets[p] === null ? "" : (x === DATA.targets[p] ? "right" : "wrong"),
    })) },
  ];
  const scored = DATA.targets.filter((x) => x !== null).length;
  const right = DATA.predictions.filter((x, p) => DATA.targets[p] !== null && x === DATA.targets[p]).length;
  box.appendChild(el("h2", {}, `Predictions: ${right} of ${scored} scored positions right`));
  const sc = el("div", { class: "scroll" });
  sc.appendChild(gridTable("predictions", header, rows));
  box.appendChild(sc);
  const charts = el("div", { class: "panes" });
  if (DATA.bins && DATA.bins.length) {
    charts.appendChild(svgChart(DATA.bins.map((b, i) => [i, b.accuracy]),
      { id: "bins-chart", bars: true, ymax: 1, labels: DATA.bins.map((b) => b.bin), title: "accuracy by length bin" }));
  }
  if (DATA.curve && DATA.curve.length) {
    charts.appendChild(svgChart(DATA.curve.map((c) => [c.step, c.loss]),
      { id: "curve-chart", title: "training loss" }));
  }
  box.appendChild(charts);
  if (!DATA.layers.length) return;
  const layer = DATA.layers[step];
  $("step-label").textContent = `layer ${step + 1} of ${DATA.layers.length}`;
  box.appendChild(el("h2", {}, `Attention weights, layer ${step + 1}`));
  layer.heads.forEach((h, hi) => {
    const div = el("div", { class: "head" });
    div.appendChild(el("div", { class: "head-title" }, `head ${hi}`));
    const [canvas] = heatmap(t, (i) => parseRow(DATA.attention_rows[h[i]]), null, `head ${hi}`, DATA.tokens);
    div.appendChild(canvas);
    box.appendChild(div);
  });
}

function renderCrasp(box) {
  $("step-label").textContent = "";
  const header = { name: "position", cells: DATA.symbols.map((_, p) => String(p)) };
  const symbols = { name: "symbol", cells: DATA.symbols.map((x) => ({ text: x })) };
  const interp = [symbols], compiled = [symbols];
  DATA.operations.forEach((op) => {
    const cls = op.output ? "output" : "";
    interp.push({ name: op.name, cls, cells: op.values.map((x) => ({ text: x })) });
    if (!op.compiled) return;  // the readout: interpreter only
    const bad = new Set(op.differs);
    compiled.push({
      name: op.name, cls,
      cells: op.compiled.map((x, p) => ({
        text: x,
        cls: bad.has(p) ? "disagree" : "agree",
        title: bad.has(p) ? `interpreter: ${op.values[p]}, compiled: ${x}` : "agrees",
      })),
    });
  });
  const panes = el("div", { class: "panes" });
  const left = el("div", { class: "scroll" });
  const headings = DATA.headings || ["Interpreter: operations × positions", "Compiled transformer, decoded"];
  left.appendChild(el("h2", {}, headings[0]));
  left.appendChild(gridTable("interp-table", header, interp));
  const right = el("div", { class: "scroll" });
  right.appendChild(el("h2", {}, headings[1]));
  right.appendChild(gridTable("compiled-table", header, compiled));
  panes.append(left, right);
  box.appendChild(panes);
  const ul = el("ul", { class: "rules", id: "rules" });
  DATA.operations.forEach((op) => ul.appendChild(el("li", {}, `${op.name} := ${op.definition}`)));
  box.appendChild(el("h2", {}, "Definitions"));
  box.appendChild(ul);
}

const LEGENDS = {
  // only what the page's kind shows: a legend entry for nothing on the page is noise
  program: [["changed", "#fff4c2"], ["agrees", "#e6f5e6"], ["differs", "#f8caca"],
    ["- undefined"], ["! invalid encoding"], ["keys: \u2190 \u2192 Home End"]],
  crasp: [["agrees", "#e6f5e6"], ["differs", "#f8caca"]],
  rasp: [["agrees", "#e6f5e6"], ["differs", "#f8caca"], ["- no value (BOS)"]],
  run: [["right", "#e6f5e6"], ["wrong", "#f8caca"], ["keys: \u2190 \u2192 Home End"]],
};

function renderLegend() {
  const box = $("legend");
  for (const [text, color] of LEGENDS[DATA.kind] || []) {
    box.appendChild(el("span", color ? { style: `background:${color}` } : { class: "plain" }, text));
  }
}

function render() {
  const box = $("view");
  box.textContent = "";
  if (DATA.kind === "program") renderProgram(box);
  else if (DATA.kind === "run") renderRun(box);
  else renderCrasp(box);
}

function init() {
  document.title = `rasplab explore: ${DATA.title}`;
  $("title").textContent = DATA.title;
  const s = DATA.summary;
  const parts = [];
  if (DATA.kind === "program") {
    parts.push(`layers run: ${s.layers}`);
    parts.push(s.halting ? `halted at layer ${s.halted_at}` : "no halting condition");
    parts.push(`output: ${s.output}`);
    parts.push(s.all_agree ? "interpreter and compiled weights agree on every cell" : "DISAGREEMENT between interpreter and compiled weights");
    if (!s.all_agree) $("summary").classList.add("bad");
  } else if (DATA.kind === "run") {
    parts.push(`layers: ${s.layers}`, `${s.right} of ${s.scored} positions right`);
  } else if (DATA.kind === "rasp") {
    parts.push(`${s.operations} SOps`, `output: ${s.output}`);
    parts.push(s.all_agree ? "evaluator and compiled model agree on every cell" : "DISAGREEMENT between evaluator and compiled model");
    if (!s.all_agree) $("summary").classList.add("bad");
  } else {
    parts.push(`${s.operations} operations`, `accepted: ${s.accept}`);
    parts.push(s.all_agree ? "interpreter and compiled transformer agree on every cell" : "DISAGREEMENT between interpreter and compiled transformer");
    if (!s.all_agree) $("summary").classList.add("bad");
  }
  $("summary").textContent = parts.join(" · ");
  renderLegend();
  if (stepCount() < 2) $("controls").hidden = true;  // nothing to step through
  const range = $("step");
  range.max = String(stepCount() - 1);
  range.addEventListener("input", () => setStep(Number(range.value)));
  $("prev").addEventListener("click", () => setStep(step - 1));
  $("next").addEventListener("click", () => setStep(step + 1));
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight" || e.key === "j") setStep(step + 1);
    else if (e.key === "ArrowLeft" || e.key === "k") setStep(step - 1);
    else if (e.key === "Home") setStep(0);
    else if (e.key === "End") setStep(stepCount() - 1);
    else return;
    e.preventDefault();
  });
  setStep(initialStep());
  window.addEventListener("hashchange", () => setStep(initialStep()));
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
}

init();
