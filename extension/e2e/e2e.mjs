// End to end in a real VS Code (code-server 4.139, VS Code 1.139) driven by
// Debian's chromium through playwright-core: install the packaged
// extension, open a workspace with a file open in the editor, and check
// that the status bar shows the bridge, disconnected. Run "OpenHands:
// Serve Tools to Agents (MCP)" and act as an MCP agent with the official
// MCP TypeScript SDK: its command shows in a terminal of its own, and its
// edit lands in the open buffer, each after the user allowed it.
//
// The conversations run on the real OpenHands agent-server 1.58.2 (`task
// openhands` installs it), one server for the run, started at once so its
// start overlaps code-server's; its agent's model is scripted
// (internal/scriptedllm), a script per step. Open a project set up for
// that server in confirmation mode and start a conversation whose agent
// works with the bridge's tools. Then, in the OpenHands conversation view,
// start one by typing a message, answer each question the server's agent
// waits on, on the card of the command or edit it asks about (with the
// keyboard, then the mouse), see the agent's reply and its command's card,
// and stop a long command; reload the window, and reopen the conversation
// from History. A long conversation (2,000 updates: 200 commands of 1 MB
// output each, 100 edits) is fed to the view through the extension's
// test-only entry (src/testFeed.ts, which says why not through a server):
// the time to render an update, the webview's memory, and the time to open
// the view and to restore it after a reload, written to
// OUT_DIR/long-conversation.json. Last, with no server configured, the
// bridge offers to start the installed agent-server (the real one),
// starts it with consent and stops it with the window; then an Agent
// Canvas-shaped stack is found with no question. Screenshots go to
// OUT_DIR, with the shared server's log (agent-server.log).
//
// Env: CODE_SERVER (launcher), VSIX, REPO (the oh-bridge checkout), OUT_DIR;
// E2E_ONLY=view, long or local runs that step alone.
import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

const { CODE_SERVER, VSIX, REPO } = process.env;
const OUT_DIR = process.env.OUT_DIR ?? path.join(REPO ?? '.', 'test-output', 'e2e');
if (!CODE_SERVER || !VSIX || !REPO) {
  console.error('set CODE_SERVER, VSIX and REPO');
  process.exit(2);
}
fs.mkdirSync(OUT_DIR, { recursive: true });

const results = [];
const children = [];
function check(name, ok, detail = '') {
  results.push({ name, ok, detail });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok || !detail ? '' : `\n     ${detail}`}`);
}

async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  await new Promise((r) => srv.close(r));
  return port;
}

function start(cmd, args, opts = {}) {
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

async function until(what, fn, ms = 30_000) {
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

// The real agent-server and its scripted model come from two small Go
// commands of the repository (internal/realserver/cmd/realserver,
// internal/scriptedllm/cmd/scriptedllm), which share their code with the
// Go tests' own: built once into the run's directory.
function buildHelpers(dir) {
  fs.mkdirSync(dir, { recursive: true });
  return new Promise((resolve, reject) => {
    const go = spawn('go', ['build', '-o', dir, './internal/realserver/cmd/realserver', './internal/scriptedllm/cmd/scriptedllm'], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
    go.on('error', reject);
    go.on('exit', (code) => (code === 0 ? resolve({ realserver: path.join(dir, 'realserver'), scriptedllm: path.join(dir, 'scriptedllm') })
      : reject(new Error(`go build of the e2e's helpers exited ${code}`))));
  });
}

// A helper that stops what it runs when its standard input closes: it is
// a pipe that closes with this process, however it ends; finish() asks it
// (SIGTERM) and waits.
function startHelper(cmd, args) {
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
function startRealServer(helpers, log, args = []) {
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
const bridgeTools = ['file_editor', 'task_tracker', 'terminal', 'finish', 'think'];

// startModel serves a script of the agent's model (the turns of
// internal/scriptedllm/cmd/scriptedllm: tools, content, toolCalls) and
// resolves once it listens: url (the LLM's base_url), requests() (each
// request it got: the tool results it carried), failures() (requests it
// did not expect), done().
async function startModel(helpers, dir, name, turns) {
  const file = path.join(dir, `${name}-model.json`);
  fs.writeFileSync(file, JSON.stringify({ turns }));
  const child = startHelper(helpers.scriptedllm, ['-script', file]);
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

async function finishHelper(child) {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.race([child.exited, sleep(20_000)]);
}

// realSettings are a workspace's settings for a conversation on the real
// server: its URL, and the scripted model as the agent's LLM (an OpenAI
// API at base_url; its key is the one "Set LLM API Key" stored, llmKey).
const realSettings = (serverUrl, model, more = {}) => ({ ...(serverUrl === undefined ? {} : { 'openhands.serverUrl': serverUrl }),
  'openhands.llm.model': 'openai/oh-scripted', 'openhands.llm.baseUrl': model.url, ...more });

// llmKey gives the window the model's key with "OpenHands: Set LLM API
// Key", as the person does: the server's agent is refused by its LLM
// client without one. code-server keeps an extension's secrets in the
// window's memory (it gives VS Code no secret storage with a remote), so
// each window is told, and a reload forgets it.
const llmKey = (page) => setSecret(page, 'OpenHands: Set LLM API Key', 'sk-e2e-scripted');

// setSecret runs a command that asks for a key in a password box, and types it.
async function setSecret(page, title, value) {
  await runCommand(page, title);
  await page.waitForSelector('.quick-input-widget input[type="password"]', { state: 'visible' });
  await page.keyboard.type(value);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget', { state: 'hidden' });
}

async function main() {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'oh-e2e-')));
  const ws = path.join(tmp, 'project');
  const userData = path.join(tmp, 'user-data');
  const extDir = path.join(tmp, 'extensions');
  fs.mkdirSync(ws);
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  const notes = path.join(ws, 'notes.txt');
  fs.writeFileSync(notes, 'hello\n');

  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'openhands.bridge.args': ['--record', path.join(OUT_DIR, 'bridge-session.jsonl')],
    'workbench.startupEditor': 'none',
    'files.autoSave': 'off',
    'security.workspace.trust.enabled': false,
    'terminal.integrated.gpuAcceleration': 'off',
    'terminal.integrated.enablePersistentSessions': false,
    'workbench.tips.enabled': false,
    'extensions.autoCheckUpdates': false,
  }));
  execFileSync(CODE_SERVER, ['--extensions-dir', extDir, '--user-data-dir', userData, '--install-extension', VSIX], { stdio: 'inherit' });

  // The long conversation's updates, for the extension's test-only feed
  // (only the window of that folder takes them).
  const longWs = path.join(tmp, 'project-long');
  fs.mkdirSync(longWs);
  const feed = path.join(longWs, 'feed.jsonl');

  // The real agent-server the conversations run on, started now: its 10
  // to 40 s of start pass while code-server starts and the MCP step runs.
  // It takes no session key, as a server started without
  // OH_SESSION_API_KEYS_0 does on loopback: code-server forgets the key
  // "Set API Key" stores when the window reloads (see llmKey), and the
  // view's step reloads its window. Agent Canvas's is the other: 1.49.1,
  // the version Canvas 1.20.0 starts, on Canvas's port 18000 with a
  // session key (its key file is written when the step comes: until then
  // the bridge has no reason to look there).
  const helpers = await buildHelpers(path.join(tmp, 'bin'));
  const real = startRealServer(helpers, path.join(OUT_DIR, 'agent-server.log'), ['-no-key']);
  const canvasServer = startRealServer(helpers, path.join(OUT_DIR, 'canvas-agent-server.log'), ['-lock', 'agent-server-1.49', '-port', '18000']);

  // Where an installed `agent-server` goes on the PATH the extension's
  // bridge sees, for the bridge to offer and start; and the default port
  // held by something else, so that nothing this machine runs is found
  // instead.
  const local = localServerSetup(tmp);
  const port = await freePort();
  const cs = start(CODE_SERVER, ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--extensions-dir', extDir, '--user-data-dir', userData, ws],
  { env: { ...process.env, HOME: tmp, OH_BRIDGE_TEST_FEED: feed, PATH: `${local.bin}:${process.env.PATH}`,
    OH_BRIDGE_SERVER_URL: '', OH_BRIDGE_SESSION_API_KEY: '', LOCAL_BACKEND_API_KEY: '' } });
  await until('code-server', async () => (await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' })).status < 400, 60_000);

  const browser = (globalThis.browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--enable-precise-memory-info'],
  }));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const ready = async (server, name) => {
    const s = await server.ready;
    console.log(`the real agent-server ${name} answered /ready ${s.sinceSpawnMs} ms after it was started (its own start: ${s.startupMs} ms)`);
    return s;
  };
  // Agent Canvas's server is awaited by its step alone, which fails alone if it did not start.
  const canvas = ready(canvasServer, '1.49.1 (Agent Canvas\'s, on 18000)');
  canvas.catch(() => undefined);
  const servers = async () => ({ srv: await ready(real, '1.58.2'), canvas });
  const ctx = { tmp, port, helpers, local };
  try {
    if (process.env.E2E_ONLY === 'long') return await longConversation(browser, { port, ws: longWs, feed });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    const { status, editorText } = workbench(page);
    // "OpenHands" alone is the spinner while the bridge starts.
    const started = await until('the extension to start the bridge', async () => /OpenHands: /.test(await status()) && (await status()), 60_000);
    check('the status bar shows the bridge, disconnected', /OpenHands: Disconnected/.test(started), started);
    // E2E_ONLY=view (or local) runs the conversation view's (or the local
    // server's) step alone, when working on it.
    if (process.env.E2E_ONLY === 'view') return await conversationView(browser, { ...ctx, ...(await servers()) });
    if (process.env.E2E_ONLY === 'local') return await localServer(browser, { ...ctx, ...(await servers()) });

    await openFile(page, editorText, 'notes.txt', 'hello');
    await page.screenshot({ path: path.join(OUT_DIR, '1-before-connect.png') });

    await mcpAgent(page, notes, editorText);
    Object.assign(ctx, await servers());
    await agentServer(browser, ctx);
    await conversationView(browser, ctx);
    await longConversation(browser, { port, ws: longWs, feed });
    await localServer(browser, ctx);
  } catch (err) {
    // Each window as it was: failure-1.png is the first.
    const pages = browser.contexts().flatMap((c) => c.pages());
    for (const [i, p] of pages.entries()) await p.screenshot({ path: path.join(OUT_DIR, `failure-${i + 1}.png`) }).catch(() => undefined);
    throw err;
  } finally {
    await browser.close();
  }
}

// workbench reads a VS Code window: its status bar, and the text editor in
// its editor area (the Chat panel's input is a Monaco editor too; Monaco
// renders spaces as U+00A0).
function workbench(page) {
  return {
    status: () => page.locator('.statusbar').innerText(),
    editorText: async () => (await page.locator('.editor-group-container .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' '),
  };
}

// openFile opens a workspace file with Quick Open, so an agent's edit has
// an open buffer to land in.
async function openFile(page, editorText, name, text) {
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
function terminalShows(page, text, what) {
  return until(what, async () => {
    const all = (await page.locator('.xterm-rows').allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');
    return all.includes(text) && all;
  }).catch((e) => String(e));
}

// editorShows waits until the editor has text; it returns the editor's
// text, or the error.
function editorShows(editorText, text, what) {
  return until(what, async () => {
    const t = await editorText();
    return t.includes(text) && t;
  }).catch((e) => String(e));
}

// runCommand runs a command from the command palette.
async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(title);
  await page.waitForSelector('.quick-input-list .monaco-list-row', { state: 'visible' });
  await page.keyboard.press('Enter');
}

// allowWhile clicks "Allow once" on each permission prompt until done()
// settles, and returns the prompts' texts.
async function allowWhile(page, pending) {
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

// mcpAgent: the user serves the tools over MCP; an agent (the official MCP
// TypeScript SDK) connects with the URL and token the bridge gave and
// works in the user's VS Code.
async function mcpAgent(page, notes, editorText) {
  await runCommand(page, 'OpenHands: Serve Tools to Agents (MCP)');
  const choices = await until('the configurations to copy', async () => {
    const rows = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    return rows.some((c) => c.includes('Claude Code')) && rows;
  }).catch(() => []);
  check('the MCP command offers each agent\'s configuration', choices.some((c) => c.includes('Claude Code')) && choices.some((c) => c.includes('OpenHands agent')), choices.join(' | '));
  await page.keyboard.press('Escape');
  // The recording of the bridge's session has mcp/start's answer.
  const endpoint = await until('mcp/start in the recording', () => {
    for (const line of fs.readFileSync(path.join(OUT_DIR, 'bridge-session.jsonl'), 'utf8').split('\n')) {
      if (line.includes('"token"') && line.includes('127.0.0.1')) {
        const r = JSON.parse(line).msg.result;
        if (r && r.url && r.token) return r;
      }
    }
    return undefined;
  });
  const sdk = path.join(REPO, 'test', 'node', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'cjs', 'client');
  const { Client } = await import(path.join(sdk, 'index.js'));
  const { StreamableHTTPClientTransport } = await import(path.join(sdk, 'streamableHttp.js'));
  const client = new Client({ name: 'e2e-agent', version: '1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } } }));
  try {
    const ran = await allowWhile(page, client.callTool({ name: 'terminal', arguments: { command: 'echo mcp-output-$((6*7))' } }));
    const text = ran.result.content.map((c) => c.text).join('');
    check('the MCP agent\'s command ran, with OpenHands\' text', text.startsWith('mcp-output-42\n[The command completed with exit code 0.]'), text);
    check('the user was asked, naming the agent', ran.prompts.length === 1 && ran.prompts[0].includes('e2e-agent 1.0 wants to run `echo mcp-output'), JSON.stringify(ran.prompts));
    const terminalText = await terminalShows(page, 'mcp-output-42', 'the MCP agent\'s terminal');
    check('the MCP agent\'s command shows in a terminal of VS Code', terminalText.includes('mcp-output-42'), terminalText.slice(0, 500));
    const named = await until('the terminal named after the agent', async () => {
      const labels = await page.locator('.terminal-tabs-entry, .single-terminal-tab').allTextContents();
      return labels.some((l) => l.includes('OpenHands tools: e2e-agent 1.0')) && labels;
    }).catch((e) => String(e));
    check('that terminal is named after the agent', Array.isArray(named), String(named));

    const edit = await allowWhile(page, client.callTool({ name: 'file_editor', arguments: { command: 'str_replace', path: notes, old_str: 'hello', new_str: 'hello from the MCP agent' } }));
    check('the MCP agent\'s edit answered OpenHands\' text', !edit.result.isError && edit.result.content[0].text.startsWith(`The file ${notes} has been edited.`), JSON.stringify(edit.result));
    const edited = await editorShows(editorText, 'hello from the MCP agent', 'the MCP edit in the editor');
    check('the MCP agent\'s edit landed in the open buffer', edited.includes('hello from the MCP agent'), edited);
    check('the disk still has the saved text', fs.readFileSync(notes, 'utf8') === 'hello\n', fs.readFileSync(notes, 'utf8'));
    await page.screenshot({ path: path.join(OUT_DIR, '4-mcp-agent.png') });
  } finally {
    await client.close();
  }
}

// agentServer: the user opens a project whose settings point at the real
// OpenHands agent-server in confirmation mode (AlwaysConfirm), and starts
// a conversation with the command. The server's agent (its model
// scripted) works with the bridge's MCP tools: the server holds each
// action until it is confirmed, and the bridge puts it to the user once
// (the MCP call that follows is not asked again); its command shows in a
// terminal, its edit lands in the open buffer, and the conversation
// channel and the status bar follow it. (A second folder, because
// code-server does not notice a user settings file changed under it.)
async function agentServer(browser, { tmp, port, helpers, srv }) {
  const ws = path.join(tmp, 'project-agent-server');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  const notes = path.join(ws, 'notes.txt');
  fs.writeFileSync(notes, 'hello\n');
  const model = await startModel(helpers, tmp, 'agent-server', [
    { tools: bridgeTools, content: 'Say hello.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo agent-output-$((6*7))', summary: 'say hello' } }] },
    { tools: bridgeTools, toolCalls: [{ name: 'file_editor', arguments: { command: 'str_replace', path: notes, old_str: 'hello', new_str: 'hello from the agent-server agent' } }] },
    { tools: bridgeTools, toolCalls: [{ name: 'finish', arguments: { message: 'Done in VS Code.' } }] },
  ]);
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify(realSettings(srv.url, model, { 'openhands.confirmationMode': true,
    'openhands.bridge.args': ['--record', path.join(OUT_DIR, 'agent-server-bridge-session.jsonl')] })));
  // A window of its own: leaving the first one would ask about its
  // unsaved buffer.
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const { status, editorText } = workbench(page);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await until('the bridge of the new window', async () => /OpenHands: Disconnected/.test(await status()), 60_000);
  await llmKey(page);
  await openFile(page, editorText, 'notes.txt', 'hello');

  await runCommand(page, 'OpenHands: Start Conversation');
  await until('the task input box', async () => (await page.locator('.quick-input-widget').innerText()).includes('What should the OpenHands agent do?'));
  await page.keyboard.type('Say hello, then sign the notes.');
  await page.keyboard.press('Enter');
  const done = until('the agent to finish', () => model.done() || model.failures().length > 0, 180_000);
  const { prompts } = await allowWhile(page, done.catch(() => undefined));
  check('agent-server: the real server\'s model was asked what the script expects', model.failures().length === 0 && model.done(), model.failures().join('\n'));
  check('agent-server: the user was asked once per action, as OpenHands', prompts.length === 2 && prompts[0].includes('OpenHands wants to run `echo agent-output') &&
    prompts[1].includes('OpenHands') && prompts[1].includes('str_replace'), JSON.stringify(prompts));
  const results = model.requests().flatMap((r) => r.toolResults);
  check('agent-server: the real server\'s agent got both results from the bridge\'s tools', results.length === 2 && results[0].includes('agent-output-42') &&
    results[1].includes('has been edited'), results.join('\n').slice(0, 600));
  const terminalText = await terminalShows(page, 'agent-output-42', 'the agent\'s command in a terminal');
  check('agent-server: the agent\'s command shows in a terminal of VS Code', terminalText.includes('agent-output-42'), terminalText.slice(0, 500));
  const edited = await editorShows(editorText, 'hello from the agent-server agent', 'the agent\'s edit in the editor');
  check('agent-server: the agent\'s edit landed in the open buffer', edited.includes('hello from the agent-server agent'), edited);
  check('agent-server: the disk still has the saved text', fs.readFileSync(notes, 'utf8') === 'hello\n', fs.readFileSync(notes, 'utf8'));
  await runCommand(page, 'OpenHands: Show Conversation');
  const conversation = await until('the conversation channel', async () => {
    const t = (await page.content()).replace(/&nbsp;|\u00a0/g, ' ');
    // The channel renders its last lines only.
    return t.includes('Agent finished: Done in VS Code.') && t.includes('Agent edits (str_replace): ') && t;
  }).catch((e) => String(e));
  check('agent-server: the conversation channel shows what the agent did and said', !conversation.startsWith('Error'), conversation.slice(0, 300));
  const finished = await until('Done in the status bar', async () => /OpenHands: Done/.test(await status()) && (await status())).catch((e) => String(e));
  check('agent-server: the status bar says the agent is done', /OpenHands: Done/.test(finished), finished);
  await page.screenshot({ path: path.join(OUT_DIR, '5-agent-server.png') });
  await model.stop();
}

// conversationView: the user opens the OpenHands view, types a task in
// its message box and answers each question the real server's agent
// waits on (AlwaysConfirm) on the card of the call it asks about: the
// command's with the keyboard (the focus moves to the question), the
// edit's, which shows the diff it proposes, with the mouse. The view shows
// the message, the agent's command with its output and exit code, its
// edit, and the agent's reply. A second message starts a long command, and
// Stop interrupts the running turn. The window reloads and the
// conversation comes back from the server's events; History lists it and
// reopens it.
async function conversationView(browser, { tmp, port, helpers, srv }) {
  const ws = path.join(tmp, 'project-view');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  const notes = path.join(ws, 'notes.txt');
  fs.writeFileSync(notes, 'hello\n');
  // No turn after the long command: Stop ends the run, and a request
  // after it fails the script.
  const model = await startModel(helpers, tmp, 'view', [
    { tools: bridgeTools, content: 'Print the answer.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo view-output-$((6*7))', summary: 'print the answer' } }] },
    { tools: bridgeTools, toolCalls: [{ name: 'file_editor', arguments: { command: 'str_replace', path: notes, old_str: 'hello', new_str: 'hello from the view' } }] },
    { tools: bridgeTools, content: 'The command printed **view-output-42**.' },
    { tools: bridgeTools, toolCalls: [{ name: 'terminal', arguments: { command: 'sleep 30; echo never', summary: 'sleep' } }] },
  ]);
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify(realSettings(srv.url, model, { 'openhands.confirmationMode': true,
    'openhands.bridge.args': ['--record', path.join(OUT_DIR, 'view-bridge-session.jsonl')] })));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const { status } = workbench(page);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await until('the bridge of the view\'s window', async () => /OpenHands: Disconnected/.test(await status()), 60_000);
  await llmKey(page);

  await runCommand(page, 'OpenHands: Open Conversation View');
  // The webview's document is two iframes down.
  const view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  const input = view.locator('#input');
  await input.waitFor({ state: 'visible', timeout: 30_000 });
  const label = await view.locator('#state').innerText();
  check('view: it shows the connection state', label === 'Not connected', label);
  await input.click();
  await page.keyboard.type('Say hello from the view.');
  await page.keyboard.press('Enter');

  // Every question shows on a card while the view is visible: count any
  // modal that showed instead.
  let modals = 0;
  const noModal = async () => {
    if (await page.locator('.monaco-dialog-box').isVisible().catch(() => false)) modals++;
  };
  const cardText = (sel) => view.locator(sel).allInnerTexts().then((t) => t.join('\n---\n'));

  // The command's question, on the command's card; the focus moves to it
  // and Y answers it.
  const commandCard = view.locator('.card.tool', { hasText: 'echo view-output' });
  const asked = await until('the question on the command\'s card', async () => {
    await noModal();
    return (await commandCard.locator('.question.open').count()) === 1 && (await commandCard.first().innerText());
  }, 60_000).catch((e) => String(e));
  check('view: the command\'s question sits on its card, with the command, before it runs', asked.includes('echo view-output-$((6*7))') &&
    asked.includes('wants to run') && asked.includes('Needs you') && !/Exit \d/.test(asked) && (await view.locator('.card.permission').count()) === 0, asked);
  const question = commandCard.locator('.question.open');
  const a11y = await question.evaluate((q) => ({
    focused: document.activeElement === q,
    role: q.getAttribute('role'),
    label: document.getElementById(q.getAttribute('aria-labelledby') ?? '')?.textContent ?? '',
    keys: document.getElementById(q.getAttribute('aria-describedby') ?? '')?.textContent ?? '',
    shortcuts: Array.from(q.querySelectorAll('button')).map((b) => `${b.getAttribute('aria-keyshortcuts')}=${b.textContent}`),
  })).catch((e) => ({ error: String(e) }));
  check('view: the focus moved to the question, a group labelled by its words, its keys announced', a11y.focused === true && a11y.role === 'group' &&
    a11y.label.includes('Permission question:') && /Y.*allow once.*A.*always allow commands.*N.*reject/.test(a11y.keys) &&
    a11y.shortcuts.length === 3 && a11y.shortcuts[0].startsWith('Y=Allow once'), JSON.stringify(a11y));
  await page.screenshot({ path: path.join(OUT_DIR, '6-view-question.png') });
  // Keys pressed as the focus arrives are not taken for answers.
  await new Promise((r) => setTimeout(r, 500));
  await page.keyboard.press('y');
  const answered = await until('the command\'s card to record the answer', async () => {
    await noModal();
    const t = await commandCard.first().innerText();
    return t.includes('You allowed it once') && /Exit 0/.test(t) && (await commandCard.locator('.question.open').count()) === 0 && t;
  }, 30_000).catch((e) => String(e));
  check('view: Y allowed it; the card records "You allowed it once" and the command ran', answered.includes('You allowed it once') && /Exit 0/.test(answered), answered);
  await page.screenshot({ path: path.join(OUT_DIR, '6b-view-answered.png') });

  // The edit's question, on the edit's card, which shows the diff the edit
  // proposes before it runs.
  const editCard = view.locator('.card.tool.tool-edit');
  const proposal = await until('the question on the edit\'s card', async () => {
    await noModal();
    return (await editCard.locator('.question.open').count()) === 1 && (await editCard.first().innerText());
  }, 60_000).catch((e) => String(e));
  const proposedLines = await editCard.locator('.diff.proposed .diff-lines').allInnerTexts().then((t) => t.join('\n')).catch(() => '');
  check('view: the edit\'s question sits on its card, under the diff it proposes', proposal.includes('proposed') && proposal.includes('notes.txt') &&
    proposedLines.includes('-hello') && proposedLines.includes('+hello from the view') && proposal.includes('Always allow edits'), `${proposal}\n${proposedLines}`);
  await editCard.first().scrollIntoViewIfNeeded().catch(() => undefined);
  await page.screenshot({ path: path.join(OUT_DIR, '6c-view-edit-question.png') });
  await editCard.locator('.question.open button[data-option="allow_always"]').click();
  const edited = await until('the edit\'s card to record the answer and the edit', async () => {
    await noModal();
    const t = await editCard.first().innerText();
    return t.includes('You allowed it, and always for edits') && !t.includes('proposed') && (await editCard.locator('button[data-action="revert"]').count()) === 1 && t;
  }, 30_000).catch((e) => String(e));
  check('view: the mouse allowed the edit always; the card records it and shows the edit\'s own diff', edited.includes('always for edits') && edited.includes('+hello from the view'), edited);
  await page.screenshot({ path: path.join(OUT_DIR, '6d-view-edit-answered.png') });

  const replied = await until('the agent\'s reply in the view', async () => {
    await noModal();
    const agent = await cardText('.card.message.agent');
    const tools = await cardText('.card.tool');
    return agent.includes('view-output-42') && /Exit 0/.test(tools) && { agent, tools };
  }, 90_000).catch((e) => ({ error: String(e) }));
  const output = await until('the command\'s output in its card', async () => {
    const t = await cardText('.card.tool pre.output');
    return t.includes('view-output-42') && t;
  }, 10_000).catch((e) => String(e));
  const user = await cardText('.card.message.user').catch(() => '');
  check('view: the typed message started the conversation and shows as the user\'s', user.includes('Say hello from the view.'), user);
  check('view: the permission questions were answered on their cards, with no modal', modals === 0, JSON.stringify({ modals }));
  check('view: the agent\'s reply shows, rendered', !replied.error && (await view.locator('.card.message.agent strong', { hasText: 'view-output-42' }).count()) === 1, JSON.stringify(replied).slice(0, 600));
  check('view: the command\'s card shows the command and its exit code', !replied.error && replied.tools.includes('echo view-output-$((6*7))') && /Exit 0/.test(replied.tools), JSON.stringify(replied).slice(0, 600));
  check('view: the command\'s card shows its output', output.includes('view-output-42'), output);
  await page.screenshot({ path: path.join(OUT_DIR, '6e-view-reply.png') });

  // The rest of the questions: the mouse allows each once.
  const answerInline = async () => {
    await noModal();
    const allow = view.locator('.question.open button[data-option="allow_once"]');
    if ((await allow.count()) > 0) await allow.first().click().catch(() => undefined);
  };
  await input.click();
  await page.keyboard.type('Now sleep a while.');
  await page.keyboard.press('Enter');
  const sleeping = view.locator('.card.tool', { hasText: 'sleep 30' });
  const running = await until('the long command running', async () => {
    await answerInline();
    return (await sleeping.count()) > 0 && (await sleeping.first().innerText()).includes('Running') && !(await view.locator('#stop').isDisabled());
  }, 60_000).catch((e) => String(e));
  check('view: the long command shows as running, and Stop is enabled', running === true, String(running));
  await page.screenshot({ path: path.join(OUT_DIR, '7-view-long-command.png') });
  const sleepers = await until('the long command\'s process', () => { const p = processesIn(ws, ['sleep', '30']); return p.length > 0 && p; }, 10_000).catch(() => []);
  const stopAt = Date.now();
  await view.locator('#stop').click();
  const stopped = await until('the command interrupted', async () => {
    const t = await sleeping.first().locator('.badge').innerText();
    return /Stopped|Exit 1\d\d|Failed/.test(t) && t;
  }, 25_000).catch((e) => String(e));
  const shown = await sleeping.first().locator('pre.output').allInnerTexts().then((t) => t.join('\n'));
  check('view: Stop interrupted the command well before it would end', /Stopped|Exit 1\d\d|Failed/.test(stopped) && !/^never$/m.test(shown) && Date.now() - stopAt < 25_000,
    `${stopped}: ${shown}`);
  const header = await until('the paused state', async () => {
    const t = await view.locator('#state').innerText();
    return /Paused/.test(t) && t;
  }, 15_000).catch((e) => String(e));
  check('view: the header says the agent is paused', /Paused/.test(header), header);
  // The card says so; the person's terminal must agree: the command's
  // process ends with the turn, not 30 s later.
  const ended = await until('the long command\'s process to end', () => sleepers.length > 0 && sleepers.every((pid) => !alive(pid)), 10_000).catch((e) => String(e));
  check('view: Stop ended the command in the agent\'s terminal too', ended === true, `${JSON.stringify(sleepers)}: ${ended}`);
  await page.screenshot({ path: path.join(OUT_DIR, '8-view-stopped.png') });
  const asks = model.requests();
  check('view: the real server\'s agent got the bridge\'s results, and asked its model nothing after Stop', asks.length === 4 && model.failures().length === 0 &&
    asks[1].toolResults.join('\n').includes('view-output-42') && asks[2].toolResults.join('\n').includes('has been edited'),
  JSON.stringify({ requests: asks, failures: model.failures() }).slice(0, 1500));

  // Reopening the window restores the conversation from the server's
  // events: a new extension host, a new bridge, the same conversation.
  await page.reload();
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  // The view comes back open with the window; open it if it did not.
  const reopened = await page.waitForSelector('iframe.webview.ready', { timeout: 20_000 }).then(() => true, () => false);
  if (!reopened) {
    await until('the extension after the reload', async () => /OpenHands:/.test(await status()), 60_000);
    await runCommand(page, 'OpenHands: Open Conversation View');
  }
  const again = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  const restored = await until('the conversation restored in the view', async () => {
    const users = (await again.locator('.card.message.user').allInnerTexts()).join('\n');
    const agent = (await again.locator('.card.message.agent').allInnerTexts()).join('\n');
    const tools = (await again.locator('.card.tool').allInnerTexts()).join('\n');
    return users.includes('Say hello from the view.') && users.includes('Now sleep a while.') && agent.includes('view-output-42') &&
      tools.includes('echo view-output-$((6*7))') && tools.includes('view-output-42') && { users, agent };
  }, 60_000).catch((e) => String(e));
  check('view: reopening the window restores the conversation from the server\'s events', typeof restored === 'object', String(restored));
  // The person's answers are not in the server's events: the view kept them.
  const keptAnswers = await until('the answers on the restored cards', async () => {
    const t = (await again.locator('.card.tool .question.answered').allInnerTexts()).join('\n');
    return t.includes('You allowed it once') && t.includes('always for edits') && t;
  }, 20_000).catch((e) => String(e));
  check('view: the answers to its questions show on the restored cards', keptAnswers.includes('You allowed it once') && keptAnswers.includes('always for edits'), keptAnswers);
  // Every action was answered and ran before the reload, and the agent is
  // paused: nothing is asked again. (An answer to a question asked again
  // would reach the server as a confirmation, and an acceptance makes the
  // agent-server run the paused agent.)
  const askedAgain = await again.locator('.question.open').allInnerTexts().catch((e) => [String(e)]);
  check('view: the restored conversation asks nothing again', askedAgain.length === 0, askedAgain.join('\n---\n'));
  await page.screenshot({ path: path.join(OUT_DIR, '9-view-restored.png') });

  // New leaves the conversation; History lists this workspace's
  // conversations, and one reopens with its history replayed.
  await again.locator('#new').click();
  const emptied = await until('the view to empty for a new conversation', async () =>
    (await again.locator('article.card').count()) === 0 && /Not connected/.test(await again.locator('#state').innerText()) &&
    (await again.locator('#input').getAttribute('placeholder')).includes('start a conversation'), 20_000).catch((e) => String(e));
  check('view: New leaves the conversation; the next message would start another', emptied === true, String(emptied));
  await again.locator('#history').click();
  const listed = await until('the earlier conversations', async () => {
    const items = await again.locator('#conversations .history-item').allInnerTexts();
    return items.length > 0 && items;
  }, 20_000).catch((e) => [String(e)]);
  check('view: History lists the workspace\'s conversation, titled by its first message', listed.length === 1 && listed[0].includes('Say hello from the view.') && /ago|just now/.test(listed[0]),
    JSON.stringify(listed));
  await page.screenshot({ path: path.join(OUT_DIR, '9b-view-history.png') });
  await again.locator('#conversations .history-item').first().click();
  const reopenedFromList = await until('the conversation reopened from the list', async () => {
    const users = (await again.locator('.card.message.user').allInnerTexts()).join('\n');
    const answers = (await again.locator('.card.tool .question.answered').allInnerTexts()).join('\n');
    return /Connected/.test(await again.locator('#state').innerText()) && users.includes('Say hello from the view.') && answers.includes('You allowed it once') &&
      (await again.locator('#conversations').isHidden()) && { users, answers };
  }, 60_000).catch((e) => String(e));
  check('view: an item of the list reopens its conversation, history and answers included', typeof reopenedFromList === 'object', String(reopenedFromList));
  await page.screenshot({ path: path.join(OUT_DIR, '9c-view-reopened.png') });
  // Reopening shows the conversation; it does not run the agent again.
  check('view: neither the reload nor the reopening ran the agent again', model.requests().length === 4 && model.failures().length === 0,
    JSON.stringify({ requests: model.requests().length, failures: model.failures() }).slice(0, 1500));
  await model.stop();
}

// localServerSetup makes the directory where an installed `agent-server`
// goes on the extension host's PATH (localServer puts the real one there)
// and holds port 8000 with a server that is not an agent-server (Agent
// Canvas's ingress, or a server the person runs there, would be found).
function localServerSetup(tmp) {
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

// processesIn are the pids of the processes whose command line is args
// and whose working directory is dir.
function processesIn(dir, args) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `${args.join('\0')}\0` && fs.readlinkSync(`/proc/${pid}/cwd`) === dir) found.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

// startedServers are the processes running the `agent-server` of dir:
// their pids and command lines.
function startedServers(dir) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    let args;
    try {
      args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (args.includes(path.join(dir, 'agent-server')) && args.includes('--host')) found.push({ pid: Number(pid), args });
  }
  return found;
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// localServer: with no server configured, the bridge finds none, offers
// to start the installed agent-server (the real one: its environment's
// start command, linked where `uv tool install` links it), starts it once
// the person agrees, and the conversation runs on it; reloading the window
// (a new extension host and bridge) stops it. Then an Agent Canvas-shaped
// stack (its key file, its agent-server on 18000) is found and used with
// no question. Agent Canvas itself cannot be installed here (its npm
// package needs @openhands/extensions@0.22.1, which npm does not serve,
// and Node 24): its stack is the real agent-server 1.49.1 Canvas 1.20.0
// starts, on Canvas's port 18000 with a session key, and Canvas's key
// file.
async function localServer(browser, { tmp, port, local, helpers, srv, canvas }) {
  for (const [p, h] of Object.entries(local.holds)) {
    if (h instanceof Error) {
      check(`local server: port ${p} is free for the test`, false, String(h));
      return;
    }
  }
  const canvasSrv = await canvas.catch((err) => err);
  if (canvasSrv instanceof Error) {
    check('local server: Agent Canvas\'s agent-server started on port 18000', false, String(canvasSrv));
    return;
  }
  fs.symlinkSync(path.join(srv.venv, 'bin', 'agent-server'), path.join(local.bin, 'agent-server'));
  // One model for both conversations, one after the other.
  const model = await startModel(helpers, tmp, 'local', [
    { tools: bridgeTools, content: 'Hello from the server the bridge started.' },
    { tools: bridgeTools, content: 'Hello from Agent Canvas.' },
  ]);
  const ws = path.join(tmp, 'project-local');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify(realSettings(undefined, model,
    { 'openhands.bridge.args': ['--record', path.join(OUT_DIR, 'local-bridge-session.jsonl')] })));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const { status } = workbench(page);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await until('the bridge of the window', async () => /OpenHands: Disconnected/.test(await status()), 60_000);
  await llmKey(page);
  await runCommand(page, 'OpenHands: Open Conversation View');
  let view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await view.locator('#input').waitFor({ state: 'visible', timeout: 30_000 });
  await view.locator('#input').click();
  await page.keyboard.type('Say hello from a server you started.');
  const asked = Date.now();
  await page.keyboard.press('Enter');
  const dialog = page.locator('.monaco-dialog-box');
  const question = await until('the question to start a server', async () => (await dialog.isVisible()) && (await dialog.innerText()), 60_000).catch((e) => String(e));
  check('local server: with none found, the person is asked to start the installed agent-server, shown the command',
    question.includes('No OpenHands agent-server is running on this machine. Start one?') && question.includes(`${local.bin}/agent-server --host 127.0.0.1 --port`) &&
    question.includes('127.0.0.1 only'), question);
  await page.screenshot({ path: path.join(OUT_DIR, '10-start-server-question.png') });
  const questionMs = Date.now() - asked;
  const agreed = Date.now();
  await dialog.locator('a.monaco-button', { hasText: /^Start$/ }).click();
  // A real server's cold start is 10 to 40 s on a busy machine.
  const replied = await until('the started server\'s agent to answer', async () =>
    (await view.locator('.card.message.agent').allInnerTexts()).join('\n').includes('Hello from the server the bridge started.'), 240_000).catch((e) => String(e));
  const firstEventMs = Date.now() - agreed;
  check(`local server: started with consent, the conversation runs on it (${questionMs} ms to the question, ${firstEventMs} ms from "Start" to the agent's answer)`,
    replied === true, String(replied));
  const told = await until('the words saying which server', async () => {
    const t = (await page.locator('.notifications-toasts').allInnerTexts()).join('\n');
    return t.includes('started by the bridge') && t;
  }, 20_000).catch((e) => String(e));
  check('local server: the person is told which server is used, and where its key came from', told.includes('started by the bridge') &&
    told.includes('the key the bridge made for it'), told);
  await page.screenshot({ path: path.join(OUT_DIR, '11-started-server-conversation.png') });
  fs.writeFileSync(path.join(OUT_DIR, 'local-server.json'), JSON.stringify({ questionMs, firstEventMs }, null, 2));
  // The processes the bridge started: the environment's Python running
  // the linked start command, under the bridge's supervisor (the bridge's
  // binary, given the same command line).
  const servers = startedServers(local.bin);
  const python = servers.filter((x) => x.args[0] === path.join(srv.venv, 'bin', 'python'));
  check('local server: the started server is the real agent-server, and runs', python.length === 1 && alive(python[0].pid), JSON.stringify(servers));

  // The window reloads: its extension host and bridge end, and the server with them.
  await page.reload();
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  const stopped = await until('the started server to stop', () => servers.length > 0 && servers.every((x) => !alive(x.pid)) && startedServers(local.bin).length === 0, 30_000)
    .catch((e) => String(e));
  check('local server: the server the bridge started stops when its window goes', stopped === true, String(stopped));

  // Agent Canvas: its key file and its agent-server on 18000 (the
  // ingress on 8000 stays something else).
  const canvasDir = path.join(tmp, '.openhands', 'agent-canvas');
  fs.mkdirSync(canvasDir, { recursive: true });
  fs.writeFileSync(path.join(canvasDir, 'api-key.txt'), `${canvasSrv.key}\n`, { mode: 0o600 });
  await until('the extension after the reload', async () => /OpenHands: Disconnected/.test(await status()), 60_000);
  await llmKey(page);
  if (!(await page.locator('iframe.webview.ready').count())) await runCommand(page, 'OpenHands: Open Conversation View');
  view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  await view.locator('#input').waitFor({ state: 'visible', timeout: 30_000 });
  // After a reload code-server sometimes gives the view back the draft of
  // the message sent before it (the state it had kept before the send
  // cleared it): the person would clear it too.
  await view.locator('#input').fill('');
  await view.locator('#input').click();
  await page.keyboard.type('Say hello from Canvas.');
  await page.keyboard.press('Enter');
  let dialogs = 0;
  const canvasReply = await until('the Canvas agent to answer', async () => {
    if (await dialog.isVisible().catch(() => false)) dialogs++;
    return (await view.locator('.card.message.agent').allInnerTexts()).join('\n').includes('Hello from Agent Canvas.');
  }, 90_000).catch((e) => String(e));
  const canvasTold = (await page.locator('.notifications-toasts').allInnerTexts()).join('\n');
  check('local server: an Agent Canvas stack is found by its key file and used with no question', canvasReply === true && dialogs === 0 &&
    canvasTold.includes("Agent Canvas's local stack") && canvasTold.includes(path.join(canvasDir, 'api-key.txt')) && !canvasTold.includes(canvasSrv.key),
  JSON.stringify({ canvasReply: String(canvasReply), dialogs, canvasTold }));
  await page.screenshot({ path: path.join(OUT_DIR, '12-agent-canvas-found.png') });
  check('local server: the two conversations asked the model what its script expects', model.done() && model.failures().length === 0, model.failures().join('\n'));
  // What the person typed reached each agent as it was typed, and shows
  // as theirs (Agent Canvas's 1.49.1 sends a message to an idle
  // conversation after the state update logged behind it).
  const typed = model.requests().map((r) => r.user);
  const yours = await view.locator('.card.message.user').allInnerTexts().then((t) => t.join('\n')).catch((e) => String(e));
  check('local server: each agent got the message as typed, and the Canvas conversation shows it as the person\'s', typed.length === 2 &&
    typed[0] === 'Say hello from a server you started.' && typed[1] === 'Say hello from Canvas.' && yours.includes('Say hello from Canvas.'),
  JSON.stringify({ typed, yours }));
  await model.stop();
  local.holds[8000].close();
}

// longFeed writes the long conversation for the extension's test-only
// feed (src/testFeed.ts): the updates the bridge sends in
// openhands/did_update_conversation, in its shapes, each with when it comes
// (t, ms; 10 ms apart, the first 3 s after the view is ready). 50 turns of
// 40 updates, 2,000 in all: a user message, 4 thoughts, 4 commands
// (tool_call, in_progress, half the output, done with all 1 MB of it), 2
// edits of a 120-line file (tool_call, in_progress, done with the whole
// file's diff), 3 agent messages of 4 chunks, a plan. 15 cards a turn.
const longTurns = 50;
const outputBytes = 1_000_000;
function longFeed(file, ws) {
  const conversationId = 'long-conversation';
  const fd = fs.openSync(file, 'w');
  let t = 3000;
  const counts = { updates: 0, cards: 0, commands: 0, edits: 0 };
  const put = (update) => {
    fs.writeSync(fd, `${JSON.stringify({ t, conversationId, update })}\n`);
    t += 10;
    counts.updates++;
  };
  const text = (x) => ({ type: 'text', text: x });
  const meta = (messageId) => ({ _meta: { ohBridge: { messageId } } });
  let ids = 0;
  const chunk = (sessionUpdate, parts) => {
    const id = `ev-${++ids}`;
    for (const p of parts) put({ sessionUpdate, content: text(p), ...meta(id) });
    counts.cards++;
  };
  const command = (turn) => {
    const n = ++counts.commands;
    const toolCallId = `cmd-${n}`;
    const cmd = `python3 gen.py --lines 20000 --seed ${n}`;
    const lines = [];
    let size = 0;
    for (let i = 0; size < outputBytes; i++) {
      const l = `[cmd ${n}] line ${String(i).padStart(6, '0')}: turn ${turn}, the quick brown fox jumps over the lazy dog ${(i * 7919) % 100000}\n`;
      lines.push(l);
      size += l.length;
    }
    const out = lines.join('').slice(0, outputBytes);
    const terminal = { tool: 'terminal', terminalId: 'agent-1' };
    put({ sessionUpdate: 'tool_call', toolCallId, title: `Run \`${cmd}\``, kind: 'execute', status: 'pending', rawInput: { command: cmd }, locations: [], _meta: { ohBridge: { tool: 'terminal' } } });
    put({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress', _meta: { ohBridge: terminal } });
    put({ sessionUpdate: 'tool_call_update', toolCallId, content: [{ type: 'content', content: text(out.slice(0, outputBytes / 2)) }] });
    put({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content: [{ type: 'content', content: text(out) }], rawOutput: { exitCode: 0 } });
    counts.cards++;
  };
  const edit = (turn) => {
    const n = ++counts.edits;
    const toolCallId = `edit-${n}`;
    const file = path.join(ws, 'src', `module_${n}.py`);
    const before = Array.from({ length: 120 }, (_, i) => `def f${i}(x):\n    return x + ${i}\n`).join('');
    const oldStr = `def f60(x):\n    return x + 60\n`;
    const newStr = `def f60(x):\n    # turn ${turn}: handle None\n    if x is None:\n        return 60\n    return x + 60\n`;
    const after = before.replace(oldStr, newStr);
    const rawInput = { command: 'str_replace', path: file, old_str: oldStr, new_str: newStr };
    put({ sessionUpdate: 'tool_call', toolCallId, title: `Str_replace ${file}`, kind: 'edit', status: 'pending', rawInput, locations: [{ path: file }], _meta: { ohBridge: { tool: 'file_editor' } } });
    put({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress', locations: [{ path: file }] });
    put({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content: [{ type: 'diff', path: file, oldText: before, newText: after },
      { type: 'content', content: text(`The file ${file} has been edited.`) }] });
    counts.cards++;
  };
  const message = (turn, k) => chunk('agent_message_chunk', [`Turn ${turn}: `, 'the output looks **right**; ', 'next I check the edge cases ', `(turn ${turn}, message ${k}).`]);
  const thought = (turn, k) => chunk('agent_thought_chunk', [`Thinking about step ${k} of turn ${turn}.`]);
  for (let turn = 1; turn <= longTurns; turn++) {
    chunk('user_message_chunk', [`Turn ${turn}: run the generator, check its output, fix module ${turn}.`]);
    thought(turn, 1);
    command(turn);
    command(turn);
    message(turn, 1);
    thought(turn, 2);
    edit(turn);
    command(turn);
    put({ sessionUpdate: 'plan', entries: [{ content: `Run turn ${turn}'s generator`, priority: 'high', status: 'completed' },
      { content: `Fix module ${turn}`, priority: 'medium', status: 'in_progress' }], ...meta(`plan-${turn}`) });
    counts.cards++;
    thought(turn, 3);
    edit(turn);
    command(turn);
    message(turn, 2);
    thought(turn, 4);
    message(turn, 3);
  }
  fs.closeSync(fd);
  return { ...counts, last: `(turn ${longTurns}, message 3)` };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// webviewFrame finds the conversation view's document (two iframes down)
// as a frame to evaluate in; not the one given (a view that went away).
async function webviewFrame(page, not, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    for (const f of page.frames()) {
      if (f === not || f.isDetached()) continue;
      if (await f.evaluate(() => document.getElementById('transcript') !== null && document.getElementById('composer') !== null).catch(() => false)) return f;
    }
    await sleep(50);
  }
  throw new Error('timed out waiting for the conversation view\'s webview');
}

// allShown waits, a frame at a time, until the view has n cards and the
// last is the one named; it resolves when, in ms since the epoch.
async function allShown(frame, n, last, ms) {
  const h = await frame.waitForFunction(([n, last]) => {
    const cards = document.querySelectorAll('#transcript > article');
    return cards.length >= n && (cards[cards.length - 1]?.textContent ?? '').includes(last) && performance.timeOrigin + performance.now();
  }, [n, last], { polling: 'raf', timeout: ms });
  return h.jsonValue();
}

// lastShown: the same for the last card alone (the newest cards show first).
async function lastShown(frame, last, ms) {
  const h = await frame.waitForFunction((last) => {
    const cards = document.querySelectorAll('#transcript > article');
    return (cards[cards.length - 1]?.textContent ?? '').includes(last) && performance.timeOrigin + performance.now();
  }, last, { polling: 'raf', timeout: ms });
  return h.jsonValue();
}

// renders: the view's own measure of each message it drew (oh-render:
// from the message to the layout after it) and of each chunk of older
// cards after a reset (oh-render-older).
async function renders(frame) {
  return frame.evaluate(() => ['oh-render', 'oh-render-older'].flatMap((name) =>
    performance.getEntriesByName(name).map((e) => ({ name, ms: e.duration, start: e.startTime, ...(e.detail ?? {}) }))));
}

// phases: when (ms after `at`) the view's document began loading, and
// drew its first and last message.
async function phases(frame, list, at) {
  const origin = await frame.evaluate(() => performance.timeOrigin);
  const drawn = list.filter((r) => r.name === 'oh-render').map((r) => r.start);
  const loaded = await frame.evaluate(() => performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? null);
  const ms = (x) => (x === null || x === undefined ? null : Math.round(origin + x - at));
  return { webviewLoading: Math.round(origin - at), webviewLoaded: ms(loaded), firstDrawn: ms(drawn[0]), lastDrawn: ms(drawn[drawn.length - 1]) };
}

function stats(list) {
  const ms = list.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q) => (ms.length === 0 ? null : +ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2));
  return { messages: ms.length, cards: list.reduce((n, r) => n + (r.cards ?? 0), 0), p50: at(0.5), p95: at(0.95), max: at(1), over16ms: ms.filter((x) => x > 16).length };
}

// renderers: chromium's renderer processes and their resident memory.
async function renderers(browser) {
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  await cdp.detach().catch(() => undefined);
  return processInfo.filter((p) => p.type === 'renderer').map((p) => {
    const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p.id}/status`, 'utf8'))?.[1];
    return { pid: p.id, rssMB: rss === undefined ? 0 : +(Number(rss) / 1024).toFixed(1) };
  });
}

// memory: the webview's JS heap after a purge of caches and a garbage
// collection, by CDP (of the webview's process, which it may share with
// the workbench) and by performance.memory in its document, and the size
// of its DOM. (The caller adds the renderer's resident memory, read after.)
async function memory(page, frame) {
  let cdp;
  let scope = 'webview (its own process)';
  try {
    cdp = await page.context().newCDPSession(frame);
  } catch {
    cdp = await page.context().newCDPSession(page);
    scope = 'the window\'s renderer (the webview shares it with the workbench)';
  }
  // Caches let go first (as under memory pressure), then the garbage.
  await cdp.send('Memory.simulatePressureNotification', { level: 'critical' }).catch(() => undefined);
  await cdp.send('HeapProfiler.collectGarbage').catch(() => undefined);
  await sleep(500);
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  await cdp.detach().catch(() => undefined);
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  const mb = (b) => (typeof b === 'number' ? +(b / 2 ** 20).toFixed(1) : null);
  const doc = await frame.evaluate(() => ({
    heap: performance.memory?.usedJSHeapSize,
    elements: document.getElementsByTagName('*').length,
    cards: document.querySelectorAll('#transcript > article').length,
    textChars: document.body.textContent.length,
  }));
  return { scope, cdpJsHeapUsedMB: mb(m.JSHeapUsedSize), cdpJsHeapTotalMB: mb(m.JSHeapTotalSize), cdpNodes: m.Nodes, cdpDocuments: m.Documents,
    documentJsHeapUsedMB: mb(doc.heap), elements: doc.elements, cards: doc.cards, textChars: doc.textChars };
}

// longConversation: the view takes a long conversation fed through the
// extension's test-only entry, as the bridge's updates come (src/testFeed.ts
// says why not through an agent-server): how long the view takes to draw
// an update, its memory, how long it takes to open it with the whole
// conversation in, and to restore it after a reload (the updates come
// again, all at once, as the bridge's replay does).
async function longConversation(browser, { port, ws, feed }) {
  const made = longFeed(feed, ws);
  for (const f of [`${feed}.fed`, `${feed}.live.json`, `${feed}.replay.json`]) fs.rmSync(f, { force: true });
  console.log(`long conversation: ${made.updates} updates, ${made.commands} commands of ${outputBytes} bytes, ${made.edits} edits, ${made.cards} cards, ${(fs.statSync(feed).size / 2 ** 20).toFixed(0)} MB of updates`);
  const others = new Set((await renderers(browser)).map((r) => r.pid));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const { status, editorText } = workbench(page);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await until('the bridge of the long conversation\'s window', async () => /OpenHands: /.test(await status()), 60_000);
  // The window's renderer: the one that came with it.
  const ours = async () => {
    const mine = (await renderers(browser)).filter((r) => !others.has(r.pid));
    return { rendererRssMB: +mine.reduce((n, r) => n + r.rssMB, 0).toFixed(1), rendererPids: mine.map((r) => r.pid) };
  };

  // Live: the view is open as the updates come.
  await runCommand(page, 'OpenHands: Open Conversation View');
  let frame = await webviewFrame(page);
  const before = { ...(await memory(page, frame)), ...(await ours()) };
  const liveStart = Date.now();
  await allShown(frame, made.cards, made.last, 300_000);
  const liveMs = Date.now() - liveStart;
  const live = stats((await renders(frame)).filter((r) => r.name === 'oh-render'));
  const after = { ...(await memory(page, frame)), ...(await ours()) };
  await page.screenshot({ path: path.join(OUT_DIR, 'long-conversation.png') });
  check('long conversation: every card shows', after.cards === made.cards, JSON.stringify(after));

  // A big command's card: the end of its 1 MB, and all of it on request.
  const big = await frame.evaluate(() => {
    const card = document.querySelectorAll('.card.tool-command')[197];
    card?.scrollIntoView({ block: 'start' });
    return { text: card?.querySelector('pre.output')?.textContent?.length ?? 0, more: card?.querySelector('.show-all')?.textContent ?? '' };
  });
  await sleep(300);
  await page.screenshot({ path: path.join(OUT_DIR, 'long-command-card.png') });
  check('long conversation: a 1 MB command\'s card holds its end, and offers all of it', big.text > 4_000 && big.text < 10_000 && big.more.includes('1,000,000 characters'), JSON.stringify(big));
  await frame.evaluate(() => document.querySelectorAll('.card.tool-command')[197]?.querySelector('.show-all')?.click());
  const whole = await until('all of the output in an editor', async () => {
    const t = await editorText();
    return t.includes('[cmd 198] line 000000') && t;
  }, 30_000).catch((e) => String(e));
  check('long conversation: Show all opens the whole output in an editor', whole.includes('[cmd 198] line 000000'), whole.slice(0, 300));
  await page.screenshot({ path: path.join(OUT_DIR, 'long-show-all.png') });

  // Open: the view was closed (another view in the side bar) and opens
  // with the whole conversation.
  await runCommand(page, 'View: Show Explorer');
  await until('the conversation view to close', async () => frame.isDetached() || !(await frame.evaluate(() => document.visibilityState === 'visible').catch(() => false)), 30_000);
  const openAt = Date.now();
  await runCommand(page, 'OpenHands: Open Conversation View');
  const commandRan = Date.now() - openAt;
  frame = await webviewFrame(page, frame);
  const openFirst = (await lastShown(frame, made.last, 120_000)) - openAt;
  const openAll = (await allShown(frame, made.cards, made.last, 120_000)) - openAt;
  const openRenders = await renders(frame);
  const opened = stats(openRenders);
  const openPhases = { commandRan, ...(await phases(frame, openRenders, openAt)) };

  // Restore: the window reloads; a new extension host gets the updates
  // again, all at once, into the view that comes back open.
  const reloadAt = Date.now();
  await page.reload();
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  if (!(await page.waitForSelector('iframe.webview.ready', { timeout: 30_000 }).then(() => true, () => false))) {
    await until('the extension after the reload', async () => /OpenHands:/.test(await status()), 60_000);
    await runCommand(page, 'OpenHands: Open Conversation View');
  }
  frame = await webviewFrame(page, undefined, 120_000);
  const restoreAll = (await allShown(frame, made.cards, made.last, 300_000)) - reloadAt;
  const restoreRenders = await renders(frame);
  const replay = stats(restoreRenders.filter((r) => r.name === 'oh-render'));
  const fedAgain = await until('the replay\'s record', () => JSON.parse(fs.readFileSync(`${feed}.replay.json`, 'utf8')), 30_000).catch(() => undefined);
  const restorePhases = { ...(await phases(frame, restoreRenders, reloadAt)),
    ...(fedAgain === undefined ? {} : { feedBegan: fedAgain.began - reloadAt, feedEnded: fedAgain.ended - reloadAt }) };
  const restored = { ...(await memory(page, frame)), ...(await ours()) };
  await page.screenshot({ path: path.join(OUT_DIR, 'long-restored.png') });

  const grew = +(after.rendererRssMB - before.rendererRssMB).toFixed(1);
  const figures = {
    conversation: { updates: made.updates, commands: made.commands, outputBytesPerCommand: outputBytes, edits: made.edits, cards: made.cards, feedMB: +(fs.statSync(feed).size / 2 ** 20).toFixed(0) },
    targets: { renderP95Ms: 16, memoryMB: 200 },
    renderMs: { live, open: opened, restore: replay },
    liveFeedMs: liveMs,
    memory: { empty: before, afterLive: after, afterRestore: restored, rendererRssGrowthMB: grew },
    // From before the command palette ran "Open Conversation View", and (…AfterCommand) from when it had.
    openMs: { lastCardShown: openFirst, allCardsShown: openAll, lastCardAfterCommand: Math.round(openFirst - commandRan),
      allCardsAfterCommand: Math.round(openAll - commandRan), phases: openPhases },
    restoreMs: { allCardsShown: restoreAll, phases: restorePhases },
  };
  fs.writeFileSync(path.join(OUT_DIR, 'long-conversation.json'), `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`long conversation figures (${path.join(OUT_DIR, 'long-conversation.json')}):\n${JSON.stringify(figures, null, 2)}`);
  check(`long conversation: an update draws in under 16 ms at p95 (p50 ${live.p50} ms, p95 ${live.p95} ms, max ${live.max} ms)`, live.p95 !== null && live.p95 < 16, JSON.stringify(live));
  const heap = after.scope.startsWith('webview') ? after.cdpJsHeapUsedMB : after.documentJsHeapUsedMB;
  check(`long conversation: the webview's memory stays under 200 MB (JS heap ${heap} MB, ${after.scope}; the renderer's resident memory grew ${grew} MB with the conversation)`,
    heap !== null && heap < 200 && grew < 200, JSON.stringify({ before, after }));
  const round = Math.round;
  check(`long conversation: it opens (${round(openFirst - commandRan)} ms from the command to the newest card, ${round(openAll - commandRan)} ms to all) and restores after a reload (${round(restoreAll)} ms)`,
    openAll > 0 && restoreAll > 0, JSON.stringify(figures.openMs));
}

try {
  await main();
} catch (err) {
  check('the end-to-end run', false, err.stack ?? String(err));
} finally {
  // The helpers stop their servers and what those started; the rest ends at once.
  await Promise.all(children.filter((c) => c.graceful).map(finishHelper));
  for (const c of children) c.kill('SIGKILL');
}
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
