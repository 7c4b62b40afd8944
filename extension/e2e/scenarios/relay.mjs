import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { CODE_SERVER, OUT_DIR, check, until, start, bridgeTools, startModel, realSettings, llmKey, setSecret, workbench, runCommand, openFile, terminalShows, editorShows, inNetns, project, codeServerArgs, chromiumArgs } from '../lib.mjs';

// relay: the person's VS Code on a laptop that takes no inbound
// connection, the agent-server in a cloud behind a proxy (startRelayRig:
// network namespaces of their own, the real agent-server 1.58.2, `oh-bridge
// relay` and nginx under /s/abc/). code-server and the browser run in the
// laptop, the agent's model in the cloud. The person sets the server's URL
// and the relay's beside it, gives the session key and the pairing secret
// with their commands, and types a task in the conversation view. The
// cloud's agent reaches the window only through the relay the bridge
// dialed out to: its command's question sits on the card, the command runs
// in a terminal of the window, its edit lands in the open buffer (the disk
// keeps the saved text) and the card's Revert undoes it; the view says
// which window the agent reaches, through which relay, and, while the
// laptop's network is down, that the link to the relay is. Then the person
// runs "Install Relay on the Server": the window puts a relay of its own
// beside the server through the server's API, after saying what it does
// there, keeps its URL and secret, and the next conversation goes
// through it.
export async function relay(rigChild, { tmp, extDir, helpers }) {
  const rig = await rigChild.ready;
  if (rig.missing !== undefined) {
    // CI has all it needs (.ci/run installs it): there the run fails.
    check('relay: this machine can build the cloud and the laptop', process.env.CI === undefined, rig.missing);
    console.log(`relay: skipped: ${rig.missing}`);
    return;
  }
  check('relay: a connection from the cloud into the laptop is refused', rig.inboundRefused === true, JSON.stringify(rig));

  const { ws, notes } = project(tmp, 'project-relay');
  const model = await startModel(helpers, tmp, 'relay', [
    { tools: bridgeTools, content: 'Print the answer.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo relay-output-$((6*7)) && hostname -I', summary: 'print the answer' } }] },
    { tools: bridgeTools, toolCalls: [{ name: 'file_editor', arguments: { command: 'str_replace', path: notes, old_str: 'hello', new_str: 'hello from the cloud' } }] },
    { tools: bridgeTools, content: 'The cloud\'s agent printed **relay-output-42**.' },
    // The second conversation, through the relay the window installed.
    { tools: bridgeTools, toolCalls: [{ name: 'terminal', arguments: { command: 'echo installed-relay-$((2*21))', summary: 'print again' } }] },
    { tools: bridgeTools, content: 'Done through the **installed relay**.' },
  ], rig.cloud);
  fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify(realSettings(rig.agentUrl, model, { 'openhands.confirmationMode': true,
    'openhands.relayUrl': rig.relayUrl, 'openhands.bridge.args': ['--record', path.join(OUT_DIR, 'relay-bridge-session.jsonl')] })));

  // The laptop's VS Code: a code-server of its own, listening on the
  // laptop's loopback, and a browser there to drive it.
  const userData = path.join(tmp, 'laptop-user-data');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.copyFileSync(path.join(tmp, 'user-data', 'User', 'settings.json'), path.join(userData, 'User', 'settings.json'));
  const home = path.join(tmp, 'laptop-home');
  fs.mkdirSync(home);
  const port = 13337;
  start(...inNetns(rig.laptop, CODE_SERVER, codeServerArgs(port, extDir, userData, ws)),
  { env: { ...process.env, HOME: home, OH_BRIDGE_SERVER_URL: '', OH_BRIDGE_SESSION_API_KEY: '', LOCAL_BACKEND_API_KEY: '', OH_BRIDGE_RELAY_URL: '', OH_BRIDGE_RELAY_SECRET: '' } });
  const chromiumThere = path.join(tmp, 'chromium-laptop');
  fs.writeFileSync(chromiumThere, `#!/bin/sh\nexec ip netns exec ${rig.laptop} /usr/bin/chromium "$@"\n`, { mode: 0o755 });
  const browser = await chromium.launch({
    executablePath: chromiumThere,
    headless: true,
    args: chromiumArgs,
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const { status, editorText } = workbench(page);
    await until('the laptop\'s code-server', async () => {
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
      return true;
    }, 60_000);
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await until('the bridge of the laptop\'s window', async () => /OpenHands: Disconnected/.test(await status()), 60_000);
    await llmKey(page);
    await setSecret(page, 'OpenHands: Set Session API Key', rig.key);
    await setSecret(page, 'OpenHands: Set Relay Pairing Secret', rig.secret);
    await openFile(page, editorText, 'notes.txt', 'hello');

    await runCommand(page, 'OpenHands: Open Conversation View');
    const view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const input = view.locator('#input');
    await input.waitFor({ state: 'visible', timeout: 30_000 });
    await input.click();
    await page.keyboard.type('Print the answer in the laptop, then sign the notes.');
    await page.keyboard.press('Enter');

    const via = await until('the view to say which window the agent reaches', async () => {
      const v = view.locator('#via');
      return (await v.isVisible()) && (await v.innerText());
    }, 120_000).catch((e) => String(e));
    const relayUrl = rig.relayUrl.replace(/[.]/g, '\\.');
    check('relay: the conversation view says which window the agent reaches, through the relay behind the proxy',
      new RegExp(`^The agent reaches this window through the relay at ${relayUrl}, as window "project-relay — `).test(via), via);

    const commandCard = view.locator('.card.tool', { hasText: 'echo relay-output' });
    const asked = await until('the question on the command\'s card', async () =>
      (await commandCard.locator('.question.open').count()) === 1 && (await commandCard.first().innerText()), 120_000).catch((e) => String(e));
    check('relay: the cloud\'s command is put to the person on its card before it runs', asked.includes('echo relay-output-$((6*7))') && asked.includes('Needs you'), asked);
    await page.screenshot({ path: path.join(OUT_DIR, '13-relay-question.png') });
    await commandCard.locator('.question.open button[data-option="allow_once"]').click();
    const terminal = await terminalShows(page, 'relay-output-42', 'the cloud\'s command in a terminal of the laptop\'s window');
    check('relay: the command runs in a terminal of the laptop\'s window, live', terminal.includes('relay-output-42') && terminal.includes(rig.laptopAddr), terminal.slice(0, 600));

    const editCard = view.locator('.card.tool.tool-edit');
    const proposal = await until('the question on the edit\'s card', async () =>
      (await editCard.locator('.question.open').count()) === 1 && (await editCard.first().innerText()), 60_000).catch((e) => String(e));
    check('relay: the edit is put to the person on its card, with its diff', proposal.includes('notes.txt') && proposal.includes('proposed'), proposal);
    await editCard.locator('.question.open button[data-option="allow_once"]').click();
    const edited = await editorShows(editorText, 'hello from the cloud', 'the cloud\'s edit in the open buffer');
    check('relay: the edit lands in the open buffer', edited.includes('hello from the cloud'), edited);
    check('relay: the disk keeps the saved text', fs.readFileSync(notes, 'utf8') === 'hello\n', fs.readFileSync(notes, 'utf8'));

    const replied = await until('the agent\'s reply in the view', async () =>
      (await view.locator('.card.message.agent strong', { hasText: 'relay-output-42' }).count()) === 1, 90_000).catch((e) => String(e));
    check('relay: the agent\'s reply shows in the view', replied === true, String(replied));
    const results = model.requests().flatMap((r) => r.toolResults);
    check('relay: the cloud\'s agent got both results from the laptop, once each', results.length === 2 && results[0].includes('relay-output-42') &&
      results[0].includes(rig.laptopAddr) && results[1].includes('has been edited'), results.join('\n').slice(0, 600));
    check('relay: the cloud\'s model was asked what the script expects so far', model.failures().length === 0, model.failures().join('\n'));
    await page.screenshot({ path: path.join(OUT_DIR, '13b-relay-done.png') });

    // Undo: the card's Revert puts the text from before the edit back in
    // the buffer.
    await editCard.locator('button[data-action="revert"]').first().click();
    const reverted = await until('the buffer back to its text', async () => {
      const t = await editorText();
      return !t.includes('hello from the cloud') && t.includes('hello') && t;
    }, 30_000).catch((e) => String(e));
    check('relay: Revert on the edit\'s card undoes the edit in the buffer', !reverted.startsWith('Error') && !reverted.includes('from the cloud'), reverted);

    // The laptop's network drops: the view says the link to the relay
    // is down until it is back.
    const viaText = () => view.locator('#via').innerText();
    execFileSync('ip', ['-n', rig.laptop, 'link', 'set', rig.laptopDev, 'down']);
    const down = await until('the view to say the relay\'s link is down', async () => {
      const t = await viaText();
      return t.includes(`Now the link to the relay at ${rig.relayUrl} is down (`) && t;
    }, 40_000).catch((e) => String(e));
    await page.screenshot({ path: path.join(OUT_DIR, '13c-relay-link-down.png') });
    execFileSync('ip', ['-n', rig.laptop, 'link', 'set', rig.laptopDev, 'up']);
    check('relay: when the laptop\'s network drops, the view says the link to the relay is down and that the agent\'s calls wait', down.includes('the agent\'s calls wait for it'), down);
    const back = await until('the view to say it is back', async () => {
      const t = await viaText();
      return !t.includes('is down') && t.includes('through the relay at') && t;
    }, 40_000).catch((e) => String(e));
    check('relay: when the link is back, the view says so', !back.startsWith('Error') && !back.includes('is down'), back);

    // "Install Relay on the Server": the window puts a relay of its own
    // beside the server, through the server's API, after asking; the
    // proxy exposes it under /s/abc/relay2/. The next conversation goes
    // through it.
    await runCommand(page, 'OpenHands: Install Relay on the Server');
    // Its own input box, not the palette that ran it (still closing).
    await until('the install\'s input box', async () => (await page.locator('.quick-input-widget').innerText()).includes('Install the OpenHands relay beside the agent-server'));
    await page.keyboard.press('Control+A');
    await page.keyboard.type(rig.installedRelayUrl);
    await page.keyboard.press('Enter');
    const dialog = page.locator('.monaco-dialog-box');
    const plan = await until('the question before the install', async () => (await dialog.isVisible()) && (await dialog.innerText()).replace(/\u00a0/g, ' '), 60_000)
      .catch((e) => String(e));
    check('relay: the window says what the install does on the server\'s machine, and asks', plan.includes('Install the OpenHands relay beside the agent-server') &&
      plan.includes('/.oh-bridge/bin/oh-bridge') && plan.includes(rig.installedRelayUrl) && /runs on Linux/.test(plan), plan);
    await page.screenshot({ path: path.join(OUT_DIR, '13d-relay-install-question.png') });
    await dialog.locator('.monaco-button', { hasText: 'Install Relay' }).click();
    const settingsFile = path.join(ws, '.vscode', 'settings.json');
    const kept = await until('the installed relay in the workspace\'s settings', () => {
      const v = JSON.parse(fs.readFileSync(settingsFile, 'utf8'))['openhands.relayUrl'];
      return v === rig.installedRelayUrl && v;
    }, 60_000).catch((e) => String(e));
    check('relay: once it runs, the window keeps the installed relay\'s URL', kept === rig.installedRelayUrl, kept);

    await view.locator('#new').click();
    await until('the view to empty for a new conversation', async () => (await view.locator('article.card').count()) === 0, 20_000);
    await input.click();
    await page.keyboard.type('Print it again, through your own relay.');
    await page.keyboard.press('Enter');
    const installedRe = new RegExp(`through the relay at ${rig.installedRelayUrl.replace(/[.]/g, '\\.')}, as window "project-relay — `);
    const via2 = await until('the view to name the installed relay', async () => {
      const t = await view.locator('#via').innerText();
      return installedRe.test(t) && t;
    }, 120_000).catch((e) => String(e));
    check('relay: the new conversation reaches the window through the installed relay (its secret kept by the window)', installedRe.test(via2), via2);
    const second = view.locator('.card.tool', { hasText: 'echo installed-relay' });
    await until('the question on the second command\'s card', async () => (await second.locator('.question.open').count()) === 1, 120_000).catch(() => undefined);
    await second.locator('.question.open button[data-option="allow_once"]').click().catch(() => undefined);
    const terminal2 = await terminalShows(page, 'installed-relay-42', 'the second command in the window\'s terminal');
    check('relay: its command runs in the window\'s terminal', terminal2.includes('installed-relay-42'), terminal2.slice(-400));
    const finished = await until('the agent\'s second reply', async () =>
      (await view.locator('.card.message.agent strong', { hasText: 'installed relay' }).count()) === 1, 90_000).catch((e) => String(e));
    const results2 = model.requests().flatMap((r) => r.toolResults);
    check('relay: the cloud\'s agent got the second result through the installed relay', finished === true && results2.some((r) => r.includes('installed-relay-42')) &&
      model.failures().length === 0 && model.done(), `${finished} ${results2.join('\n').slice(-300)} ${model.failures().join('\n')}`);
    await page.screenshot({ path: path.join(OUT_DIR, '13e-relay-installed.png') });
  } catch (err) {
    // The laptop's browser is not the run's: its window as it was.
    for (const [i, p] of browser.contexts().flatMap((c) => c.pages()).entries()) await p.screenshot({ path: path.join(OUT_DIR, `failure-relay-${i + 1}.png`) }).catch(() => undefined);
    throw err;
  } finally {
    await model.stop();
    await browser.close();
  }
}
