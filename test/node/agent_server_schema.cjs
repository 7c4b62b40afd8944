// Checks what the agent-server stand-in recorded (--record) against the
// agent-server's own schema: the TypeScript types @openhands/typescript-client
// generates from agent-server 1.44.0's OpenAPI document
// (dist/generated/agent-server-schema.d.ts). Each request body the bridge or
// OpenHands' client sent, each answer and each event the stand-in gave
// becomes an object literal typed with its route's or kind's type, and tsc
// judges them: a missing required field, a field the type lacks, or a
// wrong type fails. A route the schema does not have fails too.
// Usage: node agent_server_schema.cjs <record.jsonl> <temp dir>
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const [recordFile, tmp] = process.argv.slice(2);
if (!recordFile || !tmp) {
  console.error('usage: node agent_server_schema.cjs <record.jsonl> <temp dir>');
  process.exit(2);
}

const { check, finish } = require('./report.cjs');

const pkg = path.join(__dirname, 'node_modules', '@openhands', 'typescript-client');
const schemaFile = path.join(pkg, 'dist', 'generated', 'agent-server-schema.d.ts');
// The generator named each discriminated union's members after pydantic's
// schema refs ('openhands__sdk__agent__agent__Agent-Output__1') where the
// wire has the class name ('Agent', as each member type itself says), so
// every such union would be `never`. Put the class names back.
const schema = fs.readFileSync(schemaFile, 'utf8')
  .replace(/'openhands__\w+?__([A-Za-z0-9]+)-(?:Input|Output)__1'/g, "'$1'");

// The operations: <Name><Method>Data = { ... url: '/api/...' }.
const ops = [];
for (const m of schema.matchAll(/^export type (\w+?)(Get|Post|Put|Patch|Delete)Data = \{([\s\S]*?)^\};/gm)) {
  const url = /url: '([^']+)'/.exec(m[3]);
  if (!url) continue;
  const params = (url[1].match(/\{/g) || []).length;
  const re = new RegExp('^' + url[1].replace(/\{[^}]+\}/g, '[^/]+') + '$');
  ops.push({ name: m[1] + m[2], method: m[2].toUpperCase(), url: url[1], re, params });
}
check('the schema lists the agent-server\'s operations', ops.length > 50, ops.length);
const hasType = (name) => new RegExp(`^export type ${name} = `, 'm').test(schema);

function findOp(method, p) {
  const found = ops.filter((o) => o.method === method && o.re.test(p));
  found.sort((a, b) => a.params - b.params); // a literal segment beats a parameter
  return found[0];
}

// Lines of check.ts, and which sample each line belongs to.
const dir = fs.mkdtempSync(path.join(tmp, 'schema-'));
fs.writeFileSync(path.join(dir, 'agent-server-schema.d.ts'), schema);
const lines = ["import type * as S from './agent-server-schema.js';",
  `import type { ServerInfo } from ${JSON.stringify(path.join(pkg, 'dist', 'types', 'base.js'))};`];
const owner = [null, null];
const samples = [];
const seen = new Set();
function sample(label, type, body) {
  const literal = JSON.stringify(body, null, 1);
  const key = type + literal;
  if (seen.has(key)) return;
  seen.add(key);
  const s = { label, errors: [] };
  samples.push(s);
  const text = `export const v${samples.length}: ${type} = ${literal};`.split('\n');
  for (const l of text) {
    lines.push(l);
    owner.push(s);
  }
}

const records = fs.readFileSync(recordFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const clientOf = (r) => (/^Go-http-client/.test(r.client) ? 'the bridge' : /node|undici|axios/i.test(r.client) || r.client === '' ? 'OpenHands\' client' : r.client);
const unknownRoutes = [];
const kinds = new Set();
let bridgeRequests = 0;
let clientRequests = 0;
for (const r of records) {
  if (r.type === 'event') {
    const kind = r.body.kind;
    kinds.add(kind);
    if (!hasType(kind)) {
      unknownRoutes.push(`event kind ${kind}`);
      continue;
    }
    sample(`event ${kind}`, `S.${kind}`, r.body);
    continue;
  }
  if (r.path === '/server_info') {
    sample('GET /server_info', 'ServerInfo', r.body);
    continue;
  }
  const op = findOp(r.method, r.path);
  if (!op) {
    unknownRoutes.push(`${r.method} ${r.path}`);
    continue;
  }
  if (r.type === 'request') {
    // OpenHands' client's requests are its own business (it sends
    // workspace {type: 'local'}, a field the server ignores); the bridge's
    // must match.
    if (clientOf(r) !== 'the bridge') {
      clientRequests++;
      continue;
    }
    bridgeRequests++;
    sample(`${clientOf(r)}'s ${r.method} ${op.url} body`, `S.${op.name}Data['body']`, r.body);
  } else if (r.status >= 200 && r.status < 300) {
    if (/SearchConversationEvents/.test(op.name)) {
      // Typed `unknown` in the schema (a JSONResponse): check the page's
      // shape and each event by its kind.
      sample(`${r.method} ${op.url} answer`, '{ items: Array<unknown>; next_page_id: string | null }', r.body);
      for (const e of r.body.items) if (hasType(e.kind)) sample(`event ${e.kind} (search)`, `S.${e.kind}`, e);
      continue;
    }
    sample(`${r.method} ${op.url} answer (${r.status})`, `S.${op.name}Responses[keyof S.${op.name}Responses]`, r.body);
  } else if (r.status === 422) {
    sample(`${r.method} ${op.url} 422`, 'S.HttpValidationError', r.body);
  }
}
check('every route and event kind is in the agent-server\'s schema', unknownRoutes.length === 0, [...new Set(unknownRoutes)]);
check('the record has the bridge\'s requests and OpenHands\' client\'s', bridgeRequests > 0 && clientRequests > 0, { bridgeRequests, clientRequests });
for (const k of ['ActionEvent', 'ObservationEvent', 'MessageEvent', 'ConversationStateUpdateEvent', 'SystemPromptEvent', 'UserRejectObservation', 'PauseEvent']) {
  check(`the record has a ${k}`, kinds.has(k));
}

fs.writeFileSync(path.join(dir, 'check.ts'), lines.join('\n') + '\n');
fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
  compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', types: [] },
  files: ['check.ts'],
}));
let out = '';
try {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
} catch (err) {
  out = String(err.stdout || '') + String(err.stderr || '');
}
const loose = [];
let current = null;
for (const l of out.split('\n')) {
  const m = /check\.ts\((\d+),\d+\): (error .*)$/.exec(l);
  if (m) {
    current = owner[Number(m[1]) - 1];
    if (current) current.errors.push(m[2]);
    else loose.push(l);
  } else if (current && l.trim()) {
    current.errors.push(l.trim());
  } else if (l.trim()) {
    loose.push(l);
  }
}
check('tsc ran', loose.length === 0, loose.join('\n'));
const byLabel = new Map();
for (const s of samples) {
  const b = byLabel.get(s.label) || { n: 0, errors: [] };
  b.n++;
  b.errors.push(...s.errors);
  byLabel.set(s.label, b);
}
for (const [label, b] of byLabel) {
  check(`${label} matches the schema (${b.n} checked)`, b.errors.length === 0, b.errors.slice(0, 8).join('\n     '));
}
finish();
