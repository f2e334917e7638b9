// Rendering: plain DOM, text only (never innerHTML with data), so a policy's regex cannot inject markup.
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return e;
}

const shortId = (id) => (id ? id.slice(-8) : "");

export function fillTable(table, rows) {
  const body = table.querySelector("tbody");
  body.replaceChildren(...rows);
  if (rows.length === 0) {
    const cols = table.querySelectorAll("thead th").length;
    body.append(el("tr", {}, el("td", { colspan: cols, class: "empty" }, "none")));
  }
}

export function policyRow(p, { onEdit, onDelete }) {
  const labels = p.nodeSelectors.map((s) => `${s.key}=${s.value}`).join(", ");
  const dra = p.draSelectors.map((d) => d.deviceClass).join(", ");
  return el("tr", { "data-id": p.id },
    el("td", { title: p.id, class: "mono" }, shortId(p.id)),
    el("td", {}, p.nodeNames.join(", ")),
    el("td", {}, labels), el("td", {}, dra),
    el("td", { class: "mono" }, p.commandRegex),
    el("td", {}, p.priority), el("td", {}, p.executionTime),
    el("td", {}, el("button", { class: "edit", onclick: () => onEdit(p) }, "Edit"), " ",
      el("button", { class: "delete danger", onclick: () => onDelete(p) }, "Delete")));
}

export function intentRow(i) {
  return el("tr", { "data-id": i.id, "data-state": i.stateName },
    el("td", { title: i.id, class: "mono" }, shortId(i.id)),
    el("td", { title: i.policyId, class: "mono" }, shortId(i.policyId)),
    el("td", {}, i.nodeId), el("td", { class: "mono" }, i.commandRegex),
    el("td", {}, i.priority), el("td", {}, i.executionTime),
    el("td", {}, el("span", { class: `badge state-${i.stateName.toLowerCase()}` }, i.stateName)),
    el("td", { class: "reason" }, `${i.reason} (matched ${i.matchedTasks}, in map ${i.appliedEntries})`,
      // The write's warnings (issue 47: a GUI user never saw them) under the reason.
      ...(i.warnings || []).map((w) => el("p", { class: "warning" }, w))));
}

export function taskRow(t, onExplain) {
  return el("tr", { "data-tid": t.tid, "data-policy": t.policyId ?? "" },
    el("td", {}, t.tid), el("td", {}, t.tgid), el("td", { class: "mono" }, t.comm),
    el("td", { class: "mono" }, t.title || "–"),
    el("td", { class: "mono" }, t.podUid || "–"),
    el("td", { class: "mono", title: t.policy ?? "" }, t.policyId ? shortId(t.policyId) : (t.policy ?? "–")),
    el("td", {}, t.policy ? (t.applied ? "yes" : "no") : "–"),
    el("td", {}, el("button", { onclick: () => onExplain(t.tid) }, "Lineage")));
}

export function lineageText(l) {
  const claims = (l.claims || []).map((c) => `${c.uid}@${c.generation}`).join(", ") || "(no claim)";
  const e = l.entry || {};
  return [
    `claim   ${claims}`, `pod     ${l.podUid || "(none)"}`, `cgroup  ${l.cgroup || "(none)"}`,
    `task    tid ${l.tid} tgid ${l.tgid} comm ${l.comm}${l.title ? ` title ${l.title}` : ""}`,
    `policy  ${l.policy || "(none)"} generation ${l.policyGeneration} (${l.strategy || "-"})`,
    `entry   class ${e.executionClass ?? "-"} slice ${e.sliceNs ?? "-"} ns flags ${(e.flags || []).join(",")}`,
  ].join("\n");
}

// The controller acting on the task and its last decisions (issue 46), after the lineage.
export function controllerText(x) {
  const c = x.controller;
  if (!c) return "";
  const ns = (v) => (v >= 1e6 ? `${(v / 1e6).toFixed(2)}ms` : `${Math.round(v / 1e3)}us`);
  const lines = [`\ncontroller level ${c.level} of ${c.maxLevel}${c.level ? " (raised)" : " (the static policy)"}`];
  for (const d of x.decisions || [])
    lines.push(`decision ${new Date(Number(d.timeUnixMs)).toISOString()} ${d.fromLevel} -> ${d.toLevel} ${d.rule}` +
      ` run delay p99 ${d.hasSignal ? ns(Number(d.runDelayP99Ns)) : "none"}` +
      ` cpu share ${Number(d.cpuShareMean).toFixed(2)}/${Number(d.cpuShareMax).toFixed(2)}: ${d.reason}`);
  return lines.join("\n");
}

export function previewView(pv) {
  const rows = (pv.matched || []).map((m) =>
    el("li", {}, `${m.tid} ${m.comm} (tgid ${m.tgid}) ${m.intended ? "" : "— loses a conflict"}`));
  return el("div", {},
    el("strong", {}, `Preview (read-only): ${rows.length} thread(s) would match`),
    el("ul", {}, ...rows),
    ...(pv.warnings || []).map((w) => el("p", { class: "warning" }, w)));
}
