// Drives the agent-server stand-in (fixtures/peers/agent_server_standin.py)
// with OpenHands' own TypeScript client, @openhands/typescript-client:
// a stand-in that OpenHands' client cannot use would prove nothing. Its
// agent works with a compiled oh-bridge's tools, served over MCP to the
// stand-in; the bridge is driven by an editor played by vscode-jsonrpc.
//   A. OpenHands' client: RemoteConversation starts a conversation whose
//      agent has the bridge's MCP endpoint, streams its events over the
//      event WebSocket (key in the query, as this client sends it), sends a
//      message, and confirms the action the agent waits on.
//   B. The editor: openhands/connect makes the bridge dial the stand-in;
//      its events arrive as openhands/did_receive_event, the confirmation
//      as session/request_permission (allowed once, then rejected), and
//      send_message, pause, resume and disconnect work.
// The stand-in's script, written by the Go test, has each conversation run
// one terminal command, `echo hi >> hello.txt && cat hello.txt`, then answer.
// It stays on the stand-in, not OpenHands' own agent-server: it checks the
// stand-in itself against OpenHands' own client and schema types (with the
// stand-in's --record), which keeps it true for the tests that still need
// it to inject faults. The editor's steps against the real server are
// editor_real.cjs's (TestEditorFaceSteersTheRealServer).
// Usage: node agent_server.cjs <oh-bridge> <stand-in URL> <session API key> <temp dir>
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');

const [bin, serverUrl, apiKey, tmp] = process.argv.slice(2);
if (!bin || !serverUrl || !apiKey || !tmp) {
  console.error('usage: node agent_server.cjs <oh-bridge> <stand-in URL> <session API key> <temp dir>');
  process.exit(2);
}

const { check, finish, sleep, until, executionStatus } = require('./report.cjs');

const lastStatus = (events) => events.map(executionStatus).filter((s) => s !== undefined).pop();
const describe = (e) => (e.kind === 'ConversationStateUpdateEvent' ? `${e.key}=${JSON.stringify(e.value)}` : e.kind);
const observationText = (e) => e.observation.content.map((c) => c.text).join('\n');

async function main() {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(tmp, 'ws-')));
  const home = fs.mkdtempSync(path.join(tmp, 'home-'));
  const hello = path.join(ws, 'hello.txt');
  const child = spawn(bin, ['--stdio', '--workspace', ws, '--log-level', 'error'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: home },
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const asked = [];
  let answer = 'allow_once';
  const editorEvents = [];
  const statuses = [];
  conn.onRequest('session/request_permission', (p) => { asked.push(p); return { outcome: { outcome: 'selected', optionId: answer } }; });
  conn.onRequest('workspace/applyEdit', () => ({ applied: true }));
  conn.onNotification('openhands/did_receive_event', (p) => editorEvents.push(p.event));
  conn.onNotification('openhands/did_change_status', (p) => statuses.push(p));
  const updates = [];
  conn.onNotification('openhands/did_update_conversation', (p) => updates.push(p));
  conn.listen();
  // The client looks for WebSocket on window, else calls require('ws'),
  // which an ES module (this package is one) does not have: in Node it
  // finds none. Give it ws the way a browser would.
  globalThis.window = { WebSocket: require('ws') };
  const oh = await import('@openhands/typescript-client');
  let conversation;
  try {
    await conn.sendRequest('initialize', {
      processId: process.pid,
      capabilities: { workspace: { applyEdit: true }, terminal: { streaming: true }, permissions: { requestPermission: true } },
    });
    await conn.sendNotification('initialized', {});
    const mcp = await conn.sendRequest('mcp/start', {});

    // A. OpenHands' own client.
    const http = new oh.HttpClient({ baseUrl: serverUrl, apiKey });
    const info = (await http.get('/server_info')).data;
    check('A: GET /server_info names an agent-server of version 1.x', /agent server/i.test(info.title) && /^1\./.test(info.version), info);
    const workspace = new oh.RemoteWorkspace({ host: serverUrl, workingDir: ws, apiKey });
    const agent = {
      kind: 'Agent',
      llm: { model: 'litellm_proxy/standin', api_key: 'sk-test', usage_id: 'agent' },
      tools: [],
      mcp_config: { 'oh-bridge': { transport: 'http', url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } } },
    };
    const events = [];
    const errors = [];
    conversation = new oh.RemoteConversation(agent, workspace, {
      callback: (e) => events.push(e),
      onError: (e) => errors.push(String(e)),
    });
    await conversation.start();
    check('A: RemoteConversation.start creates a conversation', /^[0-9a-f-]{36}$/.test(conversation.id), conversation.id);
    await conversation.startWebSocketClient();
    await until(`the first event on the socket (client errors: ${errors})`, () => events.length > 0);
    check('A: the socket sends the state first', events[0].kind === 'ConversationStateUpdateEvent' && events[0].key === 'full_state', events[0]);
    await conversation.setConfirmationPolicy({ kind: 'AlwaysConfirm' });
    await conversation.sendMessage('Append hi to hello.txt.');
    await conversation.run();
    await until('the agent to wait for confirmation', () => lastStatus(events) === 'waiting_for_confirmation');
    const action = events.find((e) => e.kind === 'ActionEvent');
    check('A: the agent asks for the bridge\'s terminal', action && action.tool_name === 'terminal' &&
      action.action.kind === 'MCPToolAction' && action.action.data.command === 'echo hi >> hello.txt && cat hello.txt', action);
    check('A: nothing ran before the confirmation', !fs.existsSync(hello));
    await conversation.sendConfirmationResponse(true);
    await until('the agent to finish', () => lastStatus(events) === 'finished');
    const obs = events.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal');
    check('A: the observation is the bridge\'s terminal output',
      obs && obs.observation.kind === 'MCPToolObservation' && obs.observation.is_error === false &&
      observationText(obs).startsWith("[Tool 'terminal' executed.]\nhi\n[The command completed with exit code 0.]\n" +
        `[Current working directory: ${ws}]`), obs && observationText(obs));
    check('A: the command ran in the editor\'s workspace', fs.readFileSync(hello, 'utf8') === 'hi\n');
    check('A: the bridge asked the editor about the MCP call', asked.length === 1 && asked[0].toolCall.kind === 'execute', asked);
    await conversation.state.refresh();
    const info2 = await conversation.state.getConversationInfo();
    check('A: RemoteState reads the conversation', info2.execution_status === 'finished' && info2.id === conversation.id, info2);
    // getEvents merges the REST pages with what the socket brought; the
    // state snapshots a socket sends on connecting are not in the log.
    const isSnapshot = (e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'full_state';
    const logged = (await conversation.state.events.getEvents()).filter((e) => !isSnapshot(e));
    const streamed = events.filter((e) => !isSnapshot(e));
    check('A: the REST log and the socket agree', JSON.stringify(logged.map((e) => e.id)) === JSON.stringify(streamed.map((e) => e.id)),
      { rest: logged.map(describe), socket: streamed.map(describe) });
    check('A: the client reported no error', errors.length === 0, errors);
    await conversation.close();
    conversation = undefined;

    // B. The editor makes the bridge dial the stand-in.
    const before = asked.length;
    const connected = await conn.sendRequest('openhands/connect', {
      serverUrl,
      sessionApiKey: apiKey,
      llm: { model: 'litellm_proxy/standin', api_key: 'sk-test' },
      confirmationPolicy: 'AlwaysConfirm',
      task: 'Append hi to hello.txt again.',
    });
    check('B: openhands/connect answers the conversation and a v1 status',
      /^[0-9a-f-]{36}$/.test(connected.conversationId) && connected.status.protocol === 'v1' && connected.status.state === 'connected', connected);
    await until('the conversation to finish', () => statuses.some((s) => s.executionStatus === 'finished'));
    // A socket opened late says "finished" before it replays the log.
    await until('the agent\'s answer', () => editorEvents.some((e) => e.kind === 'MessageEvent' && e.source === 'agent'));
    check('B: the editor was asked once, for the command', asked.length === before + 1 && asked[before].toolCall.kind === 'execute' &&
      asked[before].toolCall.rawInput.command === 'echo hi >> hello.txt && cat hello.txt', asked.slice(before));
    check('B: the command ran', fs.readFileSync(hello, 'utf8') === 'hi\nhi\n');
    const kinds = editorEvents.map((e) => e.kind);
    check('B: the editor got the conversation\'s events in V1\'s JSON',
      ['MessageEvent', 'ActionEvent', 'ObservationEvent'].every((k) => kinds.includes(k)) && editorEvents.every((e) => typeof e.id === 'string' && e.timestamp), kinds);
    // The conversation view's updates: the command as a card with its
    // live output from the bridge's own terminal, and the agent's answer.
    const mine = updates.filter((u) => u.conversationId === connected.conversationId).map((u) => u.update);
    const call = mine.find((u) => u.sessionUpdate === 'tool_call' && u.kind === 'execute');
    const callUpdates = call === undefined ? [] : mine.filter((u) => u.toolCallId === call.toolCallId);
    const final = Object.assign({}, ...callUpdates);
    check('B: the view gets the command as a tool call, titled by its command', call !== undefined && call.title.includes('echo hi >> hello.txt') &&
      call._meta.ohBridge.tool === 'terminal', call);
    check('B: the card ran in_progress in the agent\'s terminal, then completed with exit code 0',
      callUpdates.some((u) => u.status === 'in_progress' && /^agent-\d+$/.test(u._meta.ohBridge.terminalId)) && final.status === 'completed' &&
      final.rawOutput.exitCode === 0, callUpdates);
    // The card ends with the output as the agent received it.
    check('B: the card shows the command\'s output', final.content !== undefined && final.content[0].content.text === 'hi\nhi', final.content);
    await until('the agent\'s answer as an update', () => updates.some((u) => u.update.sessionUpdate === 'agent_message_chunk')).catch(() => undefined);
    check('B: the view gets the agent\'s answer', updates.some((u) => u.update.sessionUpdate === 'agent_message_chunk' && u.update.content.text === 'hello.txt has hi.'),
      mine.filter((u) => u.sessionUpdate.endsWith('chunk')));
    let status;
    await until('the status to count every event', async () => {
      status = await conn.sendRequest('openhands/status', {});
      return status.events === editorEvents.length;
    }).catch(() => undefined);
    check('B: openhands/status counts the events', status.events === editorEvents.length && status.runningActions === 0, { status, received: editorEvents.length });

    await conn.sendRequest('openhands/send_message', { text: 'Thanks.' });
    await until('the message to come back', () => editorEvents.some((e) => e.kind === 'MessageEvent' && e.source === 'user' &&
      e.llm_message.content[0].text === 'Thanks.'));
    check('B: openhands/send_message reaches the conversation', true);
    await conn.sendRequest('openhands/pause', {});
    await until('the pause', () => statuses.some((s) => s.executionStatus === 'paused'));
    check('B: openhands/pause pauses', editorEvents.some((e) => e.kind === 'PauseEvent'));
    await conn.sendRequest('openhands/resume', {});
    await until('the resume', () => statuses.at(-1).executionStatus === 'finished');
    check('B: openhands/resume runs it again', true);

    // A new conversation, its action rejected by the editor.
    answer = 'reject_once';
    const second = await conn.sendRequest('openhands/connect', {
      serverUrl, sessionApiKey: apiKey, llm: { model: 'litellm_proxy/standin', api_key: 'sk-test' },
      confirmationPolicy: 'AlwaysConfirm', task: 'And once more.',
    });
    check('B: a new task starts a new conversation', second.conversationId !== connected.conversationId, second);
    await until('the rejection', () => editorEvents.some((e) => e.kind === 'UserRejectObservation'));
    const rejected = editorEvents.find((e) => e.kind === 'UserRejectObservation');
    check('B: the rejection reaches the agent with a reason', rejected.rejection_reason === 'User rejected the action.', rejected);
    check('B: the rejected command did not run', fs.readFileSync(hello, 'utf8') === 'hi\nhi\n');
    await conn.sendRequest('openhands/disconnect', {});
    check('B: openhands/disconnect reports disconnected', statuses.at(-1).state === 'disconnected', statuses.at(-1));
  } catch (err) {
    check('no exception', false, err && err.stack ? err.stack : String(err));
  } finally {
    if (conversation) await conversation.close().catch(() => {});
    conn.dispose();
    child.kill();
  }
  check('the bridge wrote nothing on stderr at --log-level error', stderr === '', stderr);
}

main().then(finish);
