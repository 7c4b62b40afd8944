import * as fs from 'node:fs';
import * as path from 'node:path';
import { OUT_DIR, check, start, until, workbench, runCommand, sleep } from '../lib.mjs';

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
export async function longConversation(browser, { port, ws, feed }) {
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
