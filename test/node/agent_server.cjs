// Drives the agent-server stand-in (fixtures/peers/agent_server_standin.py)
// with OpenHands' own TypeScript client, @openhands/typescript-client: a
// stand-in that OpenHands' client cannot use would prove nothing.
//
// Two ways to run it:
//
//   node agent_server.cjs <agent_server_standin.py> <temp dir>
//     On its own. It starts the stand-in (with a session key, a script and a
//     state file) and a small MCP server written with
//     @modelcontextprotocol/sdk's server classes, then uses the client's
//     HttpClient, RemoteConversation (with its WebSocket client), RemoteState,
//     RemoteEventsList and ConversationManager:
//       1. a conversation whose agent has no MCP server: a message and the
//          agent's answer, the status changes on the socket, pause and run
//          again, finish, the script used up; events read back with search,
//          count, get; conversations searched, counted, renamed; the
//          server's errors (401, 404, 409, socket 4001/4004, resend modes);
//       2. the stand-in killed and started again on its state: the
//          conversation and its events are still there;
//       3. a conversation in confirmation mode whose agent calls the MCP
//          server's tool: accepted (progress notifications over SSE, 409 for
//          a second run), rejected with a reason, rejected by default.
//     Then everything the stand-in answered (ServerInfo, ConversationInfo,
//     ConversationPage, each event, the search pages) is written into a .ts
//     file, each value typed with the client's generated agent-server schema
//     (dist/generated/agent-server-schema.d.ts), and `tsc --noEmit --strict`
//     judges it: a type error is a FAIL.
//
//   node agent_server.cjs <oh-bridge> <stand-in URL> <session API key> <temp dir>
//     As `go test ./cmd/oh-bridge -run AgentServerClients` runs it, against a
//     stand-in the Go test started with its script (each conversation runs
//     `echo hi >> hello.txt && cat hello.txt`, then answers):
//       A. OpenHands' client: RemoteConversation starts a conversation whose
//          agent has the bridge's MCP endpoint, streams its events, sends a
//          message, and confirms the action the agent waits on.
//       B. The editor: openhands/connect makes the bridge dial the stand-in;
//          its events arrive as openhands/did_receive_event, the confirmation
//          as session/request_permission (allowed once, then rejected), and
//          send_message, pause, resume and disconnect work.
//
// Found in the client, and worked around here only: in Node it finds no
// WebSocket (it calls require('ws') inside an ES module), so it gets ws as
// window.WebSocket; the generated unions name their members after pydantic's
// schema refs ('openhands__sdk__agent__agent__Agent-Output__1') where the
// wire has the class name, so the type check puts the class names back.
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail === undefined ? '' : `\n     ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// until polls cond for up to 30 s.
async function until(what, cond) {
  for (let i = 0; i < 600; i++) {
    const v = await cond();
    if (v) return v;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const executionStatus = (e) => {
  if (e.kind !== 'ConversationStateUpdateEvent') return undefined;
  if (e.key === 'execution_status') return e.value;
  if (e.key === 'full_state') return e.value.execution_status;
  return undefined;
};
const lastStatus = (events) => events.map(executionStatus).filter((s) => s !== undefined).pop();
const describe = (e) => (e.kind === 'ConversationStateUpdateEvent' ? `${e.key}=${JSON.stringify(e.value)}` : e.kind);
const observationText = (e) => e.observation.content.map((c) => c.text).join('\n');
const isSnapshot = (e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'full_state';

// ------------------------------------------------------------- on its own

// startMCPServer serves one tool, terminal, over Streamable HTTP with the
// MCP SDK's server classes, behind a bearer token. It answers on SSE
// streams and sends two progress notifications per call; "slow" takes 1.5 s.
async function startMCPServer() {
  const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
  const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { ListToolsRequestSchema, CallToolRequestSchema, isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');
  const token = crypto.randomBytes(16).toString('hex');
  const calls = [];
  const sessions = new Map();
  const state = { inFlight: 0, protocolVersions: new Set(), unauthorized: 0, cancelled: 0 };

  function newServer() {
    const server = new Server({ name: 'tiny-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{
        name: 'terminal',
        description: 'Runs nothing; says what it was asked to run.',
        inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
        annotations: { title: 'terminal', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const command = req.params.arguments.command;
      calls.push(command);
      state.inFlight++;
      try {
        const progressToken = req.params._meta?.progressToken;
        for (let i = 1; i <= 2; i++) {
          if (progressToken !== undefined) {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: 2 } });
          }
          if (command === 'slow') await sleep(750);
          if (extra.signal.aborted) {
            state.cancelled++;
            break;
          }
        }
        return { content: [{ type: 'text', text: `ran: ${command}` }], isError: false };
      } finally {
        state.inFlight--;
      }
    });
    return server;
  }

  const httpServer = http.createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      state.unauthorized++;
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (req.headers['mcp-protocol-version']) state.protocolVersions.add(req.headers['mcp-protocol-version']);
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    const sid = req.headers['mcp-session-id'];
    let transport = sid && sessions.get(sid);
    if (!transport) {
      if (sid || !isInitializeRequest(body)) {
        res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"no session"}');
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise((r) => httpServer.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${httpServer.address().port}/mcp`;
  return { url, token, calls, sessions, state, close: () => httpServer.close() };
}

// startStandin runs the stand-in and waits for its PORT line.
async function startStandin(script, args) {
  const child = spawn('/usr/bin/python3', [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const s = { child, lines: [], stderr: '', port: 0 };
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      s.lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  child.stderr.on('data', (d) => { s.stderr += d; });
  const line = await until('the stand-in to listen', () => s.lines.find((l) => l.startsWith('PORT ')));
  s.port = Number(line.slice(5));
  s.url = `http://127.0.0.1:${s.port}`;
  s.stop = () => new Promise((r) => { child.once('exit', r); child.kill('SIGKILL'); });
  return s;
}

// socketSession opens the event socket with ws and collects what comes.
function socketSession(url, query, firstFrame) {
  const WebSocket = require('ws');
  const ws = new WebSocket(url + (query ? `?${query}` : ''));
  const s = { ws, events: [], closed: null };
  ws.on('open', () => { if (firstFrame) ws.send(JSON.stringify(firstFrame)); });
  ws.on('message', (d) => s.events.push(JSON.parse(d.toString())));
  ws.on('close', (code, reason) => { s.closed = { code, reason: reason.toString() }; });
  ws.on('unexpected-response', (_req, res) => { s.closed = { code: `HTTP ${res.statusCode}` }; });
  ws.on('error', () => {});
  return s;
}

async function standalone(standinScript, tmp) {
  const work = fs.realpathSync(fs.mkdtempSync(path.join(tmp, 'agent-server-')));
  const key = `key-${crypto.randomBytes(8).toString('hex')}`;
  const stateFile = path.join(work, 'state.json');
  const scriptA = path.join(work, 'script-a.json');
  const scriptB = path.join(work, 'script-b.json');
  fs.writeFileSync(scriptA, JSON.stringify({ turns: [
    [{ message: 'Hello from the scripted agent.' }],
    [{ finish: 'Finished after the pause.' }],
  ] }));
  fs.writeFileSync(scriptB, JSON.stringify({ turns: [
    [{ tool: 'terminal', arguments: { command: 'slow' }, thought: 'Run the slow one.' }],
    [{ tool: 'terminal', arguments: { command: 'echo rejected' } }],
    [{ tool: 'terminal', arguments: { command: 'echo rejected-by-default' } }],
    [{ message: 'Done with the tools.' }],
  ] }));

  // Everything the stand-in answered, for the type check.
  const samples = [];
  const sample = (label, type, value) => samples.push({ label, type, value });

  globalThis.window = { WebSocket: require('ws') };
  const oh = await import('@openhands/typescript-client');
  const mcp = await startMCPServer();
  let server = await startStandin(standinScript, ['--port', '0', '--session-api-key', key, '--script', scriptA, '--state', stateFile]);
  const conversations = [];
  try {
    // --- 1. a conversation without tools
    const client = new oh.HttpClient({ baseUrl: server.url, apiKey: key });
    const info = (await client.get('/server_info')).data;
    sample('GET /server_info', 'ServerInfo', info);
    check('1: /server_info is an agent-server 1.43.1 titled "OpenHands Agent Server"',
      info.title === 'OpenHands Agent Server' && info.version === '1.43.1' && typeof info.uptime === 'number', info);
    const alive = (await client.get('/alive')).data;
    check('1: /alive and /health answer {"status": "ok"}', alive.status === 'ok' && (await client.get('/health')).data.status === 'ok');

    const workspace = new oh.RemoteWorkspace({ host: server.url, workingDir: work, apiKey: key });
    const agent = { kind: 'Agent', llm: { model: 'litellm_proxy/standin', api_key: 'sk-test', usage_id: 'agent' }, tools: [], mcp_config: {} };
    const events = [];
    const errors = [];
    const conv = new oh.RemoteConversation(agent, workspace, { callback: (e) => events.push(e), onError: (e) => errors.push(String(e)) });
    conversations.push(conv);
    await conv.start();
    check('1: RemoteConversation.start creates a conversation', /^[0-9a-f-]{36}$/.test(conv.id), conv.id);
    await conv.startWebSocketClient();
    await until('the first event on the socket', () => events.length > 0);
    check('1: the socket (key in the query, as this client sends it) starts with the state', isSnapshot(events[0]) &&
      events[0].value.execution_status === 'idle' && events[0].value.id === conv.id, events[0]);

    await conv.sendMessage('Hello?');
    await conv.run();
    const reply = await until('the agent\'s answer', () => events.find((e) => e.kind === 'MessageEvent' && e.source === 'agent'));
    check('1: the agent answers the message', reply.llm_message.role === 'assistant' &&
      reply.llm_message.content[0].text === 'Hello from the scripted agent.', reply);
    await until('finished', () => lastStatus(events) === 'finished');
    const statusEvents = events.filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status');
    check('1: the status goes running, then finished, as execution_status events', statusEvents.map((e) => e.value).join(',') === 'running,finished',
      statusEvents.map((e) => e.value));
    check('1: the events carry id, timestamp, source and kind', events.every((e) => typeof e.id === 'string' && /^\d{4}-\d\d-\d\dT/.test(e.timestamp) &&
      ['agent', 'user', 'environment'].includes(e.source) && typeof e.kind === 'string'), events.map(describe));
    const user = events.find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    check('1: the user\'s message is a MessageEvent with its text', user && user.llm_message.content[0].text === 'Hello?', user);
    const prompt = events.find((e) => e.kind === 'SystemPromptEvent');
    check('1: the agent without MCP servers has only finish and think', prompt && prompt.tools.map((t) => `${t.kind}:${t.title}`).join(',') === 'FinishTool:finish,ThinkTool:think',
      prompt && prompt.tools);

    // Pause and run again: a message without run leaves it idle, pause
    // pauses it, run goes on with the next turn (finish).
    await conv.sendMessage('Please wait.');
    await until('idle', () => lastStatus(events) === 'idle');
    await conv.pause();
    await until('paused', () => lastStatus(events) === 'paused');
    check('1: pause sends a PauseEvent', events.some((e) => e.kind === 'PauseEvent'));
    await conv.run();
    await until('finished again', () => lastStatus(events) === 'finished' && events.some((e) => e.kind === 'ObservationEvent'));
    const finish = events.find((e) => e.kind === 'ActionEvent');
    const finishObs = events.find((e) => e.kind === 'ObservationEvent');
    check('1: run resumes: the finish tool (FinishAction, FinishObservation)', finish && finish.tool_name === 'finish' &&
      finish.action.kind === 'FinishAction' && finish.action.message === 'Finished after the pause.' &&
      finishObs.observation.kind === 'FinishObservation' && finishObs.action_id === finish.id, { finish, finishObs });
    await conv.pause();
    await sleep(200);
    check('1: pause of a finished conversation changes nothing', lastStatus(events) === 'finished' &&
      events.filter((e) => e.kind === 'PauseEvent').length === 1, events.slice(-3).map(describe));

    await conv.sendMessage('Anything else?');
    await conv.run();
    await until('the script to run out', () => server.lines.some((l) => l === `SCRIPT_DONE ${conv.id}`));
    const last = await until('the last answer', () => events.filter((e) => e.kind === 'MessageEvent' && e.source === 'agent')[1]);
    check('1: with the script used up the agent says so', last.llm_message.content[0].text === '(the scripted agent has nothing more to do)', last);
    await until('finished a third time', () => lastStatus(events) === 'finished');
    check('1: the client reported no error', errors.length === 0, errors);

    const fail = async (p) => { try { await p; return null; } catch (e) { return e; } };
    // Events read back.
    const logged = events.filter((e) => !isSnapshot(e));
    const list = conv.state.events;
    const pages = [];
    let page = await list.search({ limit: 4 });
    pages.push(page);
    while (page.next_page_id) {
      page = await list.search({ limit: 4, page_id: page.next_page_id });
      pages.push(page);
    }
    for (const p of pages) sample('events/search page', '{ items: Array<unknown>; next_page_id: string | null }', p);
    const searched = pages.flatMap((p) => p.items);
    check('1: events/search pages through the log as the socket sent it, in order', JSON.stringify(searched.map((e) => e.id)) === JSON.stringify(logged.map((e) => e.id)),
      { search: searched.map(describe), socket: logged.map(describe) });
    check('1: search and socket send the same JSON', JSON.stringify(searched) === JSON.stringify(logged));
    const desc = await list.search({ sort_order: 'TIMESTAMP_DESC', limit: 100 });
    check('1: sort_order TIMESTAMP_DESC reverses it', JSON.stringify(desc.items.map((e) => e.id)) === JSON.stringify(logged.map((e) => e.id).reverse()));
    const count = await list.count();
    check('1: events/count counts them', count === logged.length, { count, logged: logged.length });
    const messages = await list.search({ kind: 'openhands.sdk.event.llm_convertible.message.MessageEvent' });
    check('1: the kind filter takes the module path of the class, as the server compares it',
      messages.items.length === logged.filter((e) => e.kind === 'MessageEvent').length && messages.items.every((e) => e.kind === 'MessageEvent') &&
      (await list.search({ kind: 'MessageEvent' })).items.length === 0, messages.items.map(describe));
    const fromAgent = await list.count({ source: 'agent' });
    check('1: the source filter', fromAgent === logged.filter((e) => e.source === 'agent').length, fromAgent);
    const wait = await list.search({ body: 'WAIT' });
    check('1: the body filter finds the message, case-insensitively', wait.items.length === 1 && wait.items[0].llm_message.content[0].text === 'Please wait.', wait.items);
    const since = await list.search({ timestamp__gte: finish.timestamp });
    check('1: timestamp__gte', since.items.length > 0 && since.items[0].id === finish.id, since.items.map(describe));
    const one = await list.getEventById(finish.id);
    check('1: events/{id} gets one event', JSON.stringify(one) === JSON.stringify(finish), one);
    const unknownEvent = await fail(list.getEventById('no-such-event'));
    check('1: an unknown event id: the EventLog\'s KeyError, a 500', unknownEvent && unknownEvent.status === 500 &&
      unknownEvent.response.detail === 'Internal Server Error' && unknownEvent.response.exception === "'Unknown event_id: no-such-event'",
    unknownEvent && unknownEvent.response);

    // Conversations.
    const manager = new oh.ConversationManager({ host: server.url, apiKey: key });
    const got = await manager.getConversation(conv.id);
    sample('GET /api/conversations/{id}', 'S.ConversationInfo', got);
    check('1: the conversation is finished, with the agent as sent (api_key masked)', got.execution_status === 'finished' &&
      got.agent.llm.api_key === '**********' && got.workspace.working_dir === work && got.workspace.kind === 'LocalWorkspace', got);
    check('1: its title is the first message, as when the title LLM is not reachable', got.title === 'Hello?', got.title);
    const found = await manager.searchConversations();
    sample('GET /api/conversations/search', 'S.ConversationPage', found);
    check('1: searchConversations lists it', found.items.length === 1 && found.items[0].id === conv.id && found.next_page_id === null, found);
    check('1: countConversations counts it', (await manager.countConversations()) === 1 && (await manager.countConversations({ status: 'running' })) === 0);
    const unknownId = crypto.randomUUID();
    const batch = await manager.getConversations([conv.id, unknownId]);
    check('1: getConversations answers null for an unknown id', batch.length === 2 && batch[0].id === conv.id && batch[1] === null, batch);
    await manager.updateConversation(conv.id, { title: 'Renamed' });
    check('1: updateConversation renames it', (await manager.getConversation(conv.id)).title === 'Renamed');
    check('1: the agent\'s final response', (await conv.getAgentFinalResponse()) === '(the scripted agent has nothing more to do)');

    // The server's errors.
    let err = await fail(new oh.HttpClient({ baseUrl: server.url }).get('/api/conversations/search'));
    check('1: no session key: 401 {"detail": "Unauthorized"}', err && err.status === 401 && err.response.detail === 'Unauthorized', err && err.message);
    err = await fail(manager.getConversation(unknownId));
    check('1: an unknown conversation: 404 {"detail": "Not Found"}', err && err.status === 404 && err.response.detail === 'Not Found', err && err.message);
    err = await fail(client.get(`/api/conversations/${unknownId}/events/search`));
    check('1: the event routes say "Conversation not found: <id>"', err && err.status === 404 && err.response.detail === `Conversation not found: ${unknownId}`, err && err.message);
    err = await fail(client.post(`/api/conversations/${unknownId}/pause`));
    check('1: pause of an unknown conversation: 400', err && err.status === 400, err && err.message);
    err = await fail(client.get(`/api/conversations/${conv.id}/events/search`, { params: { limit: 101 } }));
    check('1: limit over 100: 422', err && err.status === 422 && err.response.detail[0].loc.join('.') === 'query.limit', err && err.response);

    // The socket's auth and resend modes, with ws directly.
    const wsURL = `${server.url.replace('http:', 'ws:')}/sockets/events/${conv.id}`;
    let s = socketSession(wsURL, '', { type: 'auth', session_api_key: 'wrong' });
    await until('the socket to close', () => s.closed);
    check('1: a wrong key in the first frame: close 4001', s.closed.code === 4001 && s.closed.reason === 'Authentication failed', s.closed);
    s = socketSession(`${server.url.replace('http:', 'ws:')}/sockets/events/${unknownId}`, '', { type: 'auth', session_api_key: key });
    await until('the socket to close', () => s.closed);
    check('1: an unknown conversation: close 4004', s.closed.code === 4004 && s.closed.reason === 'Conversation not found', s.closed);
    s = socketSession(wsURL, 'resend_mode=all', { type: 'auth', session_api_key: key });
    await until('the history', () => s.events.length === logged.length + 1);
    await sleep(200);
    check('1: first-frame auth, resend_mode=all: the state, then every event once, in order', isSnapshot(s.events[0]) &&
      JSON.stringify(s.events.slice(1).map((e) => e.id)) === JSON.stringify(logged.map((e) => e.id)), s.events.map(describe));
    s.ws.close();
    s = socketSession(wsURL, `resend_mode=since&after_timestamp=${encodeURIComponent(finish.timestamp)}&session_api_key=${key}`);
    const fromFinish = logged.slice(logged.findIndex((e) => e.id === finish.id));
    await until('the history since', () => s.events.length === fromFinish.length + 1);
    check('1: resend_mode=since sends the events from after_timestamp on', JSON.stringify(s.events.slice(1).map((e) => e.id)) === JSON.stringify(fromFinish.map((e) => e.id)),
      s.events.map(describe));
    s.ws.close();
    s = socketSession(wsURL, 'resend_all=true', { type: 'auth', session_api_key: key });
    await until('the history (resend_all)', () => s.events.length === logged.length + 1);
    check('1: the deprecated resend_all=true resends everything', true);
    s.ws.close();
    const eventsBefore = logged.map((e) => e.id);
    const statusBefore = got.execution_status;
    await conv.close();
    conversations.length = 0;

    // --- 2. the stand-in dies and comes back on its state
    const port = server.port;
    await server.stop();
    server = await startStandin(standinScript, ['--port', String(port), '--session-api-key', key, '--script', scriptB, '--state', stateFile]);
    const manager2 = new oh.ConversationManager({ host: server.url, apiKey: key });
    const back = await manager2.getConversation(conv.id);
    check('2: after a restart on the same port the conversation is there, finished as it was', back.execution_status === statusBefore && back.title === 'Renamed', back);
    const reloaded = new oh.RemoteEventsList(new oh.HttpClient({ baseUrl: server.url, apiKey: key }), conv.id);
    const afterIds = (await reloaded.getEvents()).map((e) => e.id);
    check('2: and so are its events', JSON.stringify(afterIds) === JSON.stringify(eventsBefore), { before: eventsBefore.length, after: afterIds.length });

    // --- 3. confirmation, with an MCP tool
    const ws2 = new oh.RemoteWorkspace({ host: server.url, workingDir: work, apiKey: key });
    const agent2 = { ...agent, mcp_config: { tiny: { transport: 'http', url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } } } };
    const ev = [];
    const errors2 = [];
    const conv2 = new oh.RemoteConversation(agent2, ws2, { callback: (e) => ev.push(e), onError: (e) => errors2.push(String(e)) });
    conversations.push(conv2);
    await conv2.start();
    await conv2.startWebSocketClient();
    await until('the state on the socket', () => ev.length > 0);
    await conv2.setConfirmationPolicy({ kind: 'AlwaysConfirm' });
    const policy = await until('the policy change', () => ev.find((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'confirmation_policy'));
    check('3: setConfirmationPolicy is a confirmation_policy state update', policy.value.kind === 'AlwaysConfirm', policy);
    await conv2.sendMessage('Use the tool.');
    await conv2.run();
    await until('waiting_for_confirmation', () => lastStatus(ev) === 'waiting_for_confirmation');
    const actions = () => ev.filter((e) => e.kind === 'ActionEvent');
    let action = actions()[0];
    check('3: the agent asks for the MCP tool: ActionEvent with MCPToolAction {data}', action.tool_name === 'terminal' &&
      action.action.kind === 'MCPToolAction' && action.action.data.command === 'slow' && action.thought[0].text === 'Run the slow one.' &&
      action.tool_call.name === 'terminal' && JSON.parse(action.tool_call.arguments).command === 'slow' && action.security_risk === 'UNKNOWN', action);
    const prompt2 = ev.find((e) => e.kind === 'SystemPromptEvent');
    check('3: the agent\'s tools are the MCP server\'s terminal, finish and think', prompt2 &&
      prompt2.tools.map((t) => `${t.kind}:${t.title}`).join(',') === 'MCPToolDefinition:terminal,FinishTool:finish,ThinkTool:think' &&
      prompt2.tools[0].mcp_tool.name === 'terminal', prompt2 && prompt2.tools);
    check('3: the stand-in prints CONFIRMATION_WAIT with the action\'s id', server.lines.includes(`CONFIRMATION_WAIT ${action.id}`), server.lines);
    check('3: nothing ran before the confirmation', mcp.calls.length === 0, mcp.calls);

    await conv2.sendConfirmationResponse(true);
    await until('the slow call', () => mcp.state.inFlight > 0);
    err = await fail(conv2.run());
    check('3: run while the agent runs: 409', err && err.status === 409 &&
      err.response.detail === 'Conversation already running. Wait for completion or pause first.', err && err.message);
    const obs = await until('the observation', () => ev.find((e) => e.kind === 'ObservationEvent'));
    check('3: accepted: the MCP observation is "[Tool \'terminal\' executed.]" and the tool\'s text', obs.observation.kind === 'MCPToolObservation' &&
      observationText(obs) === "[Tool 'terminal' executed.]\nran: slow" && obs.observation.is_error === false &&
      obs.observation.tool_name === 'terminal' && obs.action_id === action.id && obs.tool_call_id === action.tool_call_id, obs);
    const result = server.lines.find((l) => l.startsWith('TOOL_RESULT '));
    const raw = result && JSON.parse(result.slice(12));
    check('3: TOOL_RESULT has the raw MCP result', raw && raw.tool === 'terminal' && raw.is_error === false &&
      raw.result.content[0].text === 'ran: slow' && raw.result.isError === false, result);
    const progress = server.lines.find((l) => l.startsWith('PROGRESS '));
    check('3: the progress notifications came over SSE and were counted', progress === 'PROGRESS 2', server.lines);
    check('3: the stand-in spoke MCP 2025-06-18 in one session', mcp.sessions.size === 1 && [...mcp.state.protocolVersions].join() === '2025-06-18' &&
      mcp.state.unauthorized === 0, { sessions: mcp.sessions.size, versions: [...mcp.state.protocolVersions] });

    await until('the second action to wait', () => actions().length === 2 && lastStatus(ev) === 'waiting_for_confirmation');
    action = actions()[1];
    await conv2.sendConfirmationResponse(false, 'Not this one.');
    let rejected = await until('the rejection', () => ev.find((e) => e.kind === 'UserRejectObservation'));
    await until('idle', () => lastStatus(ev) === 'idle');
    check('3: rejected: a UserRejectObservation with the reason, and the agent idle', rejected.action_id === action.id &&
      rejected.rejection_reason === 'Not this one.' && rejected.rejection_source === 'user' && rejected.tool_name === 'terminal', rejected);
    check('3: the rejected command did not run', !mcp.calls.includes('echo rejected'), mcp.calls);
    await conv2.run();
    await until('the third action to wait', () => actions().length === 3 && lastStatus(ev) === 'waiting_for_confirmation');
    await conv2.sendConfirmationResponse(false);
    rejected = await until('the second rejection', () => ev.filter((e) => e.kind === 'UserRejectObservation')[1]);
    check('3: rejected without a reason: "User rejected the action."', rejected.rejection_reason === 'User rejected the action.', rejected);
    await conv2.run();
    await until('the end', () => server.lines.includes(`SCRIPT_DONE ${conv2.id}`) && lastStatus(ev) === 'finished');
    const answer = ev.filter((e) => e.kind === 'MessageEvent' && e.source === 'agent').pop();
    check('3: then the agent answers and finishes', answer && answer.llm_message.content[0].text === 'Done with the tools.', answer);
    check('3: the MCP server ran only the accepted command', JSON.stringify(mcp.calls) === '["slow"]', mcp.calls);
    const logged2 = ev.filter((e) => !isSnapshot(e));
    const read2 = await conv2.state.events.getEvents();
    check('3: the REST log and the socket agree', JSON.stringify(read2.filter((e) => !isSnapshot(e)).map((e) => e.id)) === JSON.stringify(logged2.map((e) => e.id)),
      { rest: read2.map(describe), socket: logged2.map(describe) });
    check('3: the client reported no error', errors2.length === 0, errors2);

    // Interrupt: a third conversation runs the slow call without asking.
    const ev3 = [];
    const conv3 = new oh.RemoteConversation(agent2, ws2, { callback: (e) => ev3.push(e) });
    conversations.push(conv3);
    await conv3.start({ initialMessage: 'Run the slow one and be interrupted.' });
    await conv3.startWebSocketClient();
    await until('the slow call again', () => mcp.state.inFlight > 0);
    await new oh.HttpClient({ baseUrl: server.url, apiKey: key }).post(`/api/conversations/${conv3.id}/interrupt`);
    await until('the interrupt', () => ev3.some((e) => e.kind === 'InterruptEvent'));
    const orphan = ev3.find((e) => e.kind === 'AgentErrorEvent');
    check('3: interrupt: the call in flight gets an AgentErrorEvent, then paused, then an InterruptEvent', orphan &&
      orphan.error === 'Tool call interrupted before completion. The conversation was paused.' && orphan.tool_name === 'terminal' &&
      ev3.filter((e) => !isSnapshot(e)).slice(-3).map(describe).join() === 'AgentErrorEvent,execution_status="paused",InterruptEvent',
    ev3.map(describe));
    await until('the MCP call to end', () => mcp.state.inFlight === 0);
    check('3: interrupt cancelled the MCP call', mcp.state.cancelled === 1, mcp.state);
    const page2 = await conv2.state.events.search({ limit: 100 });
    sample('events/search page', '{ items: Array<unknown>; next_page_id: string | null }', page2);
    sample('GET /api/conversations/{id}', 'S.ConversationInfo', await manager2.getConversation(conv2.id));
    sample('GET /api/conversations/search', 'S.ConversationPage', await manager2.searchConversations({ limit: 1 }));
    for (const e of [...events, ...ev, ...ev3, ...searched, ...page2.items]) sample(`event ${e.kind}`, `S.${e.kind}`, e);

    await manager2.deleteConversation(conv.id);
    err = await fail(manager2.getConversation(conv.id));
    check('3: deleteConversation deletes it', err && err.status === 404, err && err.message);
    err = await fail(manager2.deleteConversation(conv.id));
    check('3: deleting it again: 400', err && err.status === 400, err && err.message);
  } catch (e) {
    check('no exception', false, e && e.stack ? e.stack : String(e));
  } finally {
    for (const c of conversations) await c.close().catch(() => {});
    await server.stop();
    mcp.close();
  }
  check('the stand-in wrote nothing on stderr', server.stderr === '', server.stderr);
  typeCheck(samples, work);
}

// typeCheck writes each sample as an object literal typed with the
// agent-server schema the client ships, and runs tsc --noEmit --strict.
function typeCheck(samples, work) {
  const pkg = path.join(__dirname, 'node_modules', '@openhands', 'typescript-client');
  const schema = fs.readFileSync(path.join(pkg, 'dist', 'generated', 'agent-server-schema.d.ts'), 'utf8')
    .replace(/'openhands__\w+?__([A-Za-z0-9]+)-(?:Input|Output)__1'/g, "'$1'");
  const dir = fs.mkdtempSync(path.join(work, 'types-'));
  fs.writeFileSync(path.join(dir, 'agent-server-schema.d.ts'), schema);
  const lines = ["import type * as S from './agent-server-schema.js';",
    `import type { ServerInfo } from ${JSON.stringify(path.join(pkg, 'dist', 'types', 'base.js'))};`];
  const owner = [null, null];
  const seen = new Set();
  const kinds = new Set();
  let n = 0;
  for (const s of samples) {
    const literal = JSON.stringify(s.value, null, 1);
    if (seen.has(s.type + literal)) continue;
    seen.add(s.type + literal);
    if (s.type.startsWith('S.') && !new RegExp(`^export type ${s.type.slice(2)} = `, 'm').test(schema)) {
      check(`${s.label} has a type in the schema`, false, s.type);
      continue;
    }
    if (s.label.startsWith('event ')) kinds.add(s.label.slice(6));
    s.errors = [];
    for (const l of `export const v${++n}: ${s.type} = ${literal};`.split('\n')) {
      lines.push(l);
      owner.push(s);
    }
  }
  fs.writeFileSync(path.join(dir, 'check.ts'), lines.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { skipLibCheck: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', types: [] },
    files: ['check.ts'],
  }));
  let out = '';
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '--noEmit', '--strict', '-p', dir], { encoding: 'utf8' });
  } catch (e) {
    out = String(e.stdout || '') + String(e.stderr || '');
  }
  const loose = [];
  let current = null;
  for (const l of out.split('\n')) {
    const m = /check\.ts\((\d+),\d+\): (error .*)$/.exec(l);
    if (m) {
      current = owner[Number(m[1]) - 1];
      if (current) current.errors.push(m[2]);
      else loose.push(l);
    } else if (current && l.trim()) {
      current.errors.push(l.trim());
    } else if (l.trim()) {
      loose.push(l);
    }
  }
  check('tsc --noEmit --strict ran', loose.length === 0, loose.join('\n'));
  const byLabel = new Map();
  for (const s of samples) {
    if (!s.errors) continue;
    const b = byLabel.get(s.label) || { n: 0, errors: [] };
    b.n++;
    b.errors.push(...s.errors);
    byLabel.set(s.label, b);
  }
  for (const [label, b] of byLabel) {
    check(`types: ${label} is the schema's ${samples.find((s) => s.label === label).type} (${b.n} checked)`, b.errors.length === 0,
      b.errors.slice(0, 8).join('\n     '));
  }
  for (const k of ['ActionEvent', 'ObservationEvent', 'MessageEvent', 'ConversationStateUpdateEvent', 'SystemPromptEvent',
    'UserRejectObservation', 'PauseEvent', 'AgentErrorEvent', 'InterruptEvent']) {
    check(`types: an event ${k} was checked`, kinds.has(k));
  }
}

// ---------------------------------------------------- with the bridge

async function withBridge(bin, serverUrl, apiKey, tmp) {
  const rpc = require('vscode-jsonrpc/node');
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
  conn.listen();
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
    const client = new oh.HttpClient({ baseUrl: serverUrl, apiKey });
    const info = (await client.get('/server_info')).data;
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
    check('A: the socket sends the state first', isSnapshot(events[0]), events[0]);
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
    // state snapshots a socket sends are not in the log.
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
    check('B: the editor was asked once, for the command', asked.length === before + 1 && asked[before].toolCall.kind === 'execute' &&
      asked[before].toolCall.rawInput.command === 'echo hi >> hello.txt && cat hello.txt', asked.slice(before));
    check('B: the command ran', fs.readFileSync(hello, 'utf8') === 'hi\nhi\n');
    const kinds = editorEvents.map((e) => e.kind);
    check('B: the editor got the conversation\'s events in V1\'s JSON',
      ['MessageEvent', 'ActionEvent', 'ObservationEvent'].every((k) => kinds.includes(k)) && editorEvents.every((e) => typeof e.id === 'string' && e.timestamp), kinds);
    const status = await conn.sendRequest('openhands/status', {});
    check('B: openhands/status counts the events', status.events === editorEvents.length && status.runningActions === 0, status);

    await conn.sendRequest('openhands/send_message', { text: 'Thanks.' });
    await until('the message to come back', () => editorEvents.some((e) => e.kind === 'MessageEvent' && e.source === 'user' &&
      e.llm_message.content[0].text === 'Thanks.'));
    check('B: openhands/send_message reaches the conversation', true);

    // A new conversation, its action rejected by the editor: the agent is
    // idle then, so pause pauses it and resume goes on with the next turn
    // (a finished conversation ignores a pause, as LocalConversation.pause).
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
    await until('idle after the rejection', () => statuses.at(-1).executionStatus === 'idle');
    await conn.sendRequest('openhands/pause', {});
    await until('the pause', () => statuses.some((s) => s.executionStatus === 'paused'));
    check('B: openhands/pause pauses', editorEvents.some((e) => e.kind === 'PauseEvent'));
    await conn.sendRequest('openhands/resume', {});
    await until('the resume', () => statuses.at(-1).executionStatus === 'finished' &&
      editorEvents.some((e) => e.kind === 'MessageEvent' && e.source === 'agent' && e.llm_message.content[0].text === 'hello.txt has hi.'));
    check('B: openhands/resume runs it again', true);
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

async function main() {
  const args = process.argv.slice(2);
  if (args.length === 2) return standalone(...args);
  if (args.length === 4) return withBridge(...args);
  console.error('usage: node agent_server.cjs <agent_server_standin.py> <temp dir>\n' +
    '       node agent_server.cjs <oh-bridge> <stand-in URL> <session API key> <temp dir>');
  process.exit(2);
}

main().then(() => {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
});
