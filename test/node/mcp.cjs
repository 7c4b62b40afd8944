// Drives the compiled oh-bridge with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk), a client written independently of the
// bridge, over both transports:
//   - `oh-bridge mcp` on stdio, as an agent that spawns its tool servers runs it;
//   - the editor bridge's Streamable HTTP endpoint, opened with mcp/start by
//     an editor played by vscode-jsonrpc, which also checks that the MCP
//     calls land in the editor's session: its buffers, its terminals, its
//     permission prompts, its undo history.
// Usage: node mcp.cjs <oh-bridge binary> <fixtures/openhands-v1/tools.json> <temp dir>
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const rpc = require('vscode-jsonrpc/node');

const [bin, snapshotFile, tmp] = process.argv.slice(2);
if (!bin || !snapshotFile || !tmp) {
  console.error('usage: node mcp.cjs <oh-bridge> <tools.json> <temp dir>');
  process.exit(2);
}
const snapshot = JSON.parse(fs.readFileSync(snapshotFile, 'utf8')).tools;

const { check, finish, sleep } = require('./report.cjs');
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

// A workspace, and a PATH whose python is known, so the texts are exact.
function setup(name) {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(tmp, `${name}-`)));
  const binDir = fs.mkdtempSync(path.join(tmp, 'bin-'));
  const python = path.join(binDir, 'python');
  fs.writeFileSync(python, '#!/bin/sh\n', { mode: 0o755 });
  const home = fs.mkdtempSync(path.join(tmp, 'home-'));
  const env = { ...process.env, HOME: home, PATH: `${binDir}:/usr/local/bin:/usr/bin:/bin`, NO_CHANGE_TIMEOUT_SECONDS: '2' };
  return { ws, python, env };
}

function done(out, ws, python, code = 0) {
  return `${out}\n[The command completed with exit code ${code}.]\n[Current working directory: ${ws}]\n` +
    `[Python interpreter: ${python}]\n[Command finished with exit code ${code}]`;
}

// The checks both transports must pass.
async function toolChecks(label, client, { ws, python }) {
  const { tools } = await client.listTools();
  check(`${label}: tools/list names the three OpenHands tools`,
    isDeepStrictEqual(tools.map((t) => t.name).sort(), snapshot.map((t) => t.name).sort()), tools.map((t) => t.name));
  for (const want of snapshot) {
    const got = tools.find((t) => t.name === want.name) || {};
    // The SDK's schema validation rebuilds objects, so key order is not
    // what came over the wire; the Go tests check that order.
    check(`${label}: ${want.name}'s input schema equals openhands-tools'`,
      isDeepStrictEqual(got.inputSchema, want.inputSchema), { got: got.inputSchema });
    check(`${label}: ${want.name}'s annotations equal openhands-tools'`,
      isDeepStrictEqual(got.annotations, want.annotations), { got: got.annotations, want: want.annotations });
    check(`${label}: ${want.name} has a description`, typeof got.description === 'string' && got.description.length > 100);
  }

  let r = await client.callTool({ name: 'terminal', arguments: { command: 'echo mcp-$((6*7)) && pwd' } });
  check(`${label}: terminal runs a command`, !r.isError && text(r) === done(`mcp-42\n${ws}`, ws, python), text(r));
  r = await client.callTool({ name: 'terminal', arguments: { command: 'cd sub 2>/dev/null || mkdir sub && cd sub && export MARK=kept' } });
  r = await client.callTool({ name: 'terminal', arguments: { command: 'echo $MARK $(pwd)' } });
  check(`${label}: the terminal keeps cwd and variables between calls`,
    text(r) === done(`kept ${ws}/sub`, `${ws}/sub`, python), text(r));
  r = await client.callTool({ name: 'terminal', arguments: { command: 'cd .. && false' } });
  check(`${label}: an exit code`, !r.isError && text(r) === done('', ws, python, 1), text(r));

  const file = path.join(ws, 'hello.py');
  r = await client.callTool({ name: 'file_editor', arguments: { command: 'create', path: file, file_text: 'print("hi")\n' } });
  check(`${label}: file_editor creates`, !r.isError && text(r) === `File created successfully at: ${file}`, text(r));
  r = await client.callTool({ name: 'file_editor', arguments: { command: 'str_replace', path: file, old_str: '"hi"', new_str: '"hello"' } });
  check(`${label}: file_editor replaces`, !r.isError && text(r) === `The file ${file} has been edited. ` +
    `Here's the result of running \`cat -n\` on a snippet of ${file}:\n     1\tprint("hello")\n` +
    'Review the changes and make sure they are as expected. Edit the file again if necessary.', text(r));
  check(`${label}: the edit is on disk`, fs.readFileSync(file, 'utf8') === 'print("hello")\n', fs.readFileSync(file, 'utf8'));
  r = await client.callTool({ name: 'file_editor', arguments: { command: 'undo_edit', path: file } });
  check(`${label}: file_editor undoes`, !r.isError && fs.readFileSync(file, 'utf8') === 'print("hi")\n', text(r));

  r = await client.callTool({ name: 'file_editor', arguments: { command: 'view', path: path.join(ws, 'nope.txt') } });
  check(`${label}: a tool failure is an isError result with OpenHands' text`, r.isError === true &&
    text(r) === `Invalid \`path\` parameter: ${ws}/nope.txt. The path ${ws}/nope.txt does not exist. Please provide a valid path.`, r);
  r = await client.callTool({ name: 'terminal', arguments: { command: 'echo extra', wait_for_previous: true } });
  check(`${label}: an argument the tool does not know is ignored`, !r.isError && text(r) === done('extra', ws, python), r);
  r = await client.callTool({ name: 'terminal', arguments: { command: 'ls', timeout: 'soon' } });
  check(`${label}: a wrongly typed argument is an isError result`, r.isError === true &&
    text(r).startsWith("Error validating tool 'terminal': 1 validation error for TerminalAction\ntimeout\n" +
      "  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='soon'"), r);
  r = await client.callTool({ name: 'task_tracker', arguments: { command: 'plan', task_list: [{ title: 'Wire MCP', status: 'in_progress' }] } });
  check(`${label}: task_tracker plans`, text(r) === 'Task list has been updated with 1 item(s).', text(r));
  r = await client.callTool({ name: 'task_tracker', arguments: { command: 'view' } });
  check(`${label}: task_tracker shows the plan`, text(r) === '# Task List\n\n1. 🔄 Wire MCP', text(r));

  // A long command: progress while it runs, then cancelled by the client,
  // which interrupts it.
  const ticks = path.join(ws, 'ticks');
  const progress = [];
  const ac = new AbortController();
  const start = Date.now();
  let rejected;
  try {
    await client.callTool({ name: 'terminal', arguments: { command: `for i in $(seq 1 200); do echo tick $i; echo $i >> ${ticks}; sleep 0.2; done`, timeout: 120 } },
      undefined, {
        signal: ac.signal,
        timeout: 120000,
        onprogress: (p) => {
          progress.push(p);
          if (progress.length === 4) ac.abort('enough');
        },
      });
  } catch (err) {
    rejected = err;
  }
  check(`${label}: a long command reports progress`, progress.length >= 4 &&
    progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress) &&
    progress.some((p) => /^tick \d+$/.test(p.message || '')), progress);
  check(`${label}: cancelling the call rejects it`, rejected !== undefined && Date.now() - start < 30000, String(rejected));
  // The next call runs once the stop is over (Ctrl-C, a second Ctrl-C
  // if the first fell between two commands of the loop, then signals):
  // from then on the loop must not tick again.
  r = await client.callTool({ name: 'terminal', arguments: { command: 'echo free' } });
  check(`${label}: the terminal is free after the cancel`, text(r) === done('free', ws, python), text(r));
  const after = fs.readFileSync(ticks, 'utf8').trim().split('\n').length;
  await sleep(1000);
  const later = fs.readFileSync(ticks, 'utf8').trim().split('\n').length;
  check(`${label}: notifications/cancelled interrupted the command`, later === after && after < 200, { after, later });

  // An agent's next call comes 15–30 ms after its notifications/cancelled,
  // here at once, while a command that takes a second to exit after
  // Ctrl-C (a test runner, a server) is still stopping: it waits for the
  // stop, then runs, and is never "NOT executed".
  const slow = new AbortController();
  let slowErr;
  try {
    await client.callTool({ name: 'terminal', arguments: { command: `bash -c "trap 'sleep 1; exit 3' INT; printf 'st%sing\\n' opp; sleep 60 & wait; touch ${path.join(ws, 'ran-on')}"`, timeout: 120 } },
      undefined, { signal: slow.signal, timeout: 120000, onprogress: (p) => { if (/stopping/.test(p.message || '')) slow.abort('gave up'); } });
  } catch (err) {
    slowErr = err;
  }
  r = await client.callTool({ name: 'terminal', arguments: { command: 'echo right-after' } });
  check(`${label}: the call right after a cancel runs once the slow command stopped`, slowErr !== undefined && text(r) === done('right-after', ws, python), text(r));
  check(`${label}: the cancelled command did not run on`, !fs.existsSync(path.join(ws, 'ran-on')));
}

async function overStdio() {
  const s = setup('stdio');
  const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--workspace', s.ws, '--log-level', 'error'], env: s.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'mcp-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  check('stdio: the server is oh-bridge', client.getServerVersion().name === 'oh-bridge', client.getServerVersion());
  try {
    await toolChecks('stdio', client, s);
  } finally {
    await client.close();
  }
  check('stdio: nothing on stderr at --log-level error', stderr === '', stderr);
}

async function overHTTP() {
  const s = setup('http');
  const doc = path.join(s.ws, 'open.txt');
  fs.writeFileSync(doc, 'line on disk\n');
  const child = spawn(bin, ['--stdio', '--workspace', s.ws, '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'pipe'], env: s.env });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const edits = [];
  const asked = [];
  // Commands are allowed always at the first question; edits and reads
  // are asked every time, until a test says otherwise.
  let answer = (call) => (call.kind === 'execute' ? 'allow_always' : 'allow_once');
  const mirrored = {};
  conn.onRequest('workspace/applyEdit', (p) => { edits.push(p); return { applied: true }; });
  conn.onRequest('session/request_permission', (p) => { asked.push(p); return { outcome: { outcome: 'selected', optionId: answer(p.toolCall) } }; });
  conn.onNotification('terminal/did_output', (p) => { mirrored[p.terminalId] = (mirrored[p.terminalId] || '') + p.data; });
  conn.listen();
  let client;
  try {
    const init = await conn.sendRequest('initialize', {
      processId: process.pid,
      capabilities: {
        workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } },
        terminal: { streaming: true },
        permissions: { requestPermission: true },
      },
    });
    check('http: initialize advertises MCP', init.capabilities.mcp && init.capabilities.mcp.http === true, init.capabilities.mcp);
    await conn.sendNotification('initialized', {});
    const uri = `file://${doc}`;
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 3, text: 'unsaved line\n' } });

    const started = await conn.sendRequest('mcp/start', {});
    check('http: mcp/start gives a 127.0.0.1 URL and a token',
      /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(started.url) && started.token.length >= 32, started);
    const again = await conn.sendRequest('mcp/start', {});
    check('http: a second mcp/start answers the same endpoint', again.url === started.url && again.token === started.token);

    client = new Client({ name: 'mcp-sdk-http-test', version: '2.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(started.url), {
      requestInit: { headers: { Authorization: `Bearer ${started.token}` } },
    }));
    await toolChecks('http', client, s);

    // One session: the calls above ran in the editor's session.
    check('http: edits are asked about each time', asked.filter((a) => a.toolCall.kind === 'edit').length === 3,
      asked.map((a) => a.toolCall.title));
    check('http: the person was asked before the first command', asked.length >= 1 &&
      asked[0].toolCall.kind === 'execute' && asked[0].toolCall.title === 'run `echo mcp-$((6*7)) && pwd`' &&
      asked[0].agent === 'mcp-sdk-http-test 2.0.0', asked[0]);
    check('http: "allow always" stops the questions for commands', asked.filter((a) => a.toolCall.kind === 'execute').length === 1,
      asked.map((a) => a.toolCall.title));
    check('http: the agent\'s terminal is mirrored to the editor', (mirrored['agent-1'] || '').includes('mcp-42') &&
      (mirrored['agent-1'] || '').includes('tick 3'), Object.keys(mirrored));

    const before = edits.length;
    let r = await client.callTool({ name: 'file_editor', arguments: { command: 'str_replace', path: doc, old_str: 'unsaved line', new_str: 'edited line' } });
    check('http: str_replace saw the unsaved buffer', !r.isError && text(r).includes('     1\tedited line'), text(r));
    const edit = edits[before];
    const change = edit && edit.edit.documentChanges && edit.edit.documentChanges[0];
    check('http: the edit went to the open buffer as workspace/applyEdit', edits.length === before + 1 && change &&
      change.textDocument.uri === uri && change.textDocument.version === 3 &&
      isDeepStrictEqual(change.edits, [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } }, newText: 'edit' }]), edit);
    check('http: the file on disk is untouched', fs.readFileSync(doc, 'utf8') === 'line on disk\n');
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 4 }, contentChanges: [{ text: 'edited line\n' }] });
    const undo = await conn.sendRequest('edit/undo', { path: doc });
    check('http: the editor\'s edit/undo undoes the agent\'s edit (one undo history)', undo.content === 'unsaved line\n', undo);

    answer = () => 'reject_once';
    r = await client.callTool({ name: 'file_editor', arguments: { command: 'create', path: path.join(s.ws, 'refused.txt'), file_text: 'x' } });
    check('http: a rejected action answers OpenHands\' rejection', r.isError === true &&
      text(r) === 'Action rejected: User rejected the action' && !fs.existsSync(path.join(s.ws, 'refused.txt')), r);

    const status = await conn.sendRequest('mcp/status', {});
    check('http: mcp/status lists the session and its agent', status.serving === true && status.sessions === 1 &&
      status.agents.length === 1 && status.agents[0].terminalId === 'agent-1' && status.agents[0].rejected === 1, status);
    await client.close();
    client = undefined;
    await conn.sendRequest('mcp/stop', {});
    let refused = false;
    try {
      await fetch(started.url, { method: 'POST', headers: { Authorization: `Bearer ${started.token}` } });
    } catch {
      refused = true;
    }
    check('http: after mcp/stop nothing listens', refused);
  } finally {
    if (client) await client.close();
    await conn.sendRequest('shutdown').catch(() => {});
    conn.sendNotification('exit').catch(() => {});
    conn.dispose();
  }
  await new Promise((r) => child.on('exit', r));
  check('http: the bridge logged no error', stderr === '', stderr);
}

(async () => {
  try {
    await overStdio();
    await overHTTP();
  } catch (err) {
    check('no exception', false, err && err.stack);
  }
  finish();
})();
