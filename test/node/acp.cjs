// Drives `oh-bridge acp` with the official ACP TypeScript SDK's
// ClientSideConnection (an independent client, as an editor would), through
// full prompt turns against OpenHands' own agent-server, whose agent's
// model is a scripted one (the Go test's, one per scenario): with the
// client's fs on and off, a rejected permission, a cancel in the middle of
// a command, a client that shows commands in display terminals of its own
// (_meta.terminal_output), session/load replaying the history,
// session/list, session/resume and session/close, the answer with no
// server, and an edit of a file hard-linked from outside the workspace
// with a client that writes in place. Every message the bridge writes is
// checked against the ACP v1 schema of the current SDK
// (schema/v1/schema.json).
//
// Usage: node acp.cjs BRIDGE CONFIG.json
//
// CONFIG is {"server", "key": the agent-server's URL and session API key,
// "model": the LLM's model name, "models": {scenario letter: the base URL
// of its scripted model}, "ws": the workspace, "cancelServer": the
// stand-in for K, "scenarios": the letters to run (all when absent)}.
// K's cancelServer is the agent-server stand-in, not the real server: its
// interrupt arrives late on purpose (--interrupt-delay), a fault the real
// server cannot be made to show every time.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Readable, Writable } = require('node:stream');
const Ajv2020 = require('ajv/dist/2020').default;
const { check, finish, sleep } = require('./report.cjs');

const [bridge, configFile] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
const { ws } = config;
// runs says whether the scenario of this letter is run.
const runs = (letter) => config.scenarios === undefined || config.scenarios.includes(letter);
// envFor is the bridge's environment for a scenario: the real server, and
// the scenario's scripted model as the agent's LLM.
const envFor = (letter) => ({
  OH_BRIDGE_SERVER_URL: config.server, OH_BRIDGE_SESSION_API_KEY: config.key,
  LLM_MODEL: config.model, LLM_API_KEY: 'sk-scripted', LLM_BASE_URL: config.models[letter] || '',
});
const notes = path.join(ws, 'notes.txt');
const ran = path.join(ws, 'ran.txt');

// The judge: the ACP v1 schema, with the shape of each message the bridge
// sends picked by its method.
const schema = JSON.parse(fs.readFileSync(require.resolve('acp-sdk-current/schema/v1/schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(schema, 'acp');
const shape = (def) => ajv.compile({ $ref: `acp#/$defs/${def}` });
const paramsOf = {
  'session/update': shape('SessionNotification'),
  'session/request_permission': shape('RequestPermissionRequest'),
  'fs/read_text_file': shape('ReadTextFileRequest'),
  'fs/write_text_file': shape('WriteTextFileRequest'),
};
const resultOf = {
  initialize: shape('InitializeResponse'),
  'session/new': shape('NewSessionResponse'),
  'session/load': shape('LoadSessionResponse'),
  'session/resume': shape('ResumeSessionResponse'),
  'session/list': shape('ListSessionsResponse'),
  'session/close': shape('CloseSessionResponse'),
  'session/prompt': shape('PromptResponse'),
};
const schemaErrors = [];
let judged = 0;

// lines splits a byte stream into JSON messages and hands each to fn.
function lines(fn) {
  let buf = '';
  return (chunk) => {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim() !== '') fn(JSON.parse(line));
    }
  };
}

// start runs the bridge and connects the SDK's client to it.
async function start(acp, client, env) {
  const child = spawn(bridge, ['acp', '--config', path.join(ws, '..', 'no-config.json')], {
    env: { ...process.env, OH_BRIDGE_SERVER_URL: '', LLM_MODEL: '', ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const sent = new Map(); // request id → method, of the client's requests
  const noteSent = lines((m) => { if (m.method !== undefined && m.id !== undefined) sent.set(m.id, m.method); });
  const writer = Writable.toWeb(child.stdin).getWriter();
  const tapped = new WritableStream({
    write(chunk) { noteSent(Buffer.from(chunk)); return writer.write(chunk); },
    close() { return writer.close(); },
  });
  child.stdout.on('data', lines((m) => {
    judged++;
    let validate;
    if (m.method !== undefined) validate = paramsOf[m.method];
    else if (m.result !== undefined) validate = resultOf[sent.get(m.id)];
    if (m.method === undefined && m.error !== undefined) {
      if (typeof m.error.code !== 'number' || typeof m.error.message !== 'string') schemaErrors.push({ m, errors: 'bad error object' });
      return;
    }
    const target = m.method !== undefined ? m.params : m.result;
    if (validate === undefined) {
      schemaErrors.push({ m, errors: 'a message of no known shape' });
    } else if (!validate(target)) {
      schemaErrors.push({ m, errors: validate.errors });
    }
  }));
  const stream = acp.ndJsonStream(tapped, Readable.toWeb(child.stdout));
  const conn = new acp.ClientSideConnection(() => client, stream);
  return { child, conn };
}

// recorder is a client that keeps every update and answers as told.
function recorder({ buffers, permit }) {
  const r = {
    updates: [],
    permissions: [],
    reads: [],
    writes: [],
    async sessionUpdate(p) { r.updates.push(p.update); },
    async requestPermission(p) {
      r.permissions.push(p);
      const optionId = permit(p.toolCall);
      return { outcome: { outcome: 'selected', optionId } };
    },
  };
  if (buffers !== undefined) {
    r.readTextFile = async (p) => {
      r.reads.push(p.path);
      return { content: buffers.has(p.path) ? buffers.get(p.path) : fs.readFileSync(p.path, 'utf8') };
    };
    r.writeTextFile = async (p) => {
      r.writes.push(p);
      buffers.set(p.path, p.content);
      return {};
    };
  }
  return r;
}

const calls = (r) => {
  const byId = new Map();
  for (const u of r.updates) {
    if (u.sessionUpdate === 'tool_call') byId.set(u.toolCallId, { ...u });
    else if (u.sessionUpdate === 'tool_call_update' && byId.has(u.toolCallId)) Object.assign(byId.get(u.toolCallId), Object.fromEntries(Object.entries(u).filter(([k]) => k !== 'sessionUpdate')));
  }
  return [...byId.values()];
};
const texts = (r, kind) => r.updates.filter((u) => u.sessionUpdate === kind).map((u) => u.content.text).join('');
const contentText = (c) => (c.content || []).map((x) => (x.type === 'content' ? x.content.text : '')).join('');

function processRunning(marker) {
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(marker)) return true;
    } catch { /* gone */ }
  }
  return false;
}

// init starts the connection; terminalOutput sets the capability the ACP
// registry's validator sends (clientCapabilities._meta.terminal_output).
const init = (conn, fsOn, terminalOutput) => conn.initialize({
  protocolVersion: 1,
  clientCapabilities: {
    fs: { readTextFile: fsOn, writeTextFile: fsOn }, terminal: false,
    ...(terminalOutput ? { _meta: { terminal_output: true, 'terminal-auth': true } } : {}),
  },
  clientInfo: { name: 'acp-test', version: '1.0.0' },
});

// embedsTerminal says a tool call's content is the one terminal named id.
const embedsTerminal = (content, id) => Array.isArray(content) && content.length === 1 && content[0].type === 'terminal' && content[0].terminalId === id;

// A call's updates, in order, by tool call id.
const updatesOf = (r, id) => r.updates.filter((u) => u.toolCallId === id);

// Each permission's title is its tool call's, as the client shows it.
function sameTitles(r) {
  const titles = new Map(calls(r).map((c) => [c.toolCallId, c.title]));
  return r.permissions.every((p) => titles.get(p.toolCall.toolCallId) === p.toolCall.title);
}

async function rejects(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  return undefined;
}

async function main() {
  const acp = await import('@agentclientprotocol/sdk');
  const allowAll = () => 'allow_once';
  // The sessions made, for session/list.
  const made = [];
  let res;
  let gone;

  // A: the client reads and writes files; the buffer is not what is on disk.
  fs.writeFileSync(notes, 'alpha disk\n');
  const buffers = new Map([[notes, 'alpha UNSAVED\n']]);
  const a = recorder({ buffers, permit: allowAll });
  const A = await start(acp, a, envFor('A'));
  const initRes = await init(A.conn, true);
  check('initialize: protocol 1, loadSession, embedded context', initRes.protocolVersion === 1 && initRes.agentCapabilities.loadSession === true &&
    initRes.agentCapabilities.promptCapabilities.embeddedContext === true, initRes);
  const sc0 = initRes.agentCapabilities.sessionCapabilities || {};
  check('initialize: session/list, session/resume and session/close are advertised as the schema says ({})',
    ['list', 'resume', 'close'].every((k) => JSON.stringify(sc0[k]) === '{}'), initRes.agentCapabilities);
  const { sessionId } = await A.conn.newSession({ cwd: ws, mcpServers: [] });
  made.push(sessionId);
  check('session/new gives the conversation id', /^[0-9a-f-]{32,36}$/.test(sessionId), sessionId);
  res = await A.conn.prompt({ sessionId, prompt: [{ type: 'text', text: 'Fix the notes, then say done.' }] });
  check('fs on: the turn ends with end_turn', res.stopReason === 'end_turn', res);
  check('fs on: the agent\'s message streams as agent_message_chunk', texts(a, 'agent_message_chunk').includes('Done.'), texts(a, 'agent_message_chunk'));
  check('fs on: its thought streams as agent_thought_chunk', texts(a, 'agent_thought_chunk').includes('Look at the notes first.'), texts(a, 'agent_thought_chunk'));
  check('fs on: the user\'s own prompt is not echoed back', a.updates.every((u) => u.sessionUpdate !== 'user_message_chunk'));
  const cs = calls(a);
  const view = cs.find((c) => c.kind === 'read');
  check('fs on: the read is a read tool call with its location', view !== undefined && view.locations[0].path === notes && view.status === 'completed', view);
  check('fs on: the read went through fs/read_text_file', a.reads.includes(notes), a.reads);
  check('fs on: the agent saw the unsaved buffer', view !== undefined && contentText(view).includes('alpha UNSAVED'), view);
  const edit = cs.find((c) => c.kind === 'edit');
  check('fs on: the edit went through fs/write_text_file', a.writes.length === 1 && a.writes[0].path === notes && a.writes[0].content === 'beta UNSAVED\n', a.writes);
  check('fs on: the disk is untouched', fs.readFileSync(notes, 'utf8') === 'alpha disk\n', fs.readFileSync(notes, 'utf8'));
  const diff = edit && (edit.content || []).find((x) => x.type === 'diff');
  check('fs on: the edit carries the whole file\'s diff', diff !== undefined && diff.path === notes && diff.oldText === 'alpha UNSAVED\n' && diff.newText === 'beta UNSAVED\n', edit);
  const cmd = cs.find((c) => c.kind === 'execute');
  check('fs on: the command is an execute tool call that completed', cmd !== undefined && cmd.status === 'completed' && cmd.title.includes('echo out-$((6*7))'), cmd);
  check('fs on: its output streams as tool call content, without the shell\'s machinery', cmd !== undefined && contentText(cmd).includes('out-42') && !contentText(cmd).includes('__br') && !contentText(cmd).includes('\x1b'), cmd && contentText(cmd));
  check('fs on: its exit code is in rawOutput', cmd !== undefined && cmd.rawOutput && cmd.rawOutput.exitCode === 0, cmd && cmd.rawOutput);
  check('fs on: the command ran in the bridge\'s terminal, in the workspace', fs.existsSync(ran) && fs.readFileSync(ran, 'utf8') === 'out-42\n');
  const plan = a.updates.filter((u) => u.sessionUpdate === 'plan').pop();
  check('fs on: the task list arrives as a plan', plan !== undefined && plan.entries.length === 2 && plan.entries[0].status === 'completed' && plan.entries[1].status === 'in_progress', plan);
  const ids = new Set(cs.map((c) => c.toolCallId));
  check('fs on: each permission asked names a tool call the client already shows', a.permissions.length >= 3 && a.permissions.every((p) => ids.has(p.toolCall.toolCallId)), a.permissions.map((p) => p.toolCall));
  check('fs on: the commands and edits were put to the person, with their kinds', ['read', 'edit', 'execute'].every((k) => a.permissions.some((p) => p.toolCall.kind === k)), a.permissions.map((p) => p.toolCall.kind));
  check('fs on: each permission\'s title is its tool call\'s ("Run `…`" on both)', sameTitles(a) &&
    a.permissions.some((p) => p.toolCall.title === 'Run `echo out-$((6*7)) | tee ran.txt`'), a.permissions.map((p) => p.toolCall.title));
  check('fs on: no terminal _meta for a client that did not ask for it', a.updates.every((u) => !u._meta ||
    (u._meta.terminal_info === undefined && u._meta.terminal_output === undefined && u._meta.terminal_exit === undefined)));

  // Cancel in the middle of a command: the second turn runs a long one.
  a.updates.length = 0;
  const turn2 = A.conn.prompt({ sessionId, prompt: [{ type: 'text', text: 'Now the long one.' }] });
  let started = false;
  for (let i = 0; i < 200 && !started; i++) {
    await sleep(50);
    started = calls(a).some((c) => c.kind === 'execute' && contentText(c).includes('started'));
  }
  check('cancel: the long command\'s output streamed while it ran', started, calls(a));
  check('cancel: the command runs', processRunning('sleep 31.5'));
  await A.conn.cancel({ sessionId });
  res = await turn2;
  check('cancel: the turn ends with cancelled', res.stopReason === 'cancelled', res);
  gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    gone = !processRunning('sleep 31.5');
    if (!gone) await sleep(50);
  }
  check('cancel: the command was interrupted (no sleep left)', gone);
  await sleep(300);
  const long = calls(a).find((c) => c.kind === 'execute');
  check('cancel: its tool call did not complete', long !== undefined && long.status === 'failed', long);
  check('cancel: "never" was never printed', long !== undefined && !contentText(long).includes('never'), long && contentText(long));
  A.child.stdin.end();

  // B: no fs from the client: the bridge reads and writes the disk.
  if (runs('B')) {
    fs.writeFileSync(notes, 'alpha disk\n');
    fs.rmSync(ran, { force: true });
    const b = recorder({ permit: allowAll });
    const B = await start(acp, b, envFor('B'));
    await init(B.conn, false);
    const sb = await B.conn.newSession({ cwd: ws, mcpServers: [] });
    made.push(sb.sessionId);
    res = await B.conn.prompt({ sessionId: sb.sessionId, prompt: [{ type: 'text', text: 'Fix the notes.' }] });
    check('fs off: the turn ends with end_turn', res.stopReason === 'end_turn', res);
    const bview = calls(b).find((c) => c.kind === 'read');
    check('fs off: the agent read the disk', bview !== undefined && contentText(bview).includes('alpha disk'), bview);
    check('fs off: the edit landed on disk', fs.readFileSync(notes, 'utf8') === 'beta disk\n', fs.readFileSync(notes, 'utf8'));
    B.child.stdin.end();
  }

  // C: the person rejects the command.
  if (runs('C')) {
    fs.writeFileSync(notes, 'alpha disk\n');
    fs.rmSync(ran, { force: true });
    const c = recorder({ permit: (tc) => (tc.kind === 'execute' ? 'reject_once' : 'allow_once') });
    const C = await start(acp, c, envFor('C'));
    await init(C.conn, false);
    const sc = await C.conn.newSession({ cwd: ws, mcpServers: [] });
    made.push(sc.sessionId);
    res = await C.conn.prompt({ sessionId: sc.sessionId, prompt: [{ type: 'text', text: 'Fix the notes.' }] });
    check('rejected: the turn still ends with end_turn', res.stopReason === 'end_turn', res);
    const rejected = calls(c).find((x) => x.kind === 'execute');
    check('rejected: the command\'s tool call failed', rejected !== undefined && rejected.status === 'failed', rejected);
    check('rejected: the agent was told the user rejected it', rejected !== undefined && /reject/i.test(contentText(rejected)), rejected && contentText(rejected));
    check('rejected: the command never ran', !fs.existsSync(ran));
    check('rejected: the edit allowed still landed', fs.readFileSync(notes, 'utf8') === 'beta disk\n');
    C.child.stdin.end();
  }

  if (runs('F')) {
    // F: the person cancels while asked about the command: the permission
    // request answers "cancelled" (agent-shell sends its session/cancel only
    // after that, and CodeCompanion sometimes not at all, as here). The turn
    // ends cancelled, nothing else of it runs (not the command, not the plan
    // after it), and no update follows the answer.
    fs.writeFileSync(notes, 'alpha disk\n');
    fs.rmSync(ran, { force: true });
    const f = recorder({ permit: allowAll });
    f.requestPermission = async (p) => {
      f.permissions.push(p);
      if (p.toolCall.kind !== 'execute') return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
      return { outcome: { outcome: 'cancelled' } };
    };
    const F = await start(acp, f, envFor('F'));
    await init(F.conn, false);
    const fSession = (await F.conn.newSession({ cwd: ws, mcpServers: [] })).sessionId;
    made.push(fSession);
    res = await F.conn.prompt({ sessionId: fSession, prompt: [{ type: 'text', text: 'Fix the notes.' }] });
    const atAnswer = f.updates.length;
    check('cancelled question: the turn ends with cancelled', res.stopReason === 'cancelled', res);
    check('cancelled question: the command never ran', !fs.existsSync(ran));
    check('cancelled question: nothing after it ran (no plan)', !f.updates.some((u) => u.sessionUpdate === 'plan'), f.updates.map((u) => u.sessionUpdate));
    // A negative can only be bounded: the agent's scripted model answers in
    // milliseconds, so 1.5 s holds any late event of the cancelled turn (a
    // step the agent took would also be a request off its model's script,
    // which fails the Go test).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    check('cancelled question: no update followed the answer', f.updates.length === atAnswer, f.updates.slice(atAnswer));
    F.child.stdin.end();
  }

  if (runs('K')) {
    // K: the person cancels while asked about the agent's first call, whose
    // next step is a second tool call (the stand-in plays that script, not
    // the real server: its interrupt acts up to 200 ms late, every time, so
    // the agent could take the step first). The client sends session/cancel, then answers the question
    // "cancelled", as the spec asks. After the cancel it is told of no new
    // tool call (no tool_call, no update of a call it was not shown), neither
    // call runs, and the turn ends cancelled; ten rounds, one connection.
    const kFirst = path.join(ws, 'cancel-first.txt');
    const kSecond = path.join(ws, 'cancel-second.txt');
    const k = recorder({ permit: allowAll });
    let kCancelledAt = -1;
    k.requestPermission = async (p) => {
      k.permissions.push(p);
      kCancelledAt = k.updates.length;
      await K.conn.cancel({ sessionId: p.sessionId });
      return { outcome: { outcome: 'cancelled' } };
    };
    // The stand-in, for its late interrupt (see the top).
    const K = await start(acp, k, { OH_BRIDGE_SERVER_URL: config.cancelServer, LLM_MODEL: 'stand-in/scripted', LLM_API_KEY: 'k' });
    await init(K.conn, false);
    const kStops = [];
    const kLate = [];
    let kAsked = 0;
    for (let round = 0; round < 10; round++) {
      k.updates.length = 0;
      k.permissions.length = 0;
      kCancelledAt = -1;
      const kSession = (await K.conn.newSession({ cwd: ws, mcpServers: [] })).sessionId;
      res = await K.conn.prompt({ sessionId: kSession, prompt: [{ type: 'text', text: 'Write both files.' }] });
      kStops.push(res.stopReason);
      if (kCancelledAt < 0) continue;
      kAsked++;
      const shown = new Set(k.updates.slice(0, kCancelledAt).filter((u) => u.sessionUpdate === 'tool_call').map((u) => u.toolCallId));
      const late = k.updates.slice(kCancelledAt).filter((u) => u.sessionUpdate === 'tool_call' ||
        (u.sessionUpdate === 'tool_call_update' && !shown.has(u.toolCallId)));
      if (late.length > 0) kLate.push({ round, late });
      await K.conn.closeSession({ sessionId: kSession });
    }
    check('cancel during a question: each turn asked about its first call', kAsked === 10, kAsked);
    check('cancel during a question: each turn ends with cancelled', kStops.every((x) => x === 'cancelled'), kStops);
    check('cancel during a question: no new tool call was announced after session/cancel', kLate.length === 0,
      `${kLate.length} of 10 turns did: ${JSON.stringify(kLate.slice(0, 2))}`);
    check('cancel during a question: neither call ran', !fs.existsSync(kFirst) && !fs.existsSync(kSecond));
    K.child.stdin.end();
  }

  if (runs('G')) {
    // G: the client shows commands in display terminals of its own
    // (_meta.terminal_output, as Zed does for claude-agent-acp and
    // codex-acp): the command's tool_call opens one named by the call's id,
    // its output is appended there as it comes, and its last update says it
    // exited. Then session/close in the middle of the long command cancels
    // the turn and stops the command.
    fs.writeFileSync(notes, 'alpha disk\n');
    fs.rmSync(ran, { force: true });
    const g = recorder({ permit: allowAll });
    const G = await start(acp, g, envFor('G'));
    await init(G.conn, false, true);
    const gSession = (await G.conn.newSession({ cwd: ws, mcpServers: [] })).sessionId;
    made.push(gSession);
    res = await G.conn.prompt({ sessionId: gSession, prompt: [{ type: 'text', text: 'Fix the notes.' }] });
    check('terminal_output: the turn ends with end_turn', res.stopReason === 'end_turn', res);
    const gcmd = calls(g).find((x) => x.kind === 'execute');
    const gid = gcmd && gcmd.toolCallId;
    const gups = gid ? updatesOf(g, gid) : [];
    const opened = gups[0] || {};
    check('terminal_output: the command\'s tool_call opens a terminal named by the call\'s id, and embeds it',
      opened.sessionUpdate === 'tool_call' && opened._meta && opened._meta.terminal_info && opened._meta.terminal_info.terminal_id === gid &&
      embedsTerminal(opened.content, gid), opened);
    const appended = gups.filter((u) => u._meta && u._meta.terminal_output);
    check('terminal_output: the output is appended in tool_call_updates\' _meta.terminal_output {terminal_id, data}',
      appended.length > 0 && appended.every((u) => u.sessionUpdate === 'tool_call_update' && u._meta.terminal_output.terminal_id === gid &&
        u.status === undefined && u.content === undefined) && appended.map((u) => u._meta.terminal_output.data).join('').includes('out-42'),
      appended.map((u) => u._meta));
    check('terminal_output: no text content replaces the terminal', gups.every((u) => (u.content || []).every((x) => x.type === 'terminal')), gups);
    const exited = gups[gups.length - 1] || {};
    check('terminal_output: the last update completes the call and exits the terminal {terminal_id, exit_code: 0, signal: null}',
      exited.status === 'completed' && exited._meta && exited._meta.terminal_exit && exited._meta.terminal_exit.terminal_id === gid &&
      exited._meta.terminal_exit.exit_code === 0 && exited._meta.terminal_exit.signal === null &&
      embedsTerminal(exited.content, gid) && exited.rawOutput && exited.rawOutput.exitCode === 0, exited);
    check('terminal_output: the output comes before the exit', gups.findIndex((u) => u._meta && u._meta.terminal_exit) > gups.findIndex((u) => u._meta && u._meta.terminal_output));
    check('terminal_output: other calls keep their content (the read shows the file)', contentText(calls(g).find((x) => x.kind === 'read') || {}).includes('alpha disk'));
    check('terminal_output: each permission\'s title is its tool call\'s', g.permissions.length >= 3 && sameTitles(g), g.permissions.map((p) => p.toolCall.title));

    g.updates.length = 0;
    const gturn2 = G.conn.prompt({ sessionId: gSession, prompt: [{ type: 'text', text: 'Now the long one.' }] });
    let glive;
    for (let i = 0; i < 200 && glive === undefined; i++) {
      await sleep(50);
      glive = g.updates.find((u) => u._meta && u._meta.terminal_output && u._meta.terminal_output.data.includes('started'));
    }
    check('terminal_output: the long command\'s output reaches its terminal while it runs', glive !== undefined && processRunning('sleep 31.5'), g.updates);
    const closed = await G.conn.closeSession({ sessionId: gSession });
    check('session/close: answers {}', closed !== undefined && Object.keys(closed).length === 0, closed);
    res = await gturn2;
    check('session/close: the running turn ends with cancelled', res.stopReason === 'cancelled', res);
    gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      gone = !processRunning('sleep 31.5');
      if (!gone) await sleep(50);
    }
    check('session/close: the command was stopped', gone);
    let closedErr = await rejects(G.conn.prompt({ sessionId: gSession, prompt: [{ type: 'text', text: 'still there?' }] }));
    check('session/close: the session is gone from the connection, in plain words', closedErr !== undefined && /not open on this connection/.test(closedErr.message), closedErr && closedErr.message);
    closedErr = await rejects(G.conn.closeSession({ sessionId: gSession }));
    check('session/close: closing it again says there is nothing to close', closedErr !== undefined && /nothing to close/.test(closedErr.message), closedErr && closedErr.message);
    G.child.stdin.end();
  }

  // D: a new connection loads A's session: the history replays first.
  const d = recorder({ permit: allowAll });
  const D = await start(acp, d, envFor('A'));
  await init(D.conn, false);
  await D.conn.loadSession({ sessionId, cwd: ws, mcpServers: [] });
  const seenAtAnswer = d.updates.length;
  check('load: the history replayed before session/load answered', seenAtAnswer > 0, seenAtAnswer);
  check('load: the user\'s messages come back', texts(d, 'user_message_chunk').includes('Fix the notes, then say done.') && texts(d, 'user_message_chunk').includes('Now the long one.'), texts(d, 'user_message_chunk'));
  check('load: the agent\'s messages come back', texts(d, 'agent_message_chunk').includes('Done.'), texts(d, 'agent_message_chunk'));
  const dcmd = calls(d).find((x) => x.kind === 'execute' && x.title.includes('out-'));
  check('load: the command comes back with what the agent saw and its exit code', dcmd !== undefined && contentText(dcmd).includes('out-42') &&
    dcmd.rawOutput && dcmd.rawOutput.exitCode === 0, dcmd);
  const dedit = calls(d).find((x) => x.kind === 'edit');
  check('load: the edit comes back as a diff', dedit !== undefined && (dedit.content || []).some((x) => x.type === 'diff' && x.oldText === 'alpha' && x.newText === 'beta'), dedit);
  check('load: the plan comes back', d.updates.some((u) => u.sessionUpdate === 'plan'));
  D.child.stdin.end();

  // L: session/list lists the conversations of a directory, the latest
  // active first, each one as a session to load or resume.
  const l = recorder({ permit: allowAll });
  const L = await start(acp, l, envFor('A'));
  await init(L.conn, false);
  const listed = await L.conn.listSessions({ cwd: ws });
  const byId = new Map(listed.sessions.map((x) => [x.sessionId, x]));
  check(`session/list: this workspace's ${made.length} sessions are listed`, made.every((id) => byId.has(id)), listed);
  check('session/list: each names its cwd', listed.sessions.every((x) => x.cwd === ws), listed.sessions.map((x) => x.cwd));
  check('session/list: a session is titled by its first message', byId.has(sessionId) && byId.get(sessionId).title === 'Fix the notes, then say done.', byId.get(sessionId));
  const times = listed.sessions.map((x) => Date.parse(x.updatedAt));
  check('session/list: updatedAt is ISO 8601, the latest first', times.every((x) => !Number.isNaN(x)) && times.every((x, i) => i === 0 || times[i - 1] >= x), listed.sessions.map((x) => x.updatedAt));
  check('session/list: all fit in one page (no nextCursor)', listed.nextCursor === undefined || listed.nextCursor === null, listed.nextCursor);
  const elsewhere = path.join(ws, 'elsewhere');
  fs.mkdirSync(elsewhere, { recursive: true });
  const none = await L.conn.listSessions({ cwd: elsewhere });
  check('session/list: another directory has none of them', none.sessions.length === 0, none);
  const all = await L.conn.listSessions({});
  check('session/list: without a cwd, every directory\'s', all.sessions.some((x) => x.sessionId === sessionId), all);
  const relErr = await rejects(L.conn.listSessions({ cwd: 'relative' }));
  check('session/list: a relative cwd is refused, naming the fix', relErr !== undefined && relErr.code === -32602 && /absolute/.test(JSON.stringify(relErr)), relErr);
  L.child.stdin.end();

  // R: a new connection resumes A's session: no history, and it goes on.
  const r = recorder({ permit: allowAll });
  const R = await start(acp, r, envFor('A'));
  await init(R.conn, false);
  const resumed = await R.conn.resumeSession({ sessionId, cwd: ws, mcpServers: [] });
  check('session/resume: answers, and no update of the history came', resumed !== undefined && r.updates.length === 0, r.updates);
  let resumeErr = await rejects(R.conn.resumeSession({ sessionId, cwd: ws, mcpServers: [] }));
  check('session/resume: resuming it twice on one connection says it is open', resumeErr !== undefined && /already open/.test(resumeErr.message), resumeErr && resumeErr.message);
  res = await R.conn.prompt({ sessionId, prompt: [{ type: 'text', text: 'Go on.' }] });
  check('session/resume: the next prompt goes on with the conversation', res.stopReason === 'end_turn' && texts(r, 'agent_message_chunk').includes('After the long one.'), texts(r, 'agent_message_chunk'));
  // The agent reaches its tools where A's bridge served them: this bridge
  // serves them there again (the agent-server hides the endpoint's token;
  // A's bridge recorded it).
  const resumedCmd = calls(r).find((x) => x.kind === 'execute');
  check('session/resume: the agent\'s command runs in this bridge', resumedCmd !== undefined && resumedCmd.status === 'completed' &&
    fs.existsSync(path.join(ws, 'resumed.txt')) && fs.readFileSync(path.join(ws, 'resumed.txt'), 'utf8') === 'resumed\n', resumedCmd);
  check('session/resume: nothing of the history was shown', !texts(r, 'agent_message_chunk').includes('Done.') && r.updates.every((u) => u.sessionUpdate !== 'user_message_chunk'), r.updates.map((u) => u.sessionUpdate));
  await R.conn.closeSession({ sessionId });
  resumeErr = await rejects(R.conn.resumeSession({ sessionId: '00000000-0000-4000-8000-000000000000', cwd: ws, mcpServers: [] }));
  check('session/resume: an unknown session is refused in plain words', resumeErr !== undefined && /was not found on the agent-server/.test(resumeErr.message), resumeErr && resumeErr.message);
  R.child.stdin.end();

  if (runs('E')) {
    // E: no server configured, none found: the first prompt offers to start
    // one where it can (declined here), and says how to configure one.
    const e = recorder({ permit: (tc) => (tc.toolCallId.startsWith('start-agent-server-') ? 'reject_once' : 'allow_once') });
    const E = await start(acp, e, {});
    await init(E.conn, true);
    const se = await E.conn.newSession({ cwd: ws, mcpServers: [] });
    res = await E.conn.prompt({ sessionId: se.sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    const how = texts(e, 'agent_message_chunk');
    check('no server: the turn ends with end_turn', res.stopReason === 'end_turn', res);
    check('no server: the answer names the flag, the variable and the config file', how.includes('--server') && how.includes('OH_BRIDGE_SERVER_URL') && how.includes('config file'), how);
    let loadErr;
    try { await E.conn.loadSession({ sessionId: 'x', cwd: ws, mcpServers: [] }); } catch (err) { loadErr = err; }
    check('no server: session/load fails in plain words', loadErr !== undefined && /no OpenHands agent-server is configured/.test(loadErr.message), loadErr && loadErr.message);
    const noneListed = await E.conn.listSessions({ cwd: ws });
    check('no server: session/list lists nothing', noneListed.sessions.length === 0, noneListed);
    let bad;
    try { await E.conn.newSession({ cwd: 'relative/dir', mcpServers: [] }); } catch (err) { bad = err; }
    check('a relative cwd is refused, naming the fix', bad !== undefined && bad.code === -32602 && /absolute/.test(JSON.stringify(bad)), bad);
    E.child.stdin.end();
  }

  if (runs('H')) {
    // H: the agent's terminal links a file from outside the workspace into
    // it (here the test runs the same ln), and the client writes by path in
    // place, as VS Code's fs.writeFile does. The edit is refused before the
    // client is asked, in words, and the outside file keeps its text.
    const outside = path.join(ws, '..', 'outside');
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(path.join(outside, 'notes.txt'), 'alpha outside\n');
    fs.rmSync(notes, { force: true });
    fs.rmSync(ran, { force: true });
    require('node:child_process').execFileSync('bash', ['-c', 'ln ../outside/notes.txt notes.txt'], { cwd: ws });
    const h = recorder({ permit: allowAll });
    h.readTextFile = async (p) => { h.reads.push(p.path); return { content: fs.readFileSync(p.path, 'utf8') }; };
    h.writeTextFile = async (p) => { h.writes.push(p); fs.writeFileSync(p.path, p.content); return {}; };
    const H = await start(acp, h, envFor('H'));
    await init(H.conn, true);
    const sh = await H.conn.newSession({ cwd: ws, mcpServers: [] });
    res = await H.conn.prompt({ sessionId: sh.sessionId, prompt: [{ type: 'text', text: 'Fix the notes.' }] });
    check('hard link: the turn ends with end_turn', res.stopReason === 'end_turn', res);
    const hedit = calls(h).find((x) => x.kind === 'edit');
    check('hard link: the edit failed, saying the file has 2 hard links and nothing was written', hedit !== undefined && hedit.status === 'failed' &&
      /a file with 2 hard links/.test(contentText(hedit)) && /nothing was written/.test(contentText(hedit)), hedit);
    check('hard link: its rawOutput names the kind hard_linked', hedit !== undefined && hedit.rawOutput && hedit.rawOutput.error && hedit.rawOutput.error.kind === 'hard_linked', hedit && hedit.rawOutput);
    check('hard link: the client was never asked to write', h.writes.length === 0, h.writes);
    check('hard link: the outside file keeps its text', fs.readFileSync(path.join(outside, 'notes.txt'), 'utf8') === 'alpha outside\n');
    H.child.stdin.end();
  }

  check(`every message the bridge sent matches the ACP v1 schema (${judged} judged)`, schemaErrors.length === 0 && judged > 50, schemaErrors.slice(0, 3));
  finish();
}

main().catch((err) => {
  console.log(`FAIL ${err.stack || err}`);
  process.exit(1);
});
