// Drives the real Gemini CLI (test/agents/node_modules, headless
// `gemini -p ... --output-format json`) against oh-bridge's MCP tools,
// over both transports, with a scripted Gemini API on 127.0.0.1
// (model-gemini.cjs) instead of Google's:
//   - stdio: the project's block for Gemini CLI (./.gemini/settings.json)
//     makes the CLI spawn `oh-bridge mcp`;
//   - http: an editor played by vscode-jsonrpc opens the bridge's
//     Streamable HTTP endpoint (mcp/start) and the block points the CLI
//     at it; the calls land in the editor's session (permission questions,
//     the mirrored terminal, a rejected action);
//   - npx, alone when OH_BRIDGE_NPM_REGISTRY is set (internal/distcheck):
//     the block makes the CLI spawn `npx -y oh-bridge mcp`, installed from
//     that registry.
// The model calls the tools by the names the CLI offers it, and the
// results are checked as they reach the model in its next request.
// Usage: node gemini.cjs <oh-bridge binary> <temp dir>
'use strict';
const childProcess = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { setup, block, apply, traced, editorBridge, untilStatus, done, check, finish, transports, useNPMRegistry } = require('./lib.cjs');
const model = require('./model-gemini.cjs');

const [binArg, tmpArg] = process.argv.slice(2);
if (!binArg || !tmpArg) {
  console.error('usage: node gemini.cjs <oh-bridge> <temp dir>');
  process.exit(2);
}
const bin = path.resolve(binArg);
const tmp = path.resolve(tmpArg);

// Gemini CLI names an MCP server's tool mcp_<server>_<tool>
// (generateValidName in its core) and adds a boolean wait_for_previous
// to every tool's parameters, MCP tools included.
const SERVER = 'oh-bridge';
const toolName = (t) => `mcp_${SERVER}_${t}`;
// The model every request goes to: a fixed model, so the CLI's "auto"
// router asks no classifier first.
const MODEL = 'gemini-3-flash-preview';
// The MCP request timeout (ms) this test sets on the server's entry, so
// that the CLI gives up on a long command and cancels it.
const MCP_TIMEOUT = 3000;

// Gemini CLI hands an MCP tool's text content to the model wrapped as
// untrusted context (wrapUntrusted in its mcp-tool.js).
const untrusted = (t) => `<untrusted_context>\n${t}\n</untrusted_context>`;

// userSettings is ~/.gemini/settings.json as a user of an API key who
// wants nothing sent anywhere but the model would write it.
const userSettings = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  model: { name: MODEL },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  ide: { enabled: false },
};

// The function responses (the parts with functionResponse) of the last
// turn of a request to the model.
function functionResponses(req) {
  const contents = (req.body && req.body.contents) || [];
  const last = contents[contents.length - 1];
  if (!last || last.role !== 'user') return [];
  return (last.parts || []).filter((p) => p.functionResponse).map((p) => p.functionResponse);
}

// An MCP result with isError reaches the model as
// response.error = "MCP tool '<tool>' reported tool error for function
// call: <call JSON> with response: <parts JSON>", the parts holding
// {functionResponse: {name, response: <the CallToolResult>}}; mcpError
// reads the CallToolResult back.
function mcpError(err) {
  if (typeof err !== 'string') return undefined;
  const at = err.lastIndexOf(' with response: ');
  if (at < 0) return undefined;
  try {
    const parts = JSON.parse(err.slice(at + ' with response: '.length));
    return parts[0].functionResponse.response;
  } catch {
    return undefined;
  }
}
const resultText = (r) => ((r && r.content) || []).filter((c) => c.type === 'text').map((c) => c.text).join('');

async function agentRun(transport) {
  const label = transport;
  const s = setup(tmp, `gemini-${transport}`);
  const hello = path.join(s.ws, 'hello.txt');
  const missing = path.join(s.ws, 'nope.txt');
  const refused = path.join(s.ws, 'refused.txt');
  let e;
  let settingsFile;
  if (transport === 'http') {
    e = await editorBridge(bin, s);
    settingsFile = await apply(block('gemini', 'http'), { URL: e.url, TOKEN: e.token }, s);
  } else if (transport === 'npx') {
    useNPMRegistry(s);
    // npx fetches the bridge into the run's empty cache first: the run's
    // 3 s MCP timeout, set below to test giving up on a command, covers
    // the server's start too, which a loaded machine's first install can
    // pass. A person's Gemini CLI waits 10 minutes; their second npx is
    // this one.
    const warm = childProcess.spawnSync('npx', ['-y', 'oh-bridge', '--version'], { cwd: s.ws, env: s.env, encoding: 'utf8', timeout: 120000 });
    if (warm.status !== 0) throw new Error(`npx -y oh-bridge --version: ${warm.status} ${warm.stderr}`);
    settingsFile = await apply(block('gemini', 'npx'), { WS: s.ws }, s);
  } else {
    settingsFile = await apply(block('gemini', 'stdio'), { BIN: bin, WS: s.ws }, s);
  }
  // The server's timeout, for this run only: the block's entry with
  // "timeout" (ms) added. (User settings cannot add it: mcpServers merge
  // shallowly, so the workspace's entry replaces the user's whole entry.)
  const ws = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  ws.mcpServers[SERVER].timeout = MCP_TIMEOUT;
  fs.writeFileSync(settingsFile, JSON.stringify(ws, null, 2) + '\n');

  const gdir = path.join(s.home, '.gemini');
  fs.mkdirSync(gdir, { recursive: true });
  fs.writeFileSync(path.join(gdir, 'settings.json'), JSON.stringify(userSettings, null, 2) + '\n');
  // The workspace is trusted, as "Trust folder" in the CLI's dialog
  // records it; an untrusted workspace's settings (the block) are ignored.
  fs.writeFileSync(path.join(gdir, 'trustedFolders.json'), JSON.stringify({ [s.ws]: 'TRUST_FOLDER' }, null, 2) + '\n');

  // The script: each step answers the next request that offers the
  // bridge's tools, after looking at what reached the model.
  const seen = {}; // step name -> what the model received
  const FINAL = 'All done with the oh-bridge tools.';
  const steps = [
    (req) => {
      const decls = (req.body.tools || []).flatMap((t) => t.functionDeclarations || []);
      seen.offered = decls.map((d) => d.name);
      seen.schemas = Object.fromEntries(decls.filter((d) => d.name.startsWith('mcp_')).map((d) => [d.name, d.parametersJsonSchema || d.parameters]));
      if (!seen.offered.includes(toolName('terminal')) || !seen.offered.includes(toolName('file_editor'))) return null;
      return [model.call(toolName('terminal'), { command: 'echo agent-$((6*7))' })];
    },
    (req) => {
      seen.echo = functionResponses(req);
      return [model.call(toolName('file_editor'), { command: 'create', path: hello, file_text: 'hello\n', wait_for_previous: true })];
    },
    (req) => {
      seen.create = functionResponses(req);
      seen.createdOnDisk = fs.existsSync(hello) ? fs.readFileSync(hello, 'utf8') : null;
      return [model.call(toolName('file_editor'), { command: 'str_replace', path: hello, old_str: 'hello', new_str: 'bye', wait_for_previous: true })];
    },
    (req) => {
      seen.replace = functionResponses(req);
      seen.replacedOnDisk = fs.existsSync(hello) ? fs.readFileSync(hello, 'utf8') : null;
      return [model.call(toolName('file_editor'), { command: 'view', path: missing })];
    },
    (req) => {
      seen.view = functionResponses(req);
      seen.longAt = Date.now();
      return [model.call(toolName('terminal'), { command: 'sleep 30; echo late', timeout: 120 })];
    },
    (req) => {
      seen.long = functionResponses(req);
      seen.longTook = Date.now() - seen.longAt;
      return [model.call(toolName('terminal'), { command: 'echo after-cancel' })];
    },
    ...(transport === 'http' ? [
      (req) => {
        seen.after = functionResponses(req);
        // The editor says no to the next question: the create below.
        e.answer = () => 'reject_once';
        return [model.call(toolName('file_editor'), { command: 'create', path: refused, file_text: 'no\n' })];
      },
      (req) => {
        seen.rejected = functionResponses(req);
        e.answer = () => 'allow_once';
        return [model.text(FINAL)];
      },
    ] : [
      (req) => {
        seen.after = functionResponses(req);
        return [model.text(FINAL)];
      },
    ]),
  ];
  let step = 0;
  const other = []; // requests without the bridge's tools (utility calls)
  const m = await model.start(async (req) => {
    const decls = ((req.body && req.body.tools) || []).flatMap((t) => t.functionDeclarations || []);
    if (step > 0 && !decls.some((d) => d.name.startsWith(`mcp_${SERVER}_`))) {
      other.push(req);
      return [model.text('ok')];
    }
    if (step >= steps.length) {
      seen.extra = (seen.extra || []).concat([functionResponses(req)]);
      return [model.text(FINAL)];
    }
    const out = steps[step++](req);
    if (out === null) {
      step = steps.length;
      return [model.text(`the tools were not offered: ${seen.offered.join(', ')}`)];
    }
    return out;
  });

  const env = { ...s.env, GEMINI_API_KEY: 'scripted-key', GOOGLE_GEMINI_BASE_URL: m.url };
  const args = ['-p', 'Use the oh-bridge tools: run a command, create hello.txt, edit it, then finish.', '--output-format', 'json'];
  const t0 = Date.now();
  const r = await traced('gemini', args, { cwd: s.ws, env, timeout: 75000 });
  const took = Date.now() - t0;
  await m.close();
  let out;
  try { out = JSON.parse(r.stdout); } catch { out = undefined; }

  // What the CLI offered.
  check(`${label}: Gemini CLI offers the bridge's tools as ${toolName('terminal')}, ${toolName('file_editor')}, ${toolName('task_tracker')}`,
    ['terminal', 'file_editor', 'task_tracker'].every((t) => (seen.offered || []).includes(toolName(t))), seen.offered);
  const waitProp = (seen.schemas && seen.schemas[toolName('file_editor')] && seen.schemas[toolName('file_editor')].properties.wait_for_previous) || null;
  check(`${label}: Gemini CLI adds a boolean wait_for_previous to the MCP tools' parameters`,
    waitProp && waitProp.type === 'boolean', waitProp);

  // 1. The command's text reaches the model exactly, as untrusted context.
  const want1 = untrusted(done('agent-42', s.ws, s.python));
  const got1 = seen.echo && seen.echo[0];
  check(`${label}: the terminal's text reaches the model exactly (as {output: "<untrusted_context>\\n…\\n</untrusted_context>"})`,
    got1 && got1.name === toolName('terminal') && got1.response.output === want1, got1);

  // 2. create, with wait_for_previous set.
  const got2 = seen.create && seen.create[0];
  check(`${label}: file_editor create (wait_for_previous: true) runs and the file is on disk`,
    seen.createdOnDisk === 'hello\n' && got2 && got2.response.output === untrusted(`File created successfully at: ${hello}`),
    { onDisk: seen.createdOnDisk, response: got2 && got2.response });

  // 3. str_replace, with wait_for_previous set.
  const got3 = seen.replace && seen.replace[0];
  check(`${label}: file_editor str_replace (wait_for_previous: true) runs and the file is "bye\\n"`,
    seen.replacedOnDisk === 'bye\n' && got3 && typeof got3.response.output === 'string' && got3.response.output.includes('     1\tbye'),
    { onDisk: seen.replacedOnDisk, response: got3 && got3.response });

  // 4. An isError result.
  const got4 = seen.view && seen.view[0];
  const err4 = got4 && mcpError(got4.response.error);
  check(`${label}: an isError result reaches the model as {error: "MCP tool 'file_editor' reported tool error … with response: …"} with OpenHands' text`,
    got4 && got4.response.output === undefined && got4.response.error.startsWith("MCP tool 'file_editor' reported tool error for function call: ") &&
    err4 && err4.isError === true &&
    resultText(err4) === `Invalid \`path\` parameter: ${missing}. The path ${missing} does not exist. Please provide a valid path.`,
    got4);

  // 5. The long command: the CLI gives up after its timeout and cancels.
  const got5 = seen.long && seen.long[0];
  const err5 = got5 && mcpError(got5.response.error);
  check(`${label}: the CLI gives up on \`sleep 30\` after the server's timeout (${MCP_TIMEOUT} ms) and tells the model`,
    got5 && err5 && err5.error && /timed out/i.test(err5.error.message) && seen.longTook < 20000,
    { tookMs: seen.longTook, response: got5 && got5.response });
  const got6 = seen.after && seen.after[0];
  check(`${label}: the command after the cancel runs: exactly done('after-cancel')`,
    got6 && got6.response.output === untrusted(done('after-cancel', s.ws, s.python)), got6);
  const later = [seen.after, seen.rejected, ...(seen.extra || [])].flat().filter(Boolean);
  check(`${label}: the cancelled command's "late" never reaches the model`,
    !later.some((f) => /(^|\n)late(\n|$)/.test(JSON.stringify(f.response).replace(/\\n/g, '\n'))), later);

  if (transport === 'http') {
    // 6. A rejected action.
    const got7 = seen.rejected && seen.rejected[0];
    const err7 = got7 && mcpError(got7.response.error);
    check(`${label}: a rejected create reaches the model as OpenHands' rejection, and no file`,
      err7 && err7.isError === true && resultText(err7) === 'Action rejected: User rejected the action' && !fs.existsSync(refused), got7);
    // 7. The editor's side.
    const mirror = e.mirrored['agent-1'] || '';
    check(`${label}: the editor mirrors the agent's terminal agent-1 with agent-42`, mirror.includes('agent-42'), e.mirrored);
    check(`${label}: ... and not the cancelled command's "late"`, !/(^|\n)late\r?(\n|$)/.test(mirror), mirror);
    const titles = e.asked.map((a) => `${a.toolCall.kind} ${a.toolCall.title}`);
    const agents = [...new Set(e.asked.map((a) => a.agent))];
    check(`${label}: the editor is asked about each call, named, with its kind`,
      titles.includes('execute run `echo agent-$((6*7))`') && titles.includes(`edit create ${hello}`) &&
      titles.includes(`edit str_replace ${hello}`) && titles.includes('execute run `echo after-cancel`') &&
      titles.includes(`edit create ${refused}`), titles);
    check(`${label}: the questions name the agent as Gemini CLI's MCP client (gemini-cli-mcp-client <version>)`,
      agents.length === 1 && /^gemini-cli-mcp-client \d+\.\d+\.\d+/.test(agents[0] || ''), agents);
  }

  // 8. The end.
  check(`${label}: the model ends with its text and gemini exits 0`,
    r.code === 0 && step === steps.length && out && out.response === FINAL,
    { code: r.code, signal: r.signal, timedOut: r.timedOut, step, stdout: r.stdout.slice(0, 2000), stderr: r.stderr.slice(-3000) });
  check(`${label}: the CLI asked the model nothing else`, other.length === 0 && !seen.extra && m.errors.length === 0,
    { other: other.map((q) => `${q.path} ${JSON.stringify(q.body).slice(0, 300)}`), extra: seen.extra, errors: m.errors.map(String) });
  const paths = [...new Set(m.requests.map((q) => `${q.method} ${q.path}${q.query}`))];
  check(`${label}: the CLI's only requests to the model are streamGenerateContent`,
    paths.length === 1 && paths[0] === `POST /v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, paths);
  // 9. Nothing left loopback.
  check(`${label}: nothing left loopback`, r.outside.length === 0 && r.addresses.length > 0, { outside: r.outside, addresses: r.addresses.length });

  // 10. The editor's session ends when the CLI has gone.
  if (transport === 'http') {
    const { status } = await untilStatus(e, (x) => x.sessions === 0, 15000);
    check(`${label}: the bridge ends the CLI's MCP session after it exits (mcp/status sessions 0 within 15 s)`, status.sessions === 0, status);
    await e.close();
    check(`${label}: the editor bridge logged no error`, e.stderr() === '', e.stderr());
  }
  console.log(`# ${label}: gemini ran ${took} ms; the model heard back ${seen.longTook} ms after calling "sleep 30"`);
}

(async () => {
  const t0 = Date.now();
  try {
    for (const t of transports(['stdio', 'http'])) await agentRun(t);
  } catch (err) {
    check('no exception', false, err && err.stack);
  }
  console.log(`# whole run ${Date.now() - t0} ms`);
  finish();
})();
