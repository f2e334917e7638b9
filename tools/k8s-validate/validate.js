// Validates Kubernetes manifests against the Kubernetes OpenAPI schemas (npm kubernetes-models,
// locked in package-lock.json; @kubernetes-models/prometheus-operator for the PodMonitor), and
// custom resources against the openAPIV3Schema of the CRDs found among the manifests.
//
//   node validate.js MANIFEST.yaml... [--examples EXAMPLE.yaml...] [--invalid INVALID.yaml...]
//
// Every document of a MANIFEST must be a kind the models know and pass their validation (types,
// required fields, formats; the models do not reject fields the schema does not define, so a
// misspelt optional field is caught only by deploy_kustomize_test.py's explicit checks). Every --examples document must pass its CRD's schema, every
// --invalid document must fail it. Prints one line per document; exit 1 on any failure.
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const Ajv = require("ajv");

const groups = {
  "kubernetes-models": path.dirname(require.resolve("kubernetes-models/package.json")),
  "@kubernetes-models/prometheus-operator": path.dirname(require.resolve("@kubernetes-models/prometheus-operator/package.json")),
};

// kubernetes-models lays classes out as <group>/<version>/<Kind> ("v1/Namespace" for the core group).
function modelClass(apiVersion, kind) {
  for (const [pkg, dir] of Object.entries(groups)) {
    const rel = path.join(apiVersion, kind + ".js");
    if (fs.existsSync(path.join(dir, rel))) {
      const mod = require(path.join(dir, rel));
      return mod[kind] || mod.default;
    }
  }
  return null;
}

function docsOf(file) {
  return yaml.loadAll(fs.readFileSync(file, "utf8")).filter((d) => d !== null && d !== undefined);
}

function nameOf(d) {
  return `${d.kind}/${(d.metadata && d.metadata.name) || "?"}`;
}

const args = process.argv.slice(2);
const lists = { manifests: [], examples: [], invalid: [] };
let mode = "manifests";
for (const a of args) {
  if (a === "--examples") mode = "examples";
  else if (a === "--invalid") mode = "invalid";
  else lists[mode].push(a);
}
if (lists.manifests.length === 0) {
  console.error("usage: node validate.js MANIFEST.yaml... [--examples FILE...] [--invalid FILE...]");
  process.exit(2);
}

let failed = 0;
const report = (ok, line) => {
  console.log((ok ? "ok   " : "FAIL ") + line);
  if (!ok) failed++;
};

const crds = {}; // "<group>/<version>/<Kind>" -> openAPIV3Schema
for (const file of lists.manifests) {
  for (const d of docsOf(file)) {
    const what = `${path.basename(file)} ${nameOf(d)} (${d.apiVersion})`;
    const Model = modelClass(d.apiVersion || "", d.kind || "");
    if (!Model) {
      report(false, `${what}: no Kubernetes schema for apiVersion ${d.apiVersion}, kind ${d.kind}`);
      continue;
    }
    const problems = [];
    try {
      new Model(d).validate();
    } catch (e) {
      problems.push(String(e.message || e).split("\n").slice(0, 8).join("; "));
    }
    report(problems.length === 0, what + (problems.length ? ": " + problems.join("; ") : ""));
    if (d.kind === "CustomResourceDefinition" && d.spec) {
      for (const v of d.spec.versions || [])
        crds[`${d.spec.group}/${v.name}/${d.spec.names.kind}`] = v.schema && v.schema.openAPIV3Schema;
    }
  }
}

// Custom resources against their CRD's structural schema (OpenAPI v3 keywords ajv does not know,
// x-kubernetes-*, are ignored: strict false).
const ajv = new Ajv({ strict: false, allErrors: true });
// Kubernetes' integer formats: the type and the schema's minimum/maximum already bound them.
for (const f of ["int32", "int64"]) ajv.addFormat(f, true);
// RFC 3339 as Kubernetes writes times (status.nodes[].lastTransitionTime).
ajv.addFormat("date-time", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
const validators = {};
function crdCheck(d) {
  const key = `${d.apiVersion}/${d.kind}`;
  if (!(key in crds)) return [`no CRD among the manifests defines ${key}`];
  validators[key] = validators[key] || ajv.compile(crds[key]);
  const v = validators[key];
  return v(d) ? [] : v.errors.map((e) => `${e.instancePath || "/"} ${e.message}`);
}
for (const file of lists.examples)
  for (const d of docsOf(file)) {
    const errs = crdCheck(d);
    report(errs.length === 0, `example ${path.basename(file)} ${nameOf(d)} passes its CRD schema` + (errs.length ? ": " + errs.join("; ") : ""));
  }
for (const file of lists.invalid)
  for (const d of docsOf(file)) {
    const errs = crdCheck(d);
    report(errs.length > 0, `invalid ${path.basename(file)} ${nameOf(d)} is refused by its CRD schema` + (errs.length ? ` (${errs[0]})` : ": accepted"));
  }

console.log(failed ? `${failed} failures` : "all valid");
process.exit(failed ? 1 : 0);
