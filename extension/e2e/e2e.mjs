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
// Canvas-shaped stack is found with no question. Then the relay: a VS
// Code on a "laptop" that takes no inbound connection, the agent-server
// in a "cloud" behind a proxy, in network namespaces of their own; the
// cloud's agent reaches the window through `oh-bridge relay`
// (scenarios/relay.mjs). Screenshots go to OUT_DIR, with the servers'
// logs (agent-server.log, relay-agent-server.log).
//
// This file is the runner: it starts code-server, the servers and the
// browser, then each scenario in turn, one file each in scenarios/
// (mcp-agent, agent-server, conversation-view, long-conversation,
// local-server, relay); lib.mjs holds what they share (checks, processes,
// helpers, reading and driving a window).
//
// Env: CODE_SERVER (launcher), VSIX, REPO (the oh-bridge checkout), OUT_DIR;
// E2E_ONLY=view, long, local or relay runs that step alone.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { CODE_SERVER, VSIX, OUT_DIR, results, children, check, freePort, start, until, buildHelpers, startRealServer, startRelayRig, finishHelper, codeServerArgs, chromiumArgs, workbench, openFile, localServerSetup } from './lib.mjs';
import { mcpAgent } from './scenarios/mcp-agent.mjs';
import { agentServer } from './scenarios/agent-server.mjs';
import { conversationView } from './scenarios/conversation-view.mjs';
import { localServer } from './scenarios/local-server.mjs';
import { longConversation } from './scenarios/long-conversation.mjs';
import { relay } from './scenarios/relay.mjs';

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
  // The relay's cloud (another real 1.58.2, the relay, nginx) and laptop,
  // in network namespaces of their own: started now too.
  // (Not when another step runs alone.)
  const rig = [undefined, 'relay'].includes(process.env.E2E_ONLY) ? startRelayRig(helpers, path.join(OUT_DIR, 'relay-agent-server.log')) : undefined;

  // Where an installed `agent-server` goes on the PATH the extension's
  // bridge sees, for the bridge to offer and start; and the default port
  // held by something else, so that nothing this machine runs is found
  // instead.
  const local = localServerSetup(tmp);
  const port = await freePort();
  const cs = start(CODE_SERVER, codeServerArgs(port, extDir, userData, ws),
  { env: { ...process.env, HOME: tmp, OH_BRIDGE_TEST_FEED: feed, PATH: `${local.bin}:${process.env.PATH}`,
    OH_BRIDGE_SERVER_URL: '', OH_BRIDGE_SESSION_API_KEY: '', LOCAL_BACKEND_API_KEY: '' } });
  await until('code-server', async () => (await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' })).status < 400, 60_000);

  const browser = (globalThis.browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [...chromiumArgs, '--enable-precise-memory-info'],
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
  const ctx = { tmp, port, helpers, local, extDir };
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
    if (process.env.E2E_ONLY === 'relay') return await relay(rig, ctx);

    await openFile(page, editorText, 'notes.txt', 'hello');
    await page.screenshot({ path: path.join(OUT_DIR, '1-before-connect.png') });

    await mcpAgent(page, notes, editorText);
    Object.assign(ctx, await servers());
    await agentServer(browser, ctx);
    await conversationView(browser, ctx);
    await longConversation(browser, { port, ws: longWs, feed });
    await localServer(browser, ctx);
    await relay(rig, ctx);
  } catch (err) {
    // Each window as it was: failure-1.png is the first.
    const pages = browser.contexts().flatMap((c) => c.pages());
    for (const [i, p] of pages.entries()) await p.screenshot({ path: path.join(OUT_DIR, `failure-${i + 1}.png`) }).catch(() => undefined);
    throw err;
  } finally {
    await browser.close();
  }
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
