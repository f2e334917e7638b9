// The Node Policies page: tables, the slide-over form with preview, delete with confirmation,
// and live refresh from the gateway's event stream (GET /api/v1/events, Server-Sent Events).
import { api, token, setToken } from "./api.js";
import { el, fillTable, policyRow, intentRow, taskRow, lineageText, controllerText, previewView } from "./views.js";

const $ = (s) => document.querySelector(s);

function showError(where, err) {
  const p = $(where);
  p.textContent = err ? String(err.message || err) : "";
  p.hidden = !err;
}

async function refresh() {
  try {
    const [policies, intents, tasks, health] = await Promise.all([
      api.policies(), api.intents(), api.tasks($("#task-filter").value), api.health()]);
    $("#count-policies").textContent = policies.length;
    $("#count-intents").textContent = intents.length;
    $("#node").textContent = health.node;
    fillTable($("#policies"), policies.map((p) => policyRow(p, { onEdit: openForm, onDelete: confirmDelete })));
    fillTable($("#intents"), intents.map(intentRow));
    fillTable($("#tasks"), tasks.filter((t) => t.policy).map((t) => taskRow(t, explain)));
    showError("#error", null);
  } catch (e) {
    showError("#error", e);
  }
}

async function explain(tid) {
  try {
    const x = await api.explain(tid);
    $("#lineage").textContent = lineageText(x.lineage) + controllerText(x);
    $("#lineage").hidden = false;
  } catch (e) { showError("#error", e); }
}

function pairRow(kind, a = "", b = "") {
  const ph = kind === "selector" ? ["key", "value"] : ["device class (driver)", "pool=…,device=…"];
  return el("div", { class: `row ${kind}` }, el("input", { placeholder: ph[0], value: a }),
    el("input", { placeholder: ph[1], value: b }),
    el("button", { type: "button", onclick: (ev) => ev.target.parentElement.remove() }, "×"));
}

function openForm(p) {
  const f = $("#policy-form");
  f.reset();
  f.policyId.value = p ? p.id : "";
  $("#form-title").textContent = p ? `Edit Node Policy ${p.id.slice(-8)}` : "New Node Policy";
  $("#selectors .rows").replaceChildren(...(p ? p.nodeSelectors.map((s) => pairRow("selector", s.key, s.value)) : []));
  $("#dra .rows").replaceChildren(...(p ? p.draSelectors.map((d) =>
    pairRow("dra", d.deviceClass, d.attributes.map((a) => `${a.key}=${a.value}`).join(","))) : []));
  if (p) {
    f.nodeNames.value = p.nodeNames.join(", ");
    f.commandRegex.value = p.commandRegex;
    f.priority.value = p.priority;
    f.executionTime.value = p.executionTime;
  }
  $("#preview").hidden = true;
  showError("#form-error", null);
  $("#form-panel").hidden = false;
}

// The form as the original's flat body; empty rows are dropped as the original GUI does.
function formBody() {
  const f = $("#policy-form");
  const rows = (sel) => [...document.querySelectorAll(`${sel} .row`)].map((r) => [...r.querySelectorAll("input")].map((i) => i.value.trim()))
    .filter(([a]) => a !== "");
  const body = {
    nodeNames: f.nodeNames.value.split(",").map((s) => s.trim()).filter(Boolean),
    nodeSelectors: rows("#selectors").map(([key, value]) => ({ key, value })),
    draSelectors: rows("#dra").map(([deviceClass, attrs]) => ({
      deviceClass,
      attributes: attrs.split(",").map((s) => s.trim()).filter(Boolean).map((kv) => {
        const [key, ...v] = kv.split("=");
        return { key: key.trim(), value: v.join("=").trim() };
      }),
    })),
    commandRegex: f.commandRegex.value,
    priority: Number(f.priority.value),
    executionTime: Number(f.executionTime.value),
  };
  if (f.policyId.value) body.policyId = f.policyId.value;
  return body;
}

async function preview() {
  try {
    $("#preview").replaceChildren(previewView(await api.preview(formBody())));
    $("#preview").hidden = false;
    showError("#form-error", null);
  } catch (e) { showError("#form-error", e); }
}

async function save(ev) {
  ev.preventDefault();
  const body = formBody();
  try {
    const reply = body.policyId ? await api.update(body) : await api.create(body);
    // A policy that does not select this node has no intent: its warnings say why (issue 47).
    const notes = reply.intent ? [] : (reply.warnings || []);
    $("#notice").textContent = notes.join("; ");
    $("#notice").hidden = notes.length === 0;
    $("#form-panel").hidden = true;
    await refresh();
  } catch (e) { showError("#form-error", e); }
}

function confirmDelete(p) {
  const d = $("#confirm");
  $("#confirm-text").textContent = `Delete node policy ${p.id.slice(-8)} (${p.commandRegex})? Its threads go back to the default scheduler.`;
  d.returnValue = "";
  d.onclose = async () => {
    if (d.returnValue !== "ok") return;
    try { await api.remove(p.id); await refresh(); } catch (e) { showError("#error", e); }
  };
  d.showModal();
}

let source = null;
function connectEvents() {
  if (source) source.close();
  source = api.events();
  source.addEventListener("open", () => { $("#live").textContent = "live"; $("#live").className = "badge state-applied"; });
  // A busy node sends many changes: refresh at most every 300 ms.
  let pending = null;
  source.addEventListener("change", () => { if (!pending) pending = setTimeout(() => { pending = null; refresh(); }, 300); });
  source.addEventListener("error", () => { $("#live").textContent = "offline"; $("#live").className = "badge"; });
}

function start() {
  $("#token").value = token();
  $("#token").addEventListener("change", (e) => { setToken(e.target.value); connectEvents(); refresh(); });
  $("#refresh").addEventListener("click", refresh);
  $("#new-policy").addEventListener("click", () => openForm(null));
  $("#cancel").addEventListener("click", () => { $("#form-panel").hidden = true; });
  $("#preview-button").addEventListener("click", preview);
  $("#policy-form").addEventListener("submit", save);
  $("#task-filter").addEventListener("change", refresh);
  document.querySelector("[data-add=selector]").addEventListener("click", () => $("#selectors .rows").append(pairRow("selector")));
  document.querySelector("[data-add=dra]").addEventListener("click", () => $("#dra .rows").append(pairRow("dra")));
  if (token()) { connectEvents(); refresh(); }
}

start();
