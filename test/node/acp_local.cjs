// Drives `oh-bridge acp` with no server configured, with the official ACP
// SDK's ClientSideConnection, as an editor would: the bridge looks for an
// agent-server the person runs (as VS Code's does), and with none it asks,
// through the client's permission question on a card of its own, to start
// the installed one, then runs the conversation on it; "always" is kept
// for the next run. A second run finds an Agent Canvas-shaped stack (its
// key file, its agent-server on 18000) and asks nothing.
//
// Usage: node acp_local.cjs BRIDGE WORKSPACE start|canvas CHOICES_FILE
// (the environment gives HOME and PATH; the Go test holds the ports).
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { Readable, Writable } = require('node:stream');
const { check, finish } = require('./report.cjs');

const [bridge, ws, mode, choicesFile] = process.argv.slice(2);

async function main() {
  const acp = await import('@agentclientprotocol/sdk');
  const child = spawn(bridge, ['acp', '--log-file', '-', '--log-level', 'info'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const updates = [];
  const permissions = [];
  const client = {
    async sessionUpdate(p) { updates.push(p.update); },
    async requestPermission(p) {
      permissions.push(p);
      return { outcome: { outcome: 'selected', optionId: 'allow_always' } };
    },
  };
  const conn = new acp.ClientSideConnection(() => client, acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  try {
    await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await conn.newSession({ cwd: ws, mcpServers: [] });
    const answer = await conn.prompt({ sessionId, prompt: [{ type: 'text', text: 'Say hello.' }] });
    const said = updates.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
    const cards = updates.filter((u) => u.sessionUpdate === 'tool_call' && u.toolCallId.startsWith('start-agent-server-'));
    if (mode === 'start') {
      check('with no server found, the person is asked to start the installed agent-server, on a card of its own, the command shown',
        permissions.length === 1 && cards.length === 1 && permissions[0].toolCall.toolCallId === cards[0].toolCallId &&
        /^Start the installed OpenHands agent-server \(.*agent-server\): `.*agent-server --host 127\.0\.0\.1 --port <a free port>`$/.test(cards[0].title),
      { permissions, cards });
      const done = updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === cards[0]?.toolCallId && u.status === 'completed');
      check('the card says it started, and that it stops with the agent', done.length === 1 && JSON.stringify(done[0].content).includes('It stops when this agent does'), done);
      check('the conversation ran on it', answer.stopReason === 'end_turn' && said.includes('Hello from the server the bridge started.'), { answer, said });
      const kept = fs.existsSync(choicesFile) ? JSON.parse(fs.readFileSync(choicesFile, 'utf8')) : {};
      check('"always" is kept for the next run', kept.alwaysStartServer === true && (fs.statSync(choicesFile).mode & 0o777) === 0o600, kept);
      check('the log says what it passed over and what it started, never a key',
        log.includes('passed over an agent-server') && log.includes('started an agent-server') && !/OH_SESSION_API_KEYS_0=|sessionApiKey=\w/.test(log), log.slice(-2000));
    } else {
      check('an Agent Canvas stack is found and used with no question', permissions.length === 0 && cards.length === 0 &&
        answer.stopReason === 'end_turn' && said.includes('Hello from Agent Canvas.'), { permissions, said });
      check('the log names Canvas and its key file, not the key', log.includes("Agent Canvas's local stack") && log.includes('api-key.txt') && !log.includes('canvas-acp-key'), log.slice(-2000));
    }
  } catch (err) {
    check('the run', false, `${err.stack ?? JSON.stringify(err)}\n${log.slice(-3000)}`);
  } finally {
    child.stdin.end();
    await new Promise((r) => child.on('exit', r));
  }
  finish();
}

main();
