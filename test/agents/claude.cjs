// Drives the real Claude Code CLI (test/agents/node_modules/.bin/claude)
// against oh-bridge's MCP tools, headless as its users run it (`claude -p
// ... --output-format stream-json --verbose --allowedTools mcp__oh-bridge`),
// with a scripted Anthropic Messages API model on 127.0.0.1
// (model-anthropic.cjs) and Claude Code pointed at the bridge by the
// project's own configuration blocks, over both transports:
//   - stdio: `claude mcp add ... -- {BIN} mcp --workspace {WS}`;
//   - http: the editor bridge's endpoint (mcp/start), `claude mcp add
//     --transport http {URL} --header "Authorization: Bearer {TOKEN}"`.
// Claude Code runs under strace: nothing may leave loopback.
// Usage: node claude.cjs <oh-bridge binary> <temp dir>
// (CLAUDE_TEST_VERBOSE=1 prints what each run saw: tools offered, the
// timeout's tool_result, the permission questions, the mirror, addresses.)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { setup, block, apply, traced, editorBridge, shellsUnder, leftovers, untilStatus, done, check, finish, transports, useNPMRegistry } = require('./lib.cjs');
const model = require('./model-anthropic.cjs');

const [bin, tmp] = process.argv.slice(2);
if (!bin || !tmp) {
  console.error('usage: node claude.cjs <oh-bridge> <temp dir>');
  process.exit(2);
}

const marker = 'oh-bridge scripted test';
const prompt = `${marker}: use the oh-bridge tools (terminal, file_editor) as scripted, then answer.`;
const server = 'oh-bridge';
const claudeVersion = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', '@anthropic-ai', 'claude-code', 'package.json'), 'utf8')).version;

// Claude Code's environment: the scripted model, and every switch the
// installed version reads to stay off the network (telemetry, error
// reports, auto-update, feature flags, nonessential traffic: release
// notes, plugin marketplace, model lookups). MCP_TOOL_TIMEOUT is the
// wall-clock limit of one MCP tool call (ms), small so the long command
// of step 5 is given up.
function claudeEnv(s, modelURL) {
  return {
    ...s.env,
    ANTHROPIC_BASE_URL: modelURL,
    ANTHROPIC_API_KEY: 'sk-ant-scripted-test',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    MCP_TOOL_TIMEOUT: '3000',
  };
}

// toolName is the name Claude Code offers for the bridge's tool `short`
// in this request, or an error that says what it offered.
function toolName(body, short) {
  const want = `mcp__${server}__${short}`;
  const names = model.offered(body);
  if (!names.includes(want)) throw new Error(`${want} is not in the request's tools: ${names.join(', ')}`);
  return want;
}

async function transport(name) {
  const s = setup(tmp, `claude-${name}`);
  const started = Date.now();
  const hello = path.join(s.ws, 'hello.txt');
  const refused = path.join(s.ws, 'refused.txt');
  const missing = path.join(s.ws, 'missing', 'nope.txt');
  const seen = {}; // what the steps observed while Claude Code ran
  let e;
  const steps = [
    // Claude Code defers MCP tools behind its ToolSearch tool: a model
    // loads their schemas before calling them, by the names the system
    // prompt lists. If they are offered at once, nothing to do.
    (body) => {
      const names = model.offered(body);
      seen.firstTools = names;
      if (names.includes(`mcp__${server}__terminal`)) return null;
      if (!names.includes('ToolSearch')) throw new Error(`no ${server} tools and no ToolSearch offered: ${names.join(', ')}`);
      return { tool: 'ToolSearch', input: { query: `select:mcp__${server}__terminal,mcp__${server}__file_editor`, max_results: 5 } };
    },
    (body) => ({ tool: toolName(body, 'terminal'), input: { command: 'echo agent-$((6*7))' } }),
    (body) => ({ tool: toolName(body, 'file_editor'), input: { command: 'create', path: hello, file_text: 'hello\n' } }),
    (body) => {
      seen.createdOnDisk = fs.existsSync(hello) ? fs.readFileSync(hello, 'utf8') : null;
      return { tool: toolName(body, 'file_editor'), input: { command: 'str_replace', path: hello, old_str: 'hello', new_str: 'bye' } };
    },
    (body) => ({ tool: toolName(body, 'file_editor'), input: { command: 'view', path: missing } }),
    (body) => {
      seen.sleepAsked = Date.now();
      return { tool: toolName(body, 'terminal'), input: { command: 'sleep 30; echo late', timeout: 120 } };
    },
    (body) => {
      seen.gaveUp = Date.now();
      return { tool: toolName(body, 'terminal'), input: { command: 'echo after-cancel' } };
    },
    (body) => {
      seen.sleepersAfter = leftovers(s.ws, ['sleep', '30']);
      if (name !== 'http') return null;
      e.answer = (call) => (JSON.stringify(call).includes('refused.txt') ? 'reject_once' : 'allow_once');
      return { tool: toolName(body, 'file_editor'), input: { command: 'create', path: refused, file_text: 'no\n' } };
    },
    () => ({ text: 'All scripted steps are done.' }),
  ];
  const m = await model.start({ marker, steps });
  s.env = claudeEnv(s, m.url);

  let b;
  if (name === 'stdio') {
    b = block('claude', 'stdio');
    await apply(b, { BIN: bin, WS: s.ws }, s);
  } else if (name === 'npx') {
    useNPMRegistry(s);
    b = block('claude', 'npx');
    await apply(b, { WS: s.ws }, s);
  } else {
    e = await editorBridge(bin, s);
    b = block('claude', 'http');
    await apply(b, { URL: e.url, TOKEN: e.token }, s);
  }

  const args = ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', `mcp__${server}`];
  const r = await traced('claude', args, { cwd: s.ws, env: s.env, timeout: 120000 });
  const exited = Date.now();
  const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
  const init = events.find((v) => v.type === 'system' && v.subtype === 'init') || {};
  const result = events.find((v) => v.type === 'result') || {};
  const label = `${name}:`;

  check(`${label} claude exits 0`, r.code === 0 && !r.timedOut, { code: r.code, signal: r.signal, timedOut: r.timedOut, stderr: r.stderr.slice(-2000), stdout: r.stdout.slice(-2000) });
  // With npx the server may still be starting (npx installs the package
  // first) when Claude Code reports its init; the steps below show it
  // connected.
  const atStart = name === 'npx' ? ['connected', 'pending'] : ['connected'];
  check(`${label} the ${server} server is ${atStart.join(' or ')} at start`, (init.mcp_servers || []).some((v) => v.name === server && atStart.includes(v.status)), init.mcp_servers);
  check(`${label} the scripted model ran without errors`, m.errors.length === 0, m.errors);

  // The answer to each tool call, as it reached the model in the next turn.
  const answers = [];
  m.replies.forEach((reply, i) => {
    if (!reply.tool) return;
    const res = m.turns[i + 1] ? model.toolResults(m.turns[i + 1])[reply.id] : undefined;
    answers.push({ tool: reply.tool, input: reply.input, result: res, turn: i + 1 });
  });
  const answer = (pred) => answers.find((a) => pred(a.input || {}, a.tool)) || {};
  const text = (a) => (a.result ? a.result.text : undefined);

  const search = answer((i, t) => t === 'ToolSearch');
  if (search.tool) {
    const next = m.turns[search.turn] || {};
    check(`${label} after ToolSearch the tools list offers the ${server} tools`, ['terminal', 'file_editor'].every((t) => model.offered(next).includes(`mcp__${server}__${t}`)), model.offered(next));
  }

  let a = answer((i) => i.command === 'echo agent-$((6*7))');
  check(`${label} 1. terminal: the model receives exactly OpenHands' text`, a.result && !a.result.isError && text(a) === done('agent-42', s.ws, s.python), a.result || 'no tool_result');

  a = answer((i) => i.command === 'create' && i.path === hello);
  check(`${label} 2. file_editor create: the file is on disk`, seen.createdOnDisk === 'hello\n' && a.result && !a.result.isError && text(a) === `File created successfully at: ${hello}`, { onDisk: seen.createdOnDisk, result: a.result });

  a = answer((i) => i.command === 'str_replace');
  const now = fs.existsSync(hello) ? fs.readFileSync(hello, 'utf8') : null;
  check(`${label} 3. file_editor str_replace: "bye\\n" on disk, the snippet reaches the model`, now === 'bye\n' && a.result && !a.result.isError && (text(a) || '').includes('     1\tbye'), { onDisk: now, result: a.result });

  a = answer((i) => i.command === 'view');
  const notFound = `Invalid \`path\` parameter: ${missing}. The path ${missing} does not exist. Please provide a valid path.`;
  check(`${label} 4. an error result reaches the model with is_error and OpenHands' text`, a.result && a.result.isError === true && text(a) === notFound, a.result);

  a = answer((i) => i.command === 'sleep 30; echo late');
  seen.timeoutResult = a.result;
  check(`${label} 5. Claude Code gives the long command up at MCP_TOOL_TIMEOUT (3 s)`, a.result && a.result.isError === true && seen.gaveUp - seen.sleepAsked >= 2500 && seen.gaveUp - seen.sleepAsked < 20000,
    { result: a.result, ms: seen.gaveUp - seen.sleepAsked });
  const after = answer((i) => i.command === 'echo after-cancel');
  check(`${label} 5. the call after the cancel runs: exactly OpenHands' text`, after.result && text(after) === done('after-cancel', s.ws, s.python), after.result || 'no tool_result');
  check(`${label} 5. the cancelled sleep was stopped (no \`sleep 30\` left in the workspace)`, seen.sleepersAfter && seen.sleepersAfter.length === 0, seen.sleepersAfter);
  const later = answers.filter((x) => x.turn > (after.turn || 0) - 1).map((x) => text(x) || '');
  check(`${label} 5. "late" never reaches the model`, !later.some((t) => /(^|\n)late(\n|$)/.test(t)) && !m.turns.some((t) => /(^|\n)late(\n|$)/.test(model.allText(t))), later);

  if (name === 'http') {
    const lines = (e.mirrored['agent-1'] || '').replace(/\x1b\][^\x07]*\x07/g, '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split(/\r?\n|\r/);
    // The stop signals the command's process group; the shell echoes no
    // ^C for it (shellint's interrupt types nothing into a line it has
    // not read), so what shows is the command, then the next prompt.
    check(`${label} 5. "late" is never printed in the editor's terminal`, lines.some((l) => l.includes('sleep 30; echo late')) && !lines.some((l) => l.trim() === 'late'), lines);

    a = answer((i) => i.command === 'create' && i.path === refused);
    check(`${label} 6. a rejected action: the model receives OpenHands' rejection, no file`, a.result && (text(a) || '').includes('Action rejected: User rejected the action') && !fs.existsSync(refused), a.result);
    const mirror = e.mirrored['agent-1'] || '';
    seen.mirror = mirror;
    check(`${label} 7. the editor mirrors terminal agent-1 with agent-42`, mirror.includes('agent-42'), { terminals: Object.keys(e.mirrored), mirror: mirror.slice(0, 500) });
    // One question per call, in order, naming it and the agent by the
    // clientInfo Claude Code sends ("claude-code <version>"); how a view
    // is asked about is the bridge's business, left out here.
    const asked = e.asked.map((p) => ({ kind: p.toolCall && p.toolCall.kind, title: p.toolCall && p.toolCall.title, agent: p.agent }));
    seen.asked = asked;
    const agent = `claude-code ${claudeVersion}`;
    const want = [
      { kind: 'execute', title: 'run `echo agent-$((6*7))`', agent },
      { kind: 'edit', title: `create ${hello}`, agent },
      { kind: 'edit', title: `str_replace ${hello}`, agent },
      { kind: 'execute', title: 'run `sleep 30; echo late`', agent },
      { kind: 'execute', title: 'run `echo after-cancel`', agent },
      { kind: 'edit', title: `create ${refused}`, agent },
    ];
    check(`${label} 7. the permission questions name the calls (execute, edit) and the agent (${agent})`,
      isDeepStrictEqual(asked.filter((q) => !(q.title || '').startsWith('view ')), want), asked);
  }

  const last = m.replies[m.replies.length - 1] || {};
  check(`${label} 8. the model ends with a text answer, Claude Code reports success`, last.text === 'All scripted steps are done.' && result.subtype === 'success' && result.is_error === false && result.result === 'All scripted steps are done.', { last, result: { subtype: result.subtype, is_error: result.is_error, result: result.result } });

  const loop = [...new Set(r.addresses)];
  check(`${label} 9. nothing left loopback (strace: ${loop.join(' ') || 'no inet connects'})`, r.outside.length === 0 && loop.length > 0, r.outside);

  if (name === 'http') {
    // Claude Code does not DELETE its session at exit; the bridge ends a
    // session when the client's streams close.
    const { status: st, ms } = await untilStatus(e, (x) => x.sessions === 0, 15000);
    seen.sessionsGone = { sessions: st.sessions, ms };
    check(`${label} 10. mcp/status: sessions 0 within 15 s of claude's exit`, st.sessions === 0, { status: st, waitedMs: ms });
    await e.close();
  }
  await m.close();
  const info = {
    seconds: ((exited - started) / 1000).toFixed(1),
    turns: m.turns.length,
    side: m.side.length,
    other: m.requests.filter((q) => !q.url.startsWith('/v1/messages?') && q.url !== '/v1/messages').map((q) => `${q.method} ${q.url}`),
    firstTools: seen.firstTools,
    mirror: seen.mirror,
    timeoutResult: seen.timeoutResult,
    msToGiveUp: seen.gaveUp - seen.sleepAsked,
    asked: seen.asked,
    sessionsGone: seen.sessionsGone,
    addresses: loop,
    mcpServers: init.mcp_servers,
  };
  if (process.env.CLAUDE_TEST_VERBOSE) console.log(`     ${name}: ${JSON.stringify(info)}`);
  return info;
}

// leak runs Claude Code twice, one after the other, against one editor
// bridge, each run one command, as a user starting claude twice in a
// workspace: once both have exited, no session and no shell is left.
async function leak() {
  const s = setup(tmp, 'claude-leak');
  const e = await editorBridge(bin, s);
  await apply(block('claude', 'http'), { URL: e.url, TOKEN: e.token }, s);
  const peak = { sessions: 0, shells: 0 };
  for (const run of [1, 2]) {
    const m = await model.start({
      marker,
      steps: [
        (body) => (model.offered(body).includes(`mcp__${server}__terminal`) ? null
          : { tool: 'ToolSearch', input: { query: `select:mcp__${server}__terminal`, max_results: 5 } }),
        (body) => ({ tool: toolName(body, 'terminal'), input: { command: `echo run-${run}` } }),
        () => {
          peak.shells = Math.max(peak.shells, shellsUnder(e.pid).length);
          return { text: 'done' };
        },
      ],
    });
    const env = claudeEnv(s, m.url);
    const r = await traced('claude', ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', `mcp__${server}`], { cwd: s.ws, env, timeout: 120000 });
    check(`leak: claude run ${run} exits 0 and ran its command`, r.code === 0 && m.errors.length === 0 && m.turns.some((t) => model.allText(t).includes(`run-${run}`)), { code: r.code, errors: m.errors, stderr: r.stderr.slice(-1000) });
    await m.close();
    peak.sessions = Math.max(peak.sessions, (await e.status()).sessions);
  }
  // Each run's session ends once its client is gone (10 s after its
  // event stream closed).
  const { status, ms } = await untilStatus(e, (st) => st.sessions === 0, 25000);
  const shells = shellsUnder(e.pid);
  console.log(`     leak: peak ${peak.sessions} session(s) and ${peak.shells} shell(s); ${status.sessions} session(s) and ${shells.length} shell(s) left ${(ms / 1000).toFixed(1)} s after the second run`);
  check('leak: two Claude Code runs leave no session and no shell', status.sessions === 0 && shells.length === 0, { status, shells });
  await e.close();
}

// mcpJson points Claude Code at the editor's endpoint with the project
// file block (.mcp.json), approved as the block's detail says, and runs
// one command through it.
async function mcpJson() {
  const s = setup(tmp, 'claude-mcpjson');
  const e = await editorBridge(bin, s);
  await apply(block('claude', 'mcpJson'), { URL: e.url, TOKEN: e.token }, s);
  fs.mkdirSync(path.join(s.ws, '.claude'), { recursive: true });
  fs.writeFileSync(path.join(s.ws, '.claude', 'settings.local.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
  const m = await model.start({
    marker,
    steps: [
      (body) => (model.offered(body).includes(`mcp__${server}__terminal`) ? null
        : { tool: 'ToolSearch', input: { query: `select:mcp__${server}__terminal`, max_results: 5 } }),
      (body) => ({ tool: toolName(body, 'terminal'), input: { command: 'echo from-mcp-json' } }),
      () => ({ text: 'done' }),
    ],
  });
  const r = await traced('claude', ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--allowedTools', `mcp__${server}`], { cwd: s.ws, env: claudeEnv(s, m.url), timeout: 120000 });
  const got = m.turns.map((t) => model.allText(t)).join('\n');
  check('.mcp.json: Claude Code uses the project block and the command runs in the editor', r.code === 0 && m.errors.length === 0 &&
    got.includes(done('from-mcp-json', s.ws, s.python)) && (e.mirrored['agent-1'] || '').includes('from-mcp-json'),
  { code: r.code, errors: m.errors, stderr: r.stderr.slice(-1000), mirrored: Object.keys(e.mirrored) });
  check('.mcp.json: nothing left loopback', r.outside.length === 0, r.outside);
  await m.close();
  await e.close();
}

(async () => {
  const only = transports(null);
  if (only) {
    for (const name of only) {
      try {
        await transport(name);
      } catch (err) {
        check(`${name}: ran to the end`, false, err.stack);
      }
    }
    finish();
    return;
  }
  try {
    await mcpJson();
  } catch (err) {
    check('.mcp.json: ran to the end', false, err.stack);
  }
  for (const name of ['stdio', 'http']) {
    try {
      await transport(name);
    } catch (err) {
      check(`${name}: ran to the end`, false, err.stack);
    }
  }
  try {
    await leak();
  } catch (err) {
    check('leak: ran to the end', false, err.stack);
  }
  finish();
})();
