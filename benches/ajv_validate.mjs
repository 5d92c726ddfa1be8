// Peer for benches/validate.py: validates a capacity repository's YAML files
// against capops' JSON Schemas with Ajv (draft 2020-12, schemas compiled once,
// one Node process), parsing the YAML with the `yaml` package. Shape only:
// Ajv knows nothing of references between documents, spans or MIG layouts.
//
//   node benches/ajv_validate.mjs SCHEMA_DIR GROUPS_JSON
//
// GROUPS_JSON: [["capacityrequest.schema.json", ["path", ...]], ...]. Needs
// ajv and yaml in NODE_PATH (validate.py installs them under target/bench-node).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.env.NODE_PATH || ".", "x.js"));
const Ajv2020 = require("ajv/dist/2020").default;
const YAML = require("yaml");

const [schemaDir, groupsFile] = process.argv.slice(2);
const groups = JSON.parse(fs.readFileSync(groupsFile, "utf8"));
const start = process.hrtime.bigint();
const ajv = new Ajv2020({ allErrors: true, strict: false });
let files = 0;
let docs = 0;
let invalid = 0;
for (const [schemaName, paths] of groups) {
  const schema = JSON.parse(fs.readFileSync(path.join(schemaDir, schemaName), "utf8"));
  const validate = ajv.compile(schema);
  for (const p of paths) {
    files += 1;
    for (const doc of YAML.parseAllDocuments(fs.readFileSync(p, "utf8"), { uniqueKeys: true })) {
      docs += 1;
      if (doc.errors.length > 0 || !validate(doc.toJS({ maxAliasCount: 100 }))) {
        invalid += 1;
      }
    }
  }
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ files, docs, invalid, seconds }));
process.exit(invalid > 0 ? 1 : 0);
