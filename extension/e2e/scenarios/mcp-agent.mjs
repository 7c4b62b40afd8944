import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, OUT_DIR, check, until, terminalShows, editorShows, runCommand, allowWhile } from '../lib.mjs';

// mcpAgent: the user serves the tools over MCP; an agent (the official MCP
// TypeScript SDK) connects with the URL and token the bridge gave and
// works in the user's VS Code.
export async function mcpAgent(page, notes, editorText) {
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
