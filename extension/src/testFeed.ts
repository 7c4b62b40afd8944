// Test only: the end-to-end test's long conversation (extension/e2e). A
// conversation of thousands of updates with megabytes of output is too
// slow to script through an agent-server, a terminal and the bridge, and
// would measure the terminal more than the view; this entry gives the
// conversation view the same updates the bridge would send, so
// everything from openhands/did_update_conversation on (Transcript,
// cards, batches, the webview) is the product's own path.
//
// With OH_BRIDGE_TEST_FEED naming a JSON-lines file of
// {"t": ms, "conversationId": "...", "update": {...}} (the notification's
// params and when it comes), in a window whose first workspace folder is
// that file's folder, the updates start once the view is ready. The first
// time, each waits for its t, as a live conversation comes; the file
// FEED.fed then marks it fed, and a later window (a reload) gets them all
// at once, one a task, as the bridge's replay of a conversation comes.
// Each feed writes FEED.live.json or FEED.replay.json: when it began and
// ended (ms since the epoch) and how many updates it gave. Unset, nothing
// happens.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import type { ConversationView } from './conversationView';
import type { Update } from './protocol.gen';

export const testFeedEnv = 'OH_BRIDGE_TEST_FEED';

interface FeedLine {
  t?: number;
  conversationId: string;
  update: Update;
}

/** Starts the feed when the environment and the workspace ask for it. */
export function startTestFeed(view: ConversationView, log: (line: string) => void): vscode.Disposable {
  const file = process.env[testFeedEnv];
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (file === undefined || file === '' || folder === undefined || path.dirname(file) !== folder) return new vscode.Disposable(() => undefined);
  let stopped = false;
  const once = view.onReady(() => {
    once.dispose();
    const live = !fs.existsSync(`${file}.fed`);
    const mode = live ? 'live' : 'replay';
    const began = Date.now();
    log(`test feed: ${file} (${mode})`);
    feed(file, live, view, () => stopped).then(
      (updates) => {
        const ended = Date.now();
        log(`test feed: ${updates} updates in ${ended - began} ms`);
        fs.writeFileSync(`${file}.${mode}.json`, `${JSON.stringify({ began, ended, updates })}\n`);
        if (live) fs.writeFileSync(`${file}.fed`, `${updates}\n`);
      },
      (err: Error) => log(`test feed failed: ${err.message}`),
    );
  });
  return new vscode.Disposable(() => {
    stopped = true;
    once.dispose();
  });
}

async function feed(file: string, live: boolean, view: ConversationView, stopped: () => boolean): Promise<number> {
  const lines = readline.createInterface({ input: fs.createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const start = Date.now();
  let n = 0;
  for await (const line of lines) {
    if (stopped()) break;
    if (line.trim() === '') continue;
    const l = JSON.parse(line) as FeedLine;
    const wait = live ? start + (l.t ?? 0) - Date.now() : 0;
    // Each update in a task of its own, as notifications come.
    await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
    view.update(l.conversationId, l.update);
    n++;
  }
  return n;
}
