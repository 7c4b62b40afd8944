import * as fs from 'node:fs';
import * as path from 'node:path';
import { OUT_DIR, results, check, until, bridgeTools, startModel, realSettings, llmKey, workbench, openFile, terminalShows, editorShows, runCommand, allowWhile, project } from '../lib.mjs';

// agentServer: the user opens a project whose settings point at the real
// OpenHands agent-server in confirmation mode (AlwaysConfirm), and starts
// a conversation with the command. The server's agent (its model
// scripted) works with the bridge's MCP tools: the server holds each
// action until it is confirmed, and the bridge puts it to the user once
// (the MCP call that follows is not asked again); its command shows in a
// terminal, its edit lands in the open buffer, and the conversation
// channel and the status bar follow it. (A second folder, because
// code-server does not notice a user settings file changed under it.)
export async function agentServer(browser, { tmp, port, helpers, srv }) {
  const { ws, notes } = project(tmp, 'project-agent-server');
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
