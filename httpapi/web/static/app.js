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

function money(v, cur) {
  if (v === null || v === undefined || !isFinite(v)) return "—";
  // As the server's: 0, whole units from 100, cents from 1, else three significant digits.
  if (v === 0) return "0 " + cur;
  var a = Math.abs(v), d = a >= 100 ? 0 : a >= 1 ? 2 : 2 - Math.floor(Math.log10(a));
  return v.toFixed(d) + " " + cur;
}

function unitText(o) {
  if (o.rent_unit === "fixed") return "fixed unit of " + o.gpus + " GPU" + (o.gpus === 1 ? "" : "s");
  var c = o.gpu_counts || [], s = "per GPU: " + o.gpus + " rented";
  if (c.length) s += c[0] === c[c.length - 1] ? " (" + c[0] + " allowed)" : " (" + c[0] + "–" + c[c.length - 1] + " allowed)";
  return s;
}

// billedText matches the server's: hours billed, or whole periods with
// the share of use at which the commitment beats on-demand.
function billedText(o) {
  if (!o.periods_billed) return o.billed_hours.toPrecision(3) + " h";
  var s = o.periods_billed + " × " + o.period_hours + " h";
  if (o.break_even_utilization != null) s += ", pays above " + Math.round(o.break_even_utilization * 100) + "% use";
  else if (o.break_even === "never") s += ", never beats on-demand";
  return s;
}

function planSubmit(form) {
  var fd = new FormData(form), spec = {}, q = new URLSearchParams();
  fd.forEach(function (v, k) { if (v !== "") q.set(k, v); });
  spec.workload = fd.get("workload");
  if (fd.get("tokens")) spec.tokens = Number(fd.get("tokens"));
  if (fd.get("mode")) spec.modes = String(fd.get("mode")).split(",");
  if (fd.get("currency")) spec.currency = fd.get("currency");
  if (fd.get("max_gpus")) spec.max_gpus = Number(fd.get("max_gpus"));
  if (fd.get("card")) spec.card = fd.get("card");
  if (fd.get("model")) spec.model = { preset: fd.get("model") };
  if (fd.get("method")) spec.method = fd.get("method");
  // The number inputs are the spec's fields: the serving load at the top
  // level, the hidden costs under "hidden" (as the server's form reads them).
  form.querySelectorAll("#plan-load input").forEach(function (e) { if (e.value !== "") spec[e.name] = Number(e.value); });
  form.querySelectorAll("#plan-hidden input").forEach(function (e) {
    if (e.value === "") return;
    spec.hidden = spec.hidden || {};
    spec.hidden[e.name] = Number(e.value);
  });
  spec.limit = 20;
  history.replaceState(null, "", "/plan?" + q.toString());
  var out = document.getElementById("plan-result");
  out.replaceChildren(text("p", "Pricing…"));
  fetch("/v1/plan", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(spec) })
    .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })
    .then(function (r) {
      out.replaceChildren();
      if (!r.ok) { out.appendChild(text("p", r.body.error || "error", "error")); return; }
      var p = r.body, m = p.memory, cur = p.currency, j = p.job, hd = j.hidden;
      out.appendChild(text("p", p.job.method === "serve" ?
        "Memory on one GPU: weights " + m.weights_gib.toFixed(1) + " + KV cache " + m.kv_cache_gib.toFixed(1) +
        " + runtime reserve " + (m.runtime_reserve_gib || 0).toFixed(1) + " = " + m.total_gib.toFixed(1) +
        " GiB (the engine's share of the card holds it; more buys a larger batch)." :
        "Memory on one GPU: weights " + m.weights_gib.toFixed(1) + " + gradients " + m.gradients_gib.toFixed(1) +
        " + optimizer " + m.optimizer_gib.toFixed(1) + " + activations " + m.activations_gib.toFixed(1) + " = " +
        m.total_gib.toFixed(1) + " GiB (a card holds 80% of its capacity).", "memory"));
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
      out.appendChild(text("p", job));
      out.lastChild.id = "plan-job";
      var t = document.createElement("table"); t.id = "plan"; t.className = "data";
      var head = ["#", "Card", "Source", "Region", "Mode", "Rented", "Memory / GPU", "Tokens/s", "Origin", "Hours", "Billed", "Compute", "Hidden", "Total", "Cost / M tokens", "Offer"];
      var tr = document.createElement("tr");
      head.forEach(function (h) { tr.appendChild(text("th", h)); });
      t.appendChild(document.createElement("thead")).appendChild(tr);
      var tb = t.appendChild(document.createElement("tbody"));
      p.options.forEach(function (o, i) {
        var hidden = 0;
        Object.keys(o.hidden_costs || {}).forEach(function (k) { hidden += o.hidden_costs[k]; });
        var region = (o.region || "").replace(/^,\s*/, "") || "—";
        var row = [String(i + 1), o.card, o.source, region, o.mode + (o.bid ? " (bid)" : ""), unitText(o),
          o.memory_per_gpu_gib.toFixed(1) + " GiB" + (o.gpus_used > 1 ? " × " + o.gpus_used : "") + (o.fits ? "" : " (does not fit: " + o.reason + ")"),
          Math.round(o.tokens_per_second).toString(), o.throughput_origin, o.hours.toPrecision(3), billedText(o),
          money(o.compute_cost, cur), money(hidden, cur), money(o.total_cost, cur), money(o.cost_per_million_tokens, cur), o.offer];
        var r2 = document.createElement("tr");
        row.forEach(function (c, j) { r2.appendChild(text("td", c, [7, 9, 11, 12, 13, 14].indexOf(j) >= 0 ? "num" : "")); });
        tb.appendChild(r2);
      });
      if (!p.options.length) tb.appendChild(document.createElement("tr")).appendChild(text("td", "No option for this job: " +
        (p.unfit_offers ? p.unfit_offers + " offers in these modes cannot hold it (try more GPUs)." : "no available offer in these modes.")));
      out.appendChild(t);
    })
    .catch(function (e) { out.replaceChildren(text("p", String(e), "error")); });
}
