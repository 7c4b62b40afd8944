// Drives a compiled oh-bridge with vscode-jsonrpc over real pipes through
// the OpenHands golden cases (fixtures/openhands/*.jsonl): one bridge and
// one fresh workspace per file, lines in order, openhands/execute_action
// for each, the observation normalized and compared with the fixture.
// Usage: node openhands.cjs <oh-bridge binary> <fixtures/openhands dir> <temp dir>
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');

const [bin, fixtures, tmp] = process.argv.slice(2);
if (!bin || !fixtures || !tmp) {
  console.error('usage: node openhands.cjs <oh-bridge> <fixtures/openhands> <temp dir>');
  process.exit(2);
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/;
const INTERPRETER = /\[Jupyter Python interpreter: [^\]\n]*\]/g;

function normalize(obs, ws, problems) {
  if (typeof obs.id !== 'number') problems.push(`id ${obs.id} is not a number`);
  obs.id = '$ID';
  if (!TIMESTAMP.test(obs.timestamp)) problems.push(`timestamp ${obs.timestamp} is not a naive isoformat`);
  obs.timestamp = '$TIMESTAMP';
  const md = obs.extras && obs.extras.metadata;
  if (md) {
    for (const [k, ph] of [['username', '$USERNAME'], ['hostname', '$HOSTNAME'], ['py_interpreter_path', '$PY']]) {
      if (md[k] !== null && md[k] !== undefined) md[k] = ph;
    }
  }
  const fix = (v) => {
    if (typeof v === 'string') return v.replace(INTERPRETER, '[Jupyter Python interpreter: $PY]').split(ws).join('$WORKSPACE');
    if (Array.isArray(v)) return v.map(fix);
    if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) v[k] = fix(v[k]);
    }
    return v;
  };
  return fix(obs);
}

async function runFile(file) {
  const name = path.basename(file, '.jsonl');
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(tmp, name + '-')));
  const home = fs.mkdtempSync(path.join(tmp, 'home-'));
  const env = { ...process.env, HOME: home, NO_CHANGE_TIMEOUT_SECONDS: '1' };
  const child = spawn(bin, ['--stdio', '--workspace', ws, '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.listen();
  const results = [];
  try {
    await conn.sendRequest('initialize', { processId: process.pid, capabilities: {} });
    await conn.sendNotification('initialized', {});
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
    for (const line of lines) {
      const c = JSON.parse(line);
      const label = `${name}: ${c.name}`;
      try {
        if (c.setup) {
          for (const [rel, content] of Object.entries(c.setup.files || {})) {
            fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
            fs.writeFileSync(path.join(ws, rel), content);
          }
          if (c.setup.sh) execFileSync('bash', ['-c', c.setup.sh], { cwd: ws });
          if (c.setup.sleep_ms) await new Promise((r) => setTimeout(r, c.setup.sleep_ms));
        }
        const action = JSON.parse(JSON.stringify(c.action).split('$WORKSPACE').join(ws));
        const res = await conn.sendRequest('openhands/execute_action', { action });
        const problems = [];
        const got = JSON.stringify(normalize(res.observation, ws, problems));
        const want = JSON.stringify(c.observation);
        if (got !== want) problems.push(`want: ${want}\n  got:  ${got}`);
        results.push([label, problems.length ? new Error(problems.join('\n  ')) : null]);
      } catch (err) {
        results.push([label, err]);
      }
    }
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
  } catch (err) {
    results.push([`${name}: session`, new Error(`${err.message}\n${stderr}`)]);
  } finally {
    conn.dispose();
    child.kill();
  }
  return results;
}

async function main() {
  const files = fs.readdirSync(fixtures).filter((f) => f.endsWith('.jsonl')).sort().map((f) => path.join(fixtures, f));
  const all = (await Promise.all(files.map(runFile))).flat();
  let failed = 0;
  for (const [name, err] of all) {
    if (err) {
      failed++;
      console.log(`FAIL ${name}\n  ${err.message}`);
    } else {
      console.log(`ok   ${name}`);
    }
  }
  console.log(`${all.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => { console.error(err); process.exit(1); });
