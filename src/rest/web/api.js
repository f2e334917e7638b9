// The gateway's REST API, as the GUI uses it: every call carries the bearer token and unwraps
// the {"success", "data" | "error"} envelope (a failure throws an Error with the server's words).
const TOKEN_KEY = "claim2core-rest-token";

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
export function setToken(t) { sessionStorage.setItem(TOKEN_KEY, t); }

async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${token()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let env;
  try { env = await res.json(); } catch { throw new Error(`${method} ${path}: HTTP ${res.status}`); }
  if (!env.success) throw new Error(env.error || `HTTP ${res.status}`);
  return env.data ?? {};
}

export const api = {
  policies: () => call("GET", "/api/v1/node-scheduling-policies/self").then((d) => d.policies),
  intents: () => call("GET", "/api/v1/node-scheduling-intents/self").then((d) => d.intents),
  create: (p) => call("POST", "/api/v1/node-scheduling-policies", p),
  update: (p) => call("PUT", "/api/v1/node-scheduling-policies", p),
  remove: (id) => call("DELETE", "/api/v1/node-scheduling-policies", { policyId: id }),
  preview: (p) => call("POST", "/api/v1/preview", p),
  tasks: (comm) => call("GET", "/api/v1/tasks" + (comm ? `?comm=${encodeURIComponent(comm)}` : "")).then((d) => d.tasks),
  // {lineage, controller, decisions}: the controller acting on the task beside its lineage (issue 46).
  explain: (tid) => call("GET", `/api/v1/tasks/${tid}/explain`),
  decisions: () => call("GET", "/api/v1/decisions?limit=20"),
  health: () => call("GET", "/health"),
  // EventSource cannot send headers: the token goes in the query (same origin, TLS off loopback).
  events: () => new EventSource(`/api/v1/events?access_token=${encodeURIComponent(token())}`),
};
