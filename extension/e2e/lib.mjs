// What every scenario of the end-to-end run (e2e.mjs) shares: the checks
// and their results, the processes started, the helpers and servers, and
// ways to read and drive a VS Code window.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

export const { CODE_SERVER, VSIX, REPO } = process.env;

export const OUT_DIR = process.env.OUT_DIR ?? path.join(REPO ?? '.', 'test-output', 'e2e');

if (!CODE_SERVER || !VSIX || !REPO) {
  console.error('set CODE_SERVER, VSIX and REPO');
  process.exit(2);
}

fs.mkdirSync(OUT_DIR, { recursive: true });

export const results = [];

export const children = [];

export function check(name, ok, detail = '') {
  results.push({ name, ok, detail });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok || !detail ? '' : `\n     ${detail}`}`);
}

export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  await new Promise((r) => srv.close(r));
  return port;
}

export function start(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.push(child);
  child.lines = [];
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      child.lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  child.stderrText = '';
  child.stderr.on('data', (d) => (child.stderrText += d));
  return child;
}

export async function until(what, fn, ms = 30_000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what} (last: ${String(last).slice(0, 300)})`);
}

// The real agent-server, its scripted model and the relay's cloud come
// from small Go commands of the repository
// (internal/realserver/cmd/realserver, internal/scriptedllm/cmd/scriptedllm,
// internal/relayrig/cmd/relayrig), which share their code with the Go
// tests' own, and the cloud's relay is the bridge's own binary: built
// once into the run's directory.
export function buildHelpers(dir) {
  fs.mkdirSync(dir, { recursive: true });
  return new Promise((resolve, reject) => {
    const go = spawn('go', ['build', '-o', dir, './internal/realserver/cmd/realserver', './internal/scriptedllm/cmd/scriptedllm',
      './internal/relayrig/cmd/relayrig', './cmd/oh-bridge'], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
    go.on('error', reject);
    go.on('exit', (code) => (code === 0 ? resolve({ realserver: path.join(dir, 'realserver'), scriptedllm: path.join(dir, 'scriptedllm'),
      relayrig: path.join(dir, 'relayrig'), ohBridge: path.join(dir, 'oh-bridge') })
      : reject(new Error(`go build of the e2e's helpers exited ${code}`))));
  });
}

// startRelayRig builds the relay's topology (internal/relayrig/cmd/relayrig):
// a "cloud" network namespace with the real agent-server 1.58.2, the relay
// and nginx in front of both under /s/abc/, and a "laptop" namespace that
// refuses every inbound connection. Its ready promise is what it printed
// once all answered: cloud, laptop (the namespaces' names), agentUrl,
// relayUrl, key, secret, inboundRefused; or { missing } when this machine
// cannot build it (not root, no iproute2, nftables or nginx).
export function startRelayRig(helpers, log) {
  const child = startHelper(helpers.relayrig, ['-bin', helpers.ohBridge, '-log', log]);
  child.ready = Promise.race([
    until('the relay\'s cloud and laptop', () => {
      const l = child.lines.find((x) => x.startsWith('{'));
      return l && JSON.parse(l);
    }, 240_000),
    child.exited.then(({ code }) => (code === 3 ? { missing: child.stderrText.trim() }
      : Promise.reject(new Error(`the relay's cloud did not start (exit ${code}): ${child.stderrText.slice(-3000)}`)))),
  ]);
  child.ready.catch(() => undefined);
  return child;
}

// inNetns is a command and its arguments run in a network namespace.
export const inNetns = (ns, cmd, args) => ['ip', ['netns', 'exec', ns, cmd, ...args]];

// A helper that stops what it runs when its standard input closes: it is
// a pipe that closes with this process, however it ends; finish() asks it
// (SIGTERM) and waits.
export function startHelper(cmd, args) {
  const child = start(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  child.exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  child.graceful = true;
  return child;
}

// startRealServer starts the real agent-server (1.58.2 unless args name
// another lock of test/openhands; `task openhands` installs them) on
// 127.0.0.1 in a fresh directory, as the Go tests do (internal/realserver):
// a clean environment and nothing that reaches past loopback. Its ready
// promise is what it printed once it answered /ready: url, key, venv,
// startupMs.
export function startRealServer(helpers, log, args = []) {
  const child = startHelper(helpers.realserver, ['-log', log, ...args]);
  const t0 = Date.now();
  child.ready = Promise.race([
    until('the real agent-server to answer /ready', () => {
      const l = child.lines.find((x) => x.startsWith('{'));
      return l && { ...JSON.parse(l), sinceSpawnMs: Date.now() - t0 };
    }, 240_000),
    child.exited.then(({ code }) => { throw new Error(`the real agent-server did not start (exit ${code}): ${child.stderrText.slice(-3000)}`); }),
  ]);
  child.ready.catch(() => undefined);
  return child;
}

// The tools the real server's agent is offered in each conversation the
// bridge starts: the bridge's three over MCP, and the SDK's finish and think.
export const bridgeTools = ['file_editor', 'task_tracker', 'terminal', 'finish', 'think'];

// startModel serves a script of the agent's model (the turns of
// internal/scriptedllm/cmd/scriptedllm: tools, content, toolCalls) and
// resolves once it listens: url (the LLM's base_url), requests() (each
// request it got: the tool results it carried), failures() (requests it
// did not expect), done().
//
// netns, when given, is the network namespace it listens in (the relay's
// cloud, where the agent-server that asks it runs).
export async function startModel(helpers, dir, name, turns, netns) {
  const file = path.join(dir, `${name}-model.json`);
  fs.writeFileSync(file, JSON.stringify({ turns }));
  const child = startHelper(...(netns === undefined ? [helpers.scriptedllm, ['-script', file]] : inNetns(netns, helpers.scriptedllm, ['-script', file])));
  const url = await until(`the scripted model ${name}`, () => {
    const l = child.lines.find((x) => x.startsWith('URL '));
    if (l === undefined && child.exitCode !== null) throw new Error(`the scripted model exited: ${child.stderrText}`);
    return l && l.slice(4);
  });
  return {
    url,
    requests: () => child.lines.filter((l) => l.startsWith('REQUEST ')).map((l) => JSON.parse(l.slice(l.indexOf('{')))),
    failures: () => child.lines.filter((l) => l.startsWith('FAIL ')),
    done: () => child.lines.includes('DONE'),
    stop: () => finishHelper(child),
  };
}

export async function finishHelper(child) {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.race([child.exited, sleep(20_000)]);
}

// project makes a workspace folder of the run, for a step's window of its
// own: a .vscode folder for its settings, and notes.txt ("hello") for an
// agent's edit to land in.
export function project(tmp, name) {
  const ws = path.join(tmp, name);
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  const notes = path.join(ws, 'notes.txt');
  fs.writeFileSync(notes, 'hello\n');
  return { ws, notes };
}

// codeServerArgs start code-server on 127.0.0.1:port with the run's
// extensions and a user data folder, opening ws, with nothing that
// reaches past loopback.
export const codeServerArgs = (port, extDir, userData, ws) => ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
  '--disable-update-check', '--disable-workspace-trust', '--extensions-dir', extDir, '--user-data-dir', userData, ws];

// chromiumArgs are the browser's, headless as root, with nothing that
// reaches past loopback.
export const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

// realSettings are a workspace's settings for a conversation on the real
// server: its URL, and the scripted model as the agent's LLM (an OpenAI
// API at base_url; its key is the one "Set LLM API Key" stored, llmKey).
export const realSettings = (serverUrl, model, more = {}) => ({ ...(serverUrl === undefined ? {} : { 'openhands.serverUrl': serverUrl }),
  'openhands.llm.model': 'openai/oh-scripted', 'openhands.llm.baseUrl': model.url, ...more });

// llmKey gives the window the model's key with "OpenHands: Set LLM API
// Key", as the person does: the server's agent is refused by its LLM
// client without one. code-server keeps an extension's secrets in the
// window's memory (it gives VS Code no secret storage with a remote), so
// each window is told, and a reload forgets it.
export const llmKey = (page) => setSecret(page, 'OpenHands: Set LLM API Key', 'sk-e2e-scripted');

// setSecret runs a command that asks for a key in a password box, and types it.
export async function setSecret(page, title, value) {
  await runCommand(page, title);
  await page.waitForSelector('.quick-input-widget input[type="password"]', { state: 'visible' });
  await page.keyboard.type(value);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget', { state: 'hidden' });
}

// workbench reads a VS Code window: its status bar, and the text editor in
// its editor area (the Chat panel's input is a Monaco editor too; Monaco
// renders spaces as U+00A0).
export function workbench(page) {
  return {
    status: () => page.locator('.statusbar').innerText(),
    editorText: async () => (await page.locator('.editor-group-container .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' '),
  };
}

// openFile opens a workspace file with Quick Open, so an agent's edit has
// an open buffer to land in.
export async function openFile(page, editorText, name, text) {
  await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(name);
  await page.waitForSelector('.quick-input-list .monaco-list-row', { state: 'visible' });
  await page.keyboard.press('Enter');
  await until(`${name} in the editor`, async () => (await editorText()).includes(text));
}

// terminalShows waits until a terminal of the window shows text; it
// returns what the terminals show, or the error.
export function terminalShows(page, text, what) {
  return until(what, async () => {
    const all = (await page.locator('.xterm-rows').allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');
    return all.includes(text) && all;
  }).catch((e) => String(e));
}

// editorShows waits until the editor has text; it returns the editor's
// text, or the error.
export function editorShows(editorText, text, what) {
  return until(what, async () => {
    const t = await editorText();
    return t.includes(text) && t;
  }).catch((e) => String(e));
}

// runCommand runs a command from the command palette.
export async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(title);
  await page.waitForSelector('.quick-input-list .monaco-list-row', { state: 'visible' });
  await page.keyboard.press('Enter');
}

// allowWhile clicks "Allow once" on each permission prompt until done()
// settles, and returns the prompts' texts.
export async function allowWhile(page, pending) {
  const prompts = [];
  let settled = false;
  pending.finally(() => { settled = true; }).catch(() => undefined);
  while (!settled) {
    const allow = page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Allow once' });
    if ((await allow.count()) > 0 && (await allow.first().isVisible().catch(() => false))) {
      prompts.push((await page.locator('.monaco-dialog-box').innerText()).replace(/\u00a0/g, ' '));
      await allow.first().click().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { result: await pending, prompts };
}

// localServerSetup makes the directory where an installed `agent-server`
// goes on the extension host's PATH (localServer puts the real one there)
// and holds port 8000 with a server that is not an agent-server (Agent
// Canvas's ingress, or a server the person runs there, would be found).
export function localServerSetup(tmp) {
  // Where `uv tool install openhands-agent-server` puts it (a link to the
  // tool environment's script), on the PATH a login shell's profile
  // gives: VS Code's server takes the extension host's environment from
  // the person's login shell.
  const bin = path.join(tmp, '.local', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(tmp, '.profile'), 'PATH="$HOME/.local/bin:$PATH"\n');
  const holds = {};
  for (const p of [8000]) {
    const srv = net.createServer((sock) => sock.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    srv.on('error', (err) => { holds[p] = err; });
    srv.listen(p, '127.0.0.1');
    holds[p] = srv;
  }
  return { bin, holds };
}

export const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
