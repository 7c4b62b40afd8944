import * as fs from 'node:fs';
import * as path from 'node:path';
import { OUT_DIR, check, until, bridgeTools, startModel, realSettings, llmKey, workbench, runCommand, alive, project } from '../lib.mjs';

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
export async function conversationView(browser, { tmp, port, helpers, srv }) {
  const { ws, notes } = project(tmp, 'project-view');
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
