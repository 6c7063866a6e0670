// pricewatch dashboard enhancements. Everything works without this file:
// selectors then apply with the Show button, and the plan form is priced
// by the server from the page's address. With it, selectors apply on
// change and the plan form posts its job spec to POST /v1/plan.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("select[data-autosubmit]").forEach(function (s) {
    s.addEventListener("change", function () { s.form.requestSubmit(); });
  });
  // A GET form leaves its empty inputs out of the address, so a shared
  // link holds only the filters set.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[method=get] [disabled]").forEach(function (e) { e.disabled = false; });
  });
  document.querySelectorAll("form[method=get]").forEach(function (f) {
    if (f.id === "plan-form") return;
    f.addEventListener("submit", function () {
      f.querySelectorAll("input, select").forEach(function (e) { if (e.name && e.value === "") e.disabled = true; });
    });
  });
  var form = document.getElementById("plan-form");
  if (form) form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    planSubmit(form);
  });
});

function text(tag, s, cls) {
  var e = document.createElement(tag);
  e.textContent = s;
  if (cls) e.className = cls;
  return e;
}

// fixed is v with d decimals as the server's strconv writes it: to the
// nearest, an exact tie to even (toFixed rounds 302.5 to 303, Go to 302).
function fixed(v, d) {
  var s = v.toFixed(d);
  if (!isFinite(v) || Math.abs(v) >= 1e21) return s;
  var full = Math.abs(v).toFixed(100), dot = full.indexOf("."), cut = d === 0 ? dot : dot + 1 + d;
  if (!/^50*$/.test(full.slice(cut).replace(".", ""))) return s;
  var kept = full.slice(0, cut);
  return Number(kept.charAt(kept.length - 1)) % 2 === 0 ? (v < 0 ? "-" : "") + kept : s;
}

function money(v, cur) {
  if (v === null || v === undefined || !isFinite(v)) return "—";
  // As the server's: 0, whole units from 100, cents from 1, else three significant digits.
  if (v === 0) return "0 " + cur;
  var a = Math.abs(v), d = a >= 100 ? 0 : a >= 1 ? 2 : 2 - Math.floor(Math.log10(a));
  return fixed(v, d) + " " + cur;
}

// serviceText is the server's serviceText: a serving job's service level.
function serviceText(slo, cached) {
  var parts = [], s = "";
  if (slo) {
    if (slo.ttft_ms > 0) parts.push("time to first token " + slo.ttft_ms + " ms");
    if (slo.tpot_ms > 0) parts.push(slo.tpot_ms + " ms per output token");
    if (slo.user_tokens_per_second > 0) parts.push(slo.user_tokens_per_second + " tokens/s per user");
  }
  if (parts.length) s = " Service level" + (slo.percentile > 0 ? " at p" + slo.percentile : "") + ": " + parts.join(", ") + ".";
  if (cached > 0) s += " " + Math.round(cached * 1000) / 10 + "% of prompt tokens cached.";
  return s;
}

function unitText(o) {
  if (o.rent_unit === "fixed") return "fixed unit of " + o.gpus + " GPU" + (o.gpus === 1 ? "" : "s");
  var c = o.gpu_counts || [], s = "per GPU: " + o.gpus + " rented";
  if (c.length) s += c[0] === c[c.length - 1] ? " (" + c[0] + " allowed)" : " (" + c[0] + "–" + c[c.length - 1] + " allowed)";
  return s;
}

// billedText matches the server's: hours billed (whole from 100), or whole
// periods with the share of use at which the commitment beats on-demand.
function billedText(o) {
  if (!o.periods_billed) return (o.billed_hours >= 100 ? Math.round(o.billed_hours) : Number(o.billed_hours.toPrecision(3))) + " h";
  var s = o.periods_billed + " × " + o.period_hours + " h";
  if (o.break_even_utilization != null) s += ", pays above " + Math.round(o.break_even_utilization * 100) + "% use";
  else if (o.break_even === "never") s += ", never beats on-demand";
  return s;
}

// planSpec reads the plan form as a job spec and as the page's address:
// each input's data-path is its field in the spec ("model.params_b"), its
// data-kind how the value reads (as the server's form reads it), and its
// name the address's parameter. Empty inputs are left out of both.
function planSpec(form) {
  var spec = {}, q = new URLSearchParams();
  form.querySelectorAll("[data-path]").forEach(function (e) {
    var v = e.value.trim(), kind = e.dataset.kind;
    if (e.type === "checkbox" ? !e.checked : v === "") return;
    q.append(e.name, v);
    var path = e.dataset.path.split("."), k = path.pop(), o = spec;
    path.forEach(function (p) { o = o[p] = o[p] || {}; });
    if (kind === "number" || kind === "integer" || (kind === "when" && isFinite(Number(v)))) v = Number(v);
    if (kind === "list") (o[k] = o[k] || []).push(v); else o[k] = v;
  });
  if (spec.limit === undefined) spec.limit = 20;
  return { spec: spec, query: q };
}

function sum(m) {
  var t = 0;
  Object.keys(m || {}).forEach(function (k) { t += m[k]; });
  return t;
}

function monthsText(m) { return m === 1 ? "1 month" : m + " months"; }

// trainingRow and servingRow are an option's cells as the server's page
// writes them: [text, class, second line, title, origin badge].
function trainingRow(o, cur) {
  return [[unitText(o)],
    [fixed(o.memory_per_gpu_gib, 1) + " GiB" + (o.gpus_used > 1 ? " × " + o.gpus_used : "") + (o.fits ? "" : " (does not fit: " + o.reason + ")")],
    [Math.round(o.tokens_per_second).toString(), "num"], ["", "", "", "", o.throughput_origin], [o.hours.toPrecision(3), "num"], [billedText(o), "billed"],
    [money(o.compute_cost, cur), "num"], [money(sum(o.hidden_costs), cur), "num"], [money(o.total_cost, cur), "num total"],
    [money(o.cost_per_million_tokens, cur), "num"]];
}

function servingRow(o, cur) {
  var sv = o.serving || {}, items = [];
  Object.keys(o.hidden_costs || {}).sort().forEach(function (k) { if (o.hidden_costs[k]) items.push(k + " " + money(o.hidden_costs[k], cur)); });
  var gpus = o.serving ? sv.gpus_needed + (sv.instances > 1 ? " (" + sv.instances + " × " + o.gpus + ")" : "") : "—";
  var atLoad = sv.cost_per_million_tokens_at_load > 0;
  // A fitting option's period costs something: 0 is a total not computed.
  var total = o.total_cost !== 0 || !o.fits ? money(o.total_cost, cur) : "—";
  return [[unitText(o) + (o.fits ? "" : " (does not fit: " + o.reason + ")")], [gpus, "num gpus"],
    [sv.capacity_tokens_per_second > 0 ? Math.round(sv.capacity_tokens_per_second).toString() : "—", "num capacity", "", "", o.throughput_origin],
    [sv.headroom_pct ? (sv.headroom_pct >= 0 ? "+" : "") + fixed(sv.headroom_pct, 0) + "%" : "—", "num headroom"], [billedText(o), "billed"],
    [o.serving ? money(sv.monthly_cost, cur) : "—", "num per-month", sv.first_invoice > 0 ? "first invoice " + money(sv.first_invoice, cur) : ""],
    [money(o.compute_cost, cur), "num compute"], [money(sum(o.hidden_costs), cur), "num hidden", "", items.join(", ")], [total, "num total"],
    [money(atLoad ? sv.cost_per_million_tokens_at_load : o.cost_per_million_tokens, cur), "num at-load", atLoad ? "" : "at full use"]];
}

function planSubmit(form) {
  var read = planSpec(form), spec = read.spec;
  history.replaceState(null, "", "/plan?" + read.query.toString());
  var out = document.getElementById("plan-result");
  out.replaceChildren(text("p", "Pricing…"));
  fetch("/v1/plan", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(spec) })
    .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })
    .then(function (r) {
      out.replaceChildren();
      if (!r.ok) { out.appendChild(text("p", r.body.error || "error", "error")); return; }
      var p = r.body, m = p.memory, cur = p.currency, j = p.job, hd = j.hidden;
      var serving = j.method === "serve" && !j.tokens;
      out.appendChild(text("p", p.job.method === "serve" ?
        "Memory on one GPU: weights " + fixed(m.weights_gib, 1) + " + KV cache " + fixed(m.kv_cache_gib, 1) +
        " + runtime reserve " + fixed(m.runtime_reserve_gib || 0, 1) + " = " + fixed(m.total_gib, 1) +
        " GiB (the engine's share of the card holds it; more buys a larger batch)." :
        "Memory on one GPU: weights " + fixed(m.weights_gib, 1) + " + gradients " + fixed(m.gradients_gib, 1) +
        " + optimizer " + fixed(m.optimizer_gib, 1) + " + activations " + fixed(m.activations_gib, 1) + " = " +
        fixed(m.total_gib, 1) + " GiB (a card holds 80% of its capacity).", "memory"));
      out.lastChild.id = "plan-memory";
      out.appendChild(text("p", p.options.length + " of " + p.considered + " options, costs in " + cur + " (from POST /v1/plan)."));
      // What was priced, as the server's page says it.
      var job = "Priced: " + j.method + " of " + j.model.name + " (" + j.model.params_b + " B)";
      if (j.peak_tokens_per_second) {
        job += ", peak " + j.peak_tokens_per_second + " tokens/s";
        if (j.base_tokens_per_second) job += " for " + j.peak_hours_per_day + " h/day over a base of " + j.base_tokens_per_second;
      }
      if (j.hours_per_month) job += ", " + j.hours_per_month + " h/month";
      job += "; start-up " + hd.startup_minutes + " min, storage " + hd.storage_gb + " GB for " + hd.storage_days + " days, egress " + hd.egress_gb + " GB.";
      if (serving) job += " Billed for " + monthsText(j.months || 1) + ".";
      job += serviceText(j.slo, j.cached_prompt_share);
      out.appendChild(text("p", job));
      out.lastChild.id = "plan-job";
      var t = document.createElement("table"); t.id = "plan"; t.className = serving ? "data serving" : "data";
      var head = serving ?
        ["#", "Card", "Source", "Region", "Mode", "Rented", "GPUs", "Capacity tokens/s", "Headroom", "Billed", "Per month", "Compute", "+ Hidden", "= Total, " + monthsText(j.months || 1), "Cost / M tokens at load", "Offer"] :
        ["#", "Card", "Source", "Region", "Mode", "Rented", "Memory / GPU", "Tokens/s", "Origin", "Hours", "Billed", "Compute", "Hidden", "Total", "Cost / M tokens", "Offer"];
      var numeric = serving ? [6, 7, 8, 10, 11, 12, 13, 14] : [7, 9, 11, 12, 13, 14];
      var tr = document.createElement("tr");
      head.forEach(function (h, i) { tr.appendChild(text("th", h, numeric.indexOf(i) >= 0 ? "num" : "")); });
      t.appendChild(document.createElement("thead")).appendChild(tr);
      var tb = t.appendChild(document.createElement("tbody"));
      p.options.forEach(function (o, i) {
        var region = (o.region || "").replace(/^,\s*/, "") || "—";
        var cells = [[String(i + 1)], [o.card], [o.source], [region], [o.mode + (o.bid ? " (bid)" : "")]]
          .concat(serving ? servingRow(o, cur) : trainingRow(o, cur), [[o.offer, "offer"]]);
        var row = document.createElement("tr");
        cells.forEach(function (c) {
          var td = row.appendChild(text("td", c[0], c[1]));
          if (c[4]) td.append(" ", text("span", c[4], "origin origin-" + c[4]));
          if (c[2]) td.appendChild(text("small", c[2], "sub"));
          if (c[3]) td.title = c[3];
        });
        tb.appendChild(row);
      });
      if (!p.options.length) {
        var none = tb.appendChild(document.createElement("tr")).appendChild(text("td", "No option for this job: " +
          (p.unfit_offers ? p.unfit_offers + " offers in these modes cannot hold it (try more GPUs)." : "no available offer in these modes.")));
        none.colSpan = 16;
      }
      out.appendChild(t);
    })
    .catch(function (e) { out.replaceChildren(text("p", String(e), "error")); });
}
