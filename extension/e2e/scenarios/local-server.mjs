import * as fs from 'node:fs';
import * as path from 'node:path';
import { OUT_DIR, check, until, bridgeTools, startModel, realSettings, llmKey, workbench, runCommand, alive } from '../lib.mjs';

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
export async function localServer(browser, { tmp, port, local, helpers, srv, canvas }) {
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
