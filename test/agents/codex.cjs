// Drives the real Codex CLI (`codex exec`, as its users run it headless)
// against oh-bridge's tools, over both transports the project documents:
//   - stdio: the configuration block makes Codex spawn `oh-bridge mcp`;
//   - http: the editor (played by vscode-jsonrpc, lib.cjs) opens the
//     bridge's Streamable HTTP endpoint and Codex connects to it;
//   - npx, alone when OH_BRIDGE_NPM_REGISTRY is set (internal/distcheck):
//     the block makes Codex spawn `npx -y oh-bridge mcp`, installed from
//     that registry.
// The model is scripted (model-openai.cjs, the Responses API on
// 127.0.0.1): it calls the bridge's tools by the names Codex offers and
// checks what Codex hands back. Codex runs under strace: nothing may
// leave loopback.
// Usage: node codex.cjs <oh-bridge binary> <temp dir>
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const lib = require('./lib.cjs');
const model = require('./model-openai.cjs');

const { setup, block, apply, traced, editorBridge, leftovers, untilStatus, done, check, finish, transports, useNPMRegistry } = lib;
const [binArg, tmp] = process.argv.slice(2);
if (!binArg || !tmp) {
  console.error('usage: node codex.cjs <oh-bridge binary> <temp dir>');
  process.exit(2);
}
const bin = path.resolve(binArg);
const codexVersion = require('./node_modules/@openai/codex/package.json').version;

// The provider the scripted model is reached by, and what turns off all
// other network use. The root keys go above the block (TOML has no way
// back to the root table after one: appended, they would land in
// [mcp_servers.oh-bridge]); the tables go below it. The block's own
// lines are left as written.
function rootSettings() {
  return [
    '# The scripted model, and nothing that phones home.',
    'model = "scripted-model"',
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    'web_search = "disabled"',
    '',
  ].join('\n');
}
function tableSettings(url) {
  return [
    '',
    '[model_providers.scripted]',
    'name = "scripted model"',
    `base_url = "${url}"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_MODEL_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[otel]',
    'exporter = "none"',
    'trace_exporter = "none"',
    'metrics_exporter = "none"',
    '',
    '[features]',
    '# The curated plugins are synced from api.github.com and chatgpt.com.',
    'plugins = false',
    '',
  ].join('\n');
}

// The tool's text as Codex hands an MCP result to the model: a
// function_call_output whose output is [{input_text "Wall time: … seconds
// \nOutput:"}, {input_text <the result's text>}, …]. unwrap returns the
// text after the header, and whether the wrapping was that.
const header = /^Wall time: \d+(\.\d+)? seconds\nOutput:$/;
function unwrap(item) {
  if (!item) return { text: undefined, wrapped: false };
  const o = item.output;
  if (Array.isArray(o) && o.length >= 2 && o[0].type === 'input_text' && header.test(o[0].text) &&
    o.slice(1).every((c) => c.type === 'input_text')) {
    return { text: o.slice(1).map((c) => c.text).join(''), wrapped: true };
  }
  return { text: model.outputText(item), wrapped: false };
}

// codexEvents are the JSON lines `codex exec --json` printed.
function codexEvents(stdout) {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => {
    try { return JSON.parse(l); } catch { return undefined; }
  }).filter(Boolean);
}

// mcpItem is Codex's own record of the n-th call of a tool (its --json
// item.completed of type mcp_tool_call).
function mcpItems(events) {
  return events.filter((e) => e.type === 'item.completed' && e.item && e.item.type === 'mcp_tool_call').map((e) => e.item);
}

async function session(transport) {
  const label = `codex ${transport}`;
  const s = setup(tmp, `codex-${transport}`);
  const m = await model.start();
  let e;
  let vars;
  if (transport === 'http') {
    e = await editorBridge(bin, s);
    vars = { URL: e.url, TOKEN: e.token };
  } else if (transport === 'npx') {
    useNPMRegistry(s);
    vars = { WS: s.ws };
  } else {
    vars = { BIN: bin, WS: s.ws };
  }
  const b = block('codex', transport);
  const file = await apply(b, vars, s);
  const blockText = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, rootSettings() + '\n' + blockText + tableSettings(m.url));

  const env = { ...s.env, CODEX_HOME: path.join(s.home, '.codex'), SCRIPTED_MODEL_API_KEY: 'scripted' };
  const prompt = 'Use the oh-bridge tools: run echo agent-$((6*7)), create hello.txt, change hello to bye, view a missing file, run a long command.';
  // tool_timeout_sec = 3 for this run only, on the command line, so that
  // Codex gives up on the long command (the block says 600).
  const args = ['exec', '--json', '--skip-git-repo-check', '-c', 'mcp_servers.oh-bridge.tool_timeout_sec=3', prompt];
  const started = Date.now();
  const agent = traced('codex', args, { cwd: s.ws, env, timeout: 75000 });
  let agentDone;
  agent.then((r) => { agentDone = r; });
  const exitedEarly = agent.then((r) => {
    throw new Error(`codex exited (code ${r.code}) before the script was over\n${r.stdout.slice(-3000)}${r.stderr.slice(-3000)}`);
  });
  exitedEarly.catch(() => { /* seen by next() */ });
  const next = (ms = 30000) => Promise.race([m.next(ms), exitedEarly]);

  // The script: each step answers one request and gets the next.
  const hello = path.join(s.ws, 'hello.txt');
  const refused = path.join(s.ws, 'refused.txt');
  const nope = path.join(s.ws, 'nope.txt');
  let req;
  let n = 0;
  let tool; // (name) => { namespace, name } as Codex offers it
  // call answers the pending request with a call of the bridge's tool,
  // then waits for the request that carries its output.
  const call = async (key, name, args2) => {
    const t = tool(name);
    const callId = `call_${key}_${++n}`;
    req.reply([model.functionCall(t.name, args2, { namespace: t.namespace, callId })]);
    const sent = Date.now();
    req = await next(key === 'long' ? 60000 : 30000);
    const out = model.outputsOf(req.body).get(callId);
    return { out, ...unwrap(out), ms: Date.now() - sent };
  };

  const seen = {};
  try {
    req = await next(60000);
    const names = model.toolNames(req.body);
    const find = (name) => model.findTool(req.body, (tn, ns) =>
      (ns !== undefined && /^(mcp__)?oh[-_]bridge$/.test(ns) && tn === name) ||
      (ns === undefined && new RegExp(`^(mcp__)?oh[-_]bridge__${name}$`).test(tn)));
    const offered = ['terminal', 'file_editor', 'task_tracker'].map(find);
    check(`${label}: Codex offers the bridge's three tools to the model`, offered.every(Boolean), names);
    if (!offered.every(Boolean)) throw new Error(`the bridge's tools are not in the request's tools: ${names.join(', ')}`);
    seen.naming = offered.map((t) => (t.namespace ? `${t.namespace} namespace / ${t.name}` : t.name));
    tool = (name) => offered.find((t) => t.name === name || t.name.endsWith(`__${name}`));

    // A command; its exact text reaches the model.
    let r = await call('echo', 'terminal', { command: 'echo agent-$((6*7))' });
    check(`${label}: terminal's result reaches the model wrapped as Codex wraps MCP results`, r.wrapped, r.out);
    check(`${label}: the model gets exactly the terminal tool's text`, r.text === done('agent-42', s.ws, s.python), r.text);

    // A file is created.
    r = await call('create', 'file_editor', { command: 'create', path: hello, file_text: 'hello\n' });
    check(`${label}: file_editor create reaches the model`, r.text === `File created successfully at: ${hello}`, r.text);
    check(`${label}: the file is on disk`, fs.existsSync(hello) && fs.readFileSync(hello, 'utf8') === 'hello\n',
      fs.existsSync(hello) ? fs.readFileSync(hello, 'utf8') : 'no file');

    // It is edited.
    r = await call('replace', 'file_editor', { command: 'str_replace', path: hello, old_str: 'hello', new_str: 'bye' });
    check(`${label}: str_replace's snippet reaches the model`, (r.text || '').includes('     1\tbye'), r.text);
    check(`${label}: the edit is on disk`, fs.existsSync(hello) && fs.readFileSync(hello, 'utf8') === 'bye\n',
      fs.existsSync(hello) ? fs.readFileSync(hello, 'utf8') : 'no file');

    // A tool error (isError). Codex 0.169.0 hands the model the same
    // wrapping as for a success, with no error mark: only its own events
    // say "failed" (checked below).
    r = await call('error', 'file_editor', { command: 'view', path: nope });
    check(`${label}: an error result reaches the model with OpenHands' text`,
      r.text === `Invalid \`path\` parameter: ${nope}. The path ${nope} does not exist. Please provide a valid path.`, r.out);

    // (http) The editor rejects an edit.
    if (e) {
      e.answer = (tc) => ((tc.rawInput && tc.rawInput.path === refused) ? 'reject_once' : 'allow_once');
      r = await call('reject', 'file_editor', { command: 'create', path: refused, file_text: 'no\n' });
      e.answer = () => 'allow_once';
      check(`${label}: a rejected action reaches the model as OpenHands says it`, r.text === 'Action rejected: User rejected the action', r.out);
      check(`${label}: the rejected file is not created`, !fs.existsSync(refused));
      const st = await e.status();
      seen.statusDuring = st;
    }

    // A long command Codex gives up on (tool_timeout_sec = 3), then the
    // next command runs at once, in the same terminal. Codex sends
    // notifications/cancelled for the call it gave up on.
    r = await call('long', 'terminal', { command: 'sleep 30; echo late', timeout: 120 });
    seen.timeout = { text: r.text, ms: r.ms };
    check(`${label}: Codex gives up on the long command after its tool_timeout_sec`,
      r.out !== undefined && /timed out/i.test(r.text || '') && r.ms < 20000, { ms: r.ms, out: r.out });
    r = await call('after', 'terminal', { command: 'echo after-cancel' });
    check(`${label}: the command after the cancel runs, with exactly its own text`,
      r.text === done('after-cancel', s.ws, s.python), r.text);
    const sleeping = leftovers(s.ws, ['sleep', '30']);
    check(`${label}: the cancelled command is not running on`, sleeping.length === 0, { pids: sleeping });

    // The model ends with a text answer.
    req.reply([model.message('All done: agent-42, hello.txt says bye.')]);
  } catch (err) {
    check(`${label}: the scripted conversation ran to its end`, false, String(err && err.stack || err));
    // Let Codex end: any further request is answered with a final message.
    (async () => {
      if (req && !req.closed) try { req.reply([model.message('Stopping.')]); } catch { /* answered */ }
      while (!agentDone) {
        try { (await m.next(5000)).reply([model.message('Stopping.')]); } catch { /* none yet */ }
      }
    })();
  }

  const a = await agent;
  const wall = Date.now() - started;
  const events = codexEvents(a.stdout);
  check(`${label}: codex exits 0`, a.code === 0 && !a.timedOut, { code: a.code, signal: a.signal, timedOut: a.timedOut, stderr: a.stderr.slice(-3000) });
  // Codex reports settings it does not know as "error" items; the block's
  // and this test's settings must all be known to this version.
  const unknown = events.filter((ev) => ev.item && ev.item.type === 'error' && /unrecognized configuration/.test(ev.item.message)).map((ev) => ev.item.message);
  check(`${label}: Codex knows every setting in config.toml`, unknown.length === 0, unknown);
  const final = events.filter((ev) => ev.type === 'item.completed' && ev.item && ev.item.type === 'agent_message').map((ev) => ev.item.text);
  check(`${label}: Codex reports the model's final answer`, final.includes('All done: agent-42, hello.txt says bye.'), final);

  // Codex's own view of the MCP calls (its --json events).
  const items = mcpItems(events);
  const errItem = items.find((it) => it.arguments && it.arguments.path === nope);
  check(`${label}: Codex records the isError result as a failed call`, !!errItem && errItem.status === 'failed' && errItem.error === null &&
    errItem.result && errItem.result.content && errItem.result.content[0].text.includes(`The path ${nope} does not exist`), errItem);
  const okItems = items.filter((it) => it.arguments && it.arguments.command === 'echo agent-$((6*7))');
  check(`${label}: Codex records the command as a completed call of server oh-bridge`, okItems.length === 1 && okItems[0].status === 'completed' &&
    okItems[0].server === 'oh-bridge' && okItems[0].tool === 'terminal', okItems);

  // "late" never reached the model or the editor: no output line says it
  // (the editor's mirror shows the command line itself, which names it).
  const lateLine = /(^|\n)late\r?(\n|$)/;
  const outputs = m.log.flatMap((x) => ((x.body && x.body.input) || []).filter((i) => i.type === 'function_call_output').map((i) => unwrap(i).text || ''));
  check(`${label}: "late" reaches nothing`, !outputs.some((t) => lateLine.test(t)) && !(e && Object.values(e.mirrored).some((t) => lateLine.test(t))),
    e ? e.mirrored : outputs);

  // Nothing left loopback.
  check(`${label}: Codex connects to nothing outside loopback`, a.outside.length === 0, a.outside);
  const paths = [...new Set(m.log.map((x) => `${x.method} ${x.path}`))];
  check(`${label}: Codex asks the model server only POST /v1/responses`, paths.length === 1 && paths[0] === 'POST /v1/responses', paths);

  if (e) {
    // The editor saw the calls.
    const mirror = e.mirrored['agent-1'] || '';
    check(`${label}: the editor mirrors the agent's terminal (agent-1)`, mirror.includes('agent-42'), e.mirrored);
    const agentNames = [...new Set(e.asked.map((p) => p.agent))];
    const clientInfo = `codex-mcp-client ${codexVersion}`;
    check(`${label}: the permission questions name the agent by Codex's clientInfo`, agentNames.length === 1 && agentNames[0] === clientInfo,
      { agents: agentNames, want: clientInfo });
    const asked = e.asked.map((p) => ({ kind: p.toolCall.kind, title: p.toolCall.title, path: p.toolCall.rawInput && p.toolCall.rawInput.path }));
    // Each command and edit was asked about, in order, with its kind and
    // what it does (a view may be asked about as "read" too).
    const want = [['execute', 'run `echo agent-$((6*7))`'], ['edit', `create ${hello}`], ['edit', `str_replace ${hello}`],
      ['edit', `create ${refused}`], ['execute', 'run `sleep 30; echo late`'], ['execute', 'run `echo after-cancel`']];
    const got = asked.filter((q) => q.kind !== 'read').map((q) => [q.kind, q.title]);
    check(`${label}: the editor was asked about each command ("execute") and edit ("edit")`,
      JSON.stringify(got) === JSON.stringify(want), { got, want });
    seen.asked = asked;

    // Codex ends its HTTP session at exit (it sends DELETE).
    const { status: st, ms } = await untilStatus(e, (x) => x.sessions === 0, 15000);
    seen.sessionsGone = st.sessions === 0 ? ms : undefined;
    check(`${label}: the bridge's MCP session ends when Codex exits`, st.sessions === 0, { sessions: st.sessions, agents: st.agents });
    await e.close();
  }
  await m.close();
  console.log(`     ${label}: ${(wall / 1000).toFixed(1)} s; tools ${JSON.stringify(seen.naming)}; timeout ${JSON.stringify(seen.timeout)}` +
    (e ? `; session gone after ${seen.sessionsGone} ms; agents ${JSON.stringify((seen.statusDuring || {}).agents)}; asked ${JSON.stringify(seen.asked)}` : ''));
}

(async () => {
  for (const t of transports(['stdio', 'http'])) {
    try {
      await session(t);
    } catch (err) {
      check(`codex ${t}: the session ran`, false, String(err && err.stack || err));
    }
  }
  finish();
})();
