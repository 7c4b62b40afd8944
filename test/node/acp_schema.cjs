// Checks values against definitions of the ACP v1 schema of the current
// SDK (schema/v1/schema.json), as acp.cjs judges the bridge's messages,
// and more strictly: a field the definition does not declare is an
// error too (the schema lets unknown fields through, so a misspelt
// optional field would pass it silently).
//
// Usage: node acp_schema.cjs CASES.json
//
// CASES is [{"name", "def": a name under $defs, "value"}]. It prints each
// case's errors and exits 1 if any has one.
'use strict';

const fs = require('node:fs');
const Ajv2020 = require('ajv/dist/2020').default;

const schema = JSON.parse(fs.readFileSync(require.resolve('acp-sdk-current/schema/v1/schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema, 'acp');

// resolve follows a local $ref to its definition.
const resolve = (s) => (s && s.$ref ? schema.$defs[s.$ref.replace('#/$defs/', '')] : s);
// fits says whether v is of the schema node s (a part of the schema,
// whose references are read in it).
const fits = (s, v) => ajv.validate(JSON.parse(JSON.stringify(s).replaceAll('"#/$defs/', '"acp#/$defs/')), v);

// fields gathers the fields the schema node s declares for the object v:
// its own, its allOf parts', and those of the first anyOf or oneOf branch
// v fits. open says whether it takes fields it does not name.
function fields(s, v, into = { props: {}, open: false }) {
  s = resolve(s);
  if (s === undefined) return into;
  for (const [k, x] of Object.entries(s.properties || {})) (into.props[k] ||= []).push(x);
  if (s.additionalProperties === true) into.open = true;
  for (const part of s.allOf || []) fields(part, v, into);
  for (const key of ['anyOf', 'oneOf']) {
    const branch = (s[key] || []).find((b) => fits(b, v));
    if (branch !== undefined) fields(branch, v, into);
  }
  return into;
}

// undeclared lists the fields of v, at any depth, that the schema node s
// does not declare.
function undeclared(s, v, at) {
  if (v === null || typeof v !== 'object') return [];
  if (Array.isArray(v)) {
    const items = [];
    const gather = (n) => {
      n = resolve(n);
      if (n === undefined) return;
      if (n.items !== undefined) items.push(n.items);
      for (const part of [...(n.allOf || []), ...(n.anyOf || []), ...(n.oneOf || [])]) gather(part);
    };
    gather(s);
    return v.flatMap((x, i) => items.flatMap((it) => undeclared(it, x, `${at}[${i}]`)));
  }
  const { props, open } = fields(s, v);
  const out = [];
  for (const [k, x] of Object.entries(v)) {
    if (props[k] === undefined) {
      if (!open) out.push(`${at}.${k} is not declared`);
      continue;
    }
    for (const p of props[k]) out.push(...undeclared(p, x, `${at}.${k}`));
  }
  return [...new Set(out)];
}

const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let failed = 0;
for (const c of cases) {
  const def = schema.$defs[c.def];
  if (def === undefined) {
    console.log(`${c.name}: the schema has no definition ${c.def}`);
    failed++;
    continue;
  }
  const validate = ajv.compile({ $ref: `acp#/$defs/${c.def}` });
  const errors = validate(c.value) ? [] : validate.errors.map((e) => `${e.instancePath || '(top)'} ${e.message}`);
  errors.push(...undeclared(def, c.value, c.def));
  if (errors.length > 0) {
    failed++;
    console.log(`${c.name} (${c.def}) ${JSON.stringify(c.value)}:\n  ${errors.join('\n  ')}`);
  }
}
console.log(`${cases.length - failed} of ${cases.length} fit their definitions`);
process.exit(failed > 0 ? 1 : 0);
