// Drives a compiled oh-bridge with vscode-jsonrpc over real pipes:
// initialize, bridge/info, a cancelled request, protocol errors, shutdown,
// exit. Usage: node lifecycle.cjs <oh-bridge binary> <workspace dir> <folder dir>
'use strict';
const { spawn } = require('node:child_process');
const { pathToFileURL } = require('node:url');
const assert = require('node:assert/strict');
const rpc = require('vscode-jsonrpc/node');

const [bin, workspace, folder] = process.argv.slice(2);
if (!bin || !workspace || !folder) {
  console.error('usage: node lifecycle.cjs <oh-bridge> <workspace> <folder>');
  process.exit(2);
}

const results = [];
async function check(name, fn) {
  try {
    await fn();
    results.push([name, null]);
  } catch (err) {
    results.push([name, err]);
  }
}

async function main() {
  const child = spawn(bin, ['--stdio', '--workspace', workspace], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin));
  conn.listen();

  await check('initialize answers with serverInfo and protocolVersion', async () => {
    const res = await conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'vscode-jsonrpc-test', version: '1' },
      workspaceFolders: [{ uri: pathToFileURL(folder).href, name: 'folder' }],
      capabilities: { workspace: { applyEdit: true }, window: { workDoneProgress: true } },
    });
    assert.equal(res.serverInfo.name, 'oh-bridge');
    assert.equal(res.protocolVersion, 1);
    assert.equal(typeof res.capabilities, 'object');
    await conn.sendNotification('initialized', {});
  });

  await check('bridge/info reports roots from the flag and the client, and the pid', async () => {
    const info = await conn.sendRequest('bridge/info');
    assert.deepEqual(info.roots, [workspace, folder]);
    assert.equal(info.pid, child.pid);
    assert.ok(info.uptimeMs >= 0);
    assert.equal(info.inFlight, 1);
  });

  await check('a cancelled request answers -32800', async () => {
    const source = new rpc.CancellationTokenSource();
    const started = Date.now();
    const pending = conn.sendRequest('bridge/wait', { ms: 30000 }, source.token);
    setTimeout(() => source.cancel(), 50);
    await assert.rejects(pending, (err) => {
      assert.equal(err.code, -32800, `got ${err.code} ${err.message}`);
      return true;
    });
    assert.ok(Date.now() - started < 5000, 'cancellation took too long');
  });

  await check('an unknown method answers -32601 naming it', async () => {
    await assert.rejects(conn.sendRequest('no/such/method'), (err) => {
      assert.equal(err.code, -32601);
      assert.match(err.message, /no\/such\/method/);
      return true;
    });
  });

  await check('bad params answer -32602 naming the field', async () => {
    await assert.rejects(conn.sendRequest('bridge/wait', { ms: 'soon' }), (err) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /"ms"/);
      return true;
    });
  });

  await check('shutdown answers null, then requests are refused', async () => {
    assert.equal(await conn.sendRequest('shutdown'), null);
    await assert.rejects(conn.sendRequest('bridge/info'), (err) => {
      assert.equal(err.code, -32600);
      assert.match(err.message, /shutting down/);
      return true;
    });
  });

  await check('exit after shutdown ends the process with code 0', async () => {
    await conn.sendNotification('exit');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 5000))]);
    assert.equal(code, 0);
  });

  conn.dispose();
  let failed = 0;
  for (const [name, err] of results) {
    if (err) {
      failed++;
      console.log(`FAIL ${name}\n  ${String(err.stack || err).split('\n').join('\n  ')}`);
    } else {
      console.log(`ok   ${name}`);
    }
  }
  if (failed) console.log('bridge stderr:\n' + stderr);
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => { console.error(err); process.exit(1); });
