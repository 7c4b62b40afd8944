// End to end in a real VS Code (code-server 4.139, VS Code 1.139) driven by
// Debian's chromium through playwright-core: install the packaged
// extension, open a workspace with a file open in the editor, and check
// that the status bar shows the bridge, disconnected. Run "OpenHands:
// Serve Tools to Agents (MCP)" and act as an MCP agent with the official
// MCP TypeScript SDK: its command shows in a terminal of its own, and its
// edit lands in the open buffer, each after the user allowed it. Then open
// a project set up for an OpenHands agent-server (the stand-in) in
// confirmation mode and start a conversation whose agent works with the
// bridge's tools. Last, in the OpenHands conversation view, start one by
// typing a message, answer its permission question inline, see the
// agent's reply and its command's card, and stop a long command.
// Screenshots go to OUT_DIR.
//
// Env: CODE_SERVER (launcher), VSIX, REPO (the oh-bridge checkout), OUT_DIR.
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

  const port = await freePort();
  const cs = start(CODE_SERVER, ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--extensions-dir', extDir, '--user-data-dir', userData, ws], { env: { ...process.env, HOME: tmp } });
  await until('code-server', async () => (await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' })).status < 400, 60_000);

  const browser = (globalThis.browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  }));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    // E2E_ONLY=view runs the conversation view's step alone, when working on it.
    if (process.env.E2E_ONLY === 'view') return await conversationView(browser, { tmp, port });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    const { status, editorText } = workbench(page);
    // "OpenHands" alone is the spinner while the bridge starts.
    const started = await until('the extension to start the bridge', async () => /OpenHands: /.test(await status()) && (await status()), 60_000);
    check('the status bar shows the bridge, disconnected', /OpenHands: Disconnected/.test(started), started);

    await openFile(page, editorText, 'notes.txt', 'hello');
    await page.screenshot({ path: path.join(OUT_DIR, '1-before-connect.png') });

    await mcpAgent(page, notes, editorText);
    await agentServer(browser, { tmp, port });
    await conversationView(browser, { tmp, port });
  } catch (err) {
    await page.screenshot({ path: path.join(OUT_DIR, 'failure.png') }).catch(() => undefined);
    throw err;
  } finally {
    await browser.close();
  }
}

// standInURL waits for a stand-in to say its port.
function standInURL(child, what) {
  return until(what, () => {
    const l = child.lines.find((x) => x.startsWith('PORT '));
    return l && `http://127.0.0.1:${l.slice(5)}`;
  });
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

// agentServer: the user opens a project whose settings point at an OpenHands
// agent-server (the stand-in) in confirmation mode, and starts a
// conversation. The agent works with the bridge's MCP tools: each action
// is put to the user once (the confirmation; the MCP call that follows is
// not asked again), its command shows in a terminal, its edit lands in
// the open buffer, and the conversation channel and the status bar follow
// it. (A second folder, because code-server does not notice a user
// settings file changed under it.)
async function agentServer(browser, { tmp, port }) {
  const ws = path.join(tmp, 'project-agent-server');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  const notes = path.join(ws, 'notes.txt');
  fs.writeFileSync(notes, 'hello\n');
  const script = path.join(tmp, 'agent-server-script.json');
  fs.writeFileSync(script, JSON.stringify({ turns: [
    [{ tool: 'terminal', arguments: { command: 'echo agent-output-$((6*7))' }, thought: 'Say hello.' }],
    [{ tool: 'file_editor', arguments: { command: 'str_replace', path: notes, old_str: 'hello', new_str: 'hello from the agent-server agent' } }],
    [{ finish: 'Done in VS Code.' }],
  ] }));
  const server = start('/usr/bin/python3', [path.join(REPO, 'fixtures', 'peers', 'agent_server_standin.py'), '--script', script]);
  const url = await standInURL(server, 'the agent-server stand-in');
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'openhands.serverUrl': url,
    'openhands.llm.model': 'e2e/scripted', 'openhands.confirmationMode': true }));
  // A window of its own: leaving the first one would ask about its
  // unsaved buffer.
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const { status, editorText } = workbench(page);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await until('the bridge of the new window', async () => /OpenHands: Disconnected/.test(await status()), 60_000);
  await openFile(page, editorText, 'notes.txt', 'hello');

  await runCommand(page, 'OpenHands: Start Conversation');
  await until('the task input box', async () => (await page.locator('.quick-input-widget').innerText()).includes('What should the OpenHands agent do?'));
  await page.keyboard.type('Say hello, then sign the notes.');
  await page.keyboard.press('Enter');
  const done = until('the agent to finish', () => server.lines.some((l) => l.startsWith('SCRIPT_DONE')), 120_000);
  const { prompts } = await allowWhile(page, done);
  check('agent-server: the user was asked once per action, as OpenHands', prompts.length === 2 && prompts[0].includes('OpenHands wants to run `echo agent-output') &&
    prompts[1].includes('OpenHands') && prompts[1].includes('str_replace'), JSON.stringify(prompts));
  const results = server.lines.filter((l) => l.startsWith('TOOL_RESULT '));
  check('agent-server: the agent-server got both results from the bridge\'s tools', results.length === 2 && results[0].includes('agent-output-42') &&
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
}

// conversationView: the user opens the OpenHands view, types a task in
// its message box and answers the permission question inline; the view
// shows the message, the agent's command with its output and exit code,
// and the agent's reply. A second message starts a long command, and Stop
// interrupts it.
async function conversationView(browser, { tmp, port }) {
  const ws = path.join(tmp, 'project-view');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  const script = path.join(tmp, 'view-script.json');
  fs.writeFileSync(script, JSON.stringify({ turns: [
    [{ tool: 'terminal', arguments: { command: 'echo view-output-$((6*7))' }, thought: 'Print the answer.' }],
    [{ message: 'The command printed **view-output-42**.' }],
    [{ tool: 'terminal', arguments: { command: 'sleep 30; echo never' } }],
    [{ message: 'Slept.' }],
  ] }));
  const server = start('/usr/bin/python3', [path.join(REPO, 'fixtures', 'peers', 'agent_server_standin.py'), '--script', script]);
  const url = await standInURL(server, 'the agent-server stand-in for the view');
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'openhands.serverUrl': url,
    'openhands.llm.model': 'e2e/scripted', 'openhands.bridge.args': ['--record', path.join(OUT_DIR, 'view-bridge-session.jsonl')] }));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const { status } = workbench(page);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await until('the bridge of the view\'s window', async () => /OpenHands: Disconnected/.test(await status()), 60_000);

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

  // Permission questions show in the view while it is visible: answer
  // them there, and count any modal that showed instead.
  let modals = 0;
  const inlineAnswers = [];
  const answerInline = async () => {
    if (await page.locator('.monaco-dialog-box').isVisible().catch(() => false)) modals++;
    const allow = view.locator('.card.permission.open button[data-option="allow_once"]');
    if ((await allow.count()) > 0) {
      inlineAnswers.push(await view.locator('.card.permission.open').first().innerText());
      await allow.first().click().catch(() => undefined);
    }
  };
  const cardText = (sel) => view.locator(sel).allInnerTexts().then((t) => t.join('\n---\n'));
  const replied = await until('the agent\'s reply in the view', async () => {
    await answerInline();
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
  check('view: the permission question was answered inline, with no modal', inlineAnswers.length >= 1 && modals === 0, JSON.stringify({ inlineAnswers, modals }));
  check('view: the agent\'s reply shows, rendered', !replied.error && (await view.locator('.card.message.agent strong', { hasText: 'view-output-42' }).count()) === 1, JSON.stringify(replied).slice(0, 600));
  check('view: the command\'s card shows the command and its exit code', !replied.error && replied.tools.includes('echo view-output-$((6*7))') && /Exit 0/.test(replied.tools), JSON.stringify(replied).slice(0, 600));
  check('view: the command\'s card shows its output', output.includes('view-output-42'), output);
  await page.screenshot({ path: path.join(OUT_DIR, '6-view-reply.png') });

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
  await page.screenshot({ path: path.join(OUT_DIR, '8-view-stopped.png') });

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
  await page.screenshot({ path: path.join(OUT_DIR, '9-view-restored.png') });
}

try {
  await main();
} catch (err) {
  check('the end-to-end run', false, err.stack ?? String(err));
} finally {
  for (const c of children) c.kill('SIGKILL');
}
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
