// What the real-agent tests share: a workspace and a home for the agent,
// the configuration blocks the project hands out (extension/src/agents/
// configs.json), applied as written, the editor bridge played by
// vscode-jsonrpc, and a run of the agent under strace that lists every
// network address it tried, so a test can check nothing left loopback.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const nodeModules = path.join(__dirname, '..', 'node', 'node_modules');
const rpc = require(path.join(nodeModules, 'vscode-jsonrpc', 'node'));
const { check, finish, sleep } = require(path.join(__dirname, '..', 'node', 'report.cjs'));

const repo = path.resolve(__dirname, '..', '..');
const agentBin = path.join(__dirname, 'node_modules', '.bin');
const configs = JSON.parse(fs.readFileSync(path.join(repo, 'extension', 'src', 'agents', 'configs.json'), 'utf8')).agents;

// setup makes a workspace, a home and a PATH whose python is known (so
// OpenHands' texts are exact), with the agents' CLIs on it.
function setup(tmp, name) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(tmp, `${name}-`)));
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  const binDir = path.join(root, 'bin');
  for (const d of [ws, home, binDir]) fs.mkdirSync(d);
  const python = path.join(binDir, 'python');
  fs.writeFileSync(python, '#!/bin/sh\n', { mode: 0o755 });
  const env = {
    PATH: `${binDir}:${agentBin}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    USER: os.userInfo().username,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    TMPDIR: root,
    NO_CHANGE_TIMEOUT_SECONDS: '2',
    // Every agent: no telemetry, no update check, no colour.
    DO_NOT_TRACK: '1',
    NO_COLOR: '1',
    CI: 'true',
  };
  return { root, ws, home, python, env };
}

// npmRegistry is the npm registry the npx blocks install the bridge from:
// internal/distcheck sets OH_BRIDGE_NPM_REGISTRY to one on loopback that
// serves dist/'s tarballs as npm's registry would serve them published.
// With it set, the agents' scripts run the npx transport alone.
const npmRegistry = process.env.OH_BRIDGE_NPM_REGISTRY;

// transports are the transports a script runs: all, or 'npx' alone.
function transports(all) {
  return npmRegistry ? ['npx'] : all;
}

// useNPMRegistry points npm at that registry as a person configures npm,
// in ~/.npmrc of the run's home, with an empty cache of the run's own:
// the agents pass HOME to the servers they start (Codex passes little
// else).
function useNPMRegistry(s) {
  const rc = [`registry=${npmRegistry}`, `cache=${path.join(s.root, 'npm-cache')}`, 'update-notifier=false', 'audit=false', 'fund=false'];
  fs.writeFileSync(path.join(s.home, '.npmrc'), `${rc.join('\n')}\n`);
}

// block is agent id's configuration block for transport "stdio", "http"
// or "npx".
function block(agent, transport) {
  const a = configs.find((c) => c.id === agent);
  if (!a) throw new Error(`no configuration for ${agent} in configs.json`);
  return a[transport];
}

function fill(text, vars) {
  return text.replace(/\{(BIN|WS|URL|TOKEN)\}/g, (m, k) => {
    if (vars[k] === undefined) throw new Error(`${m} has no value`);
    return vars[k];
  });
}

// apply writes a block's file (~ is the agent's home, . the workspace) or
// runs its command in the workspace, as a user would.
async function apply(b, vars, s) {
  const text = fill(b.text, vars);
  if (b.file) {
    const file = b.file.startsWith('~/') ? path.join(s.home, b.file.slice(2)) : path.join(s.ws, b.file);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  }
  const r = await run('sh', ['-c', text], { cwd: s.ws, env: s.env, timeout: 60000 });
  if (r.code !== 0) throw new Error(`${text}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  return r;
}

// run runs a command to its end (killing its process group after timeout
// ms), with its output.
function run(cmd, args, { cwd, env, timeout = 120000, input } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    if (input !== undefined) child.stdin.end(input); else child.stdin.end();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, timeout);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

// traced runs cmd under strace, which follows every process it starts
// and writes each connect, sendto and sendmsg with an address. outside
// lists the addresses that are not loopback (or a local socket).
async function traced(cmd, args, opts = {}) {
  // Not in the workspace: an agent would list the file.
  const log = path.join(os.tmpdir(), `.strace-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const r = await run('strace', ['-f', '-qq', '-e', 'trace=connect,sendto,sendmsg', '-e', 'signal=none', '-o', log, cmd, ...args], opts);
  const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n') : [];
  fs.rmSync(log, { force: true });
  r.addresses = [];
  r.outside = [];
  for (const line of lines) {
    const fam = /sa_family=(AF_INET6?)/.exec(line);
    if (!fam) continue;
    const addr = fam[1] === 'AF_INET' ? (/inet_addr\("([^"]+)"\)/.exec(line) || [])[1] : (/inet_pton\(AF_INET6, "([^"]+)"/.exec(line) || [])[1];
    const port = (/htons\((\d+)\)/.exec(line) || [])[1];
    if (!addr) continue;
    const where = `${addr}:${port}`;
    r.addresses.push(where);
    const loopback = /^127\./.test(addr) || addr === '::1' || /^::ffff:127\./.test(addr) || addr === '0.0.0.0' || addr === '::';
    if (!loopback) r.outside.push(`${where} ${line.slice(0, 200)}`);
  }
  return r;
}

// editorBridge starts `oh-bridge --stdio` as an editor would, answers its
// permission questions with answer(toolCall) ("allow_once" unless told),
// keeps what it mirrors of each terminal, and opens the MCP endpoint.
async function editorBridge(bin, s, answer = () => 'allow_once') {
  const child = spawn(bin, ['--stdio', '--workspace', s.ws, '--log-level', 'error'], { stdio: ['pipe', 'pipe', 'pipe'], env: s.env });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const e = { asked: [], mirrored: {}, answer, conn, pid: child.pid, stderr: () => stderr };
  conn.onRequest('workspace/applyEdit', () => ({ applied: false }));
  conn.onRequest('session/request_permission', (p) => {
    e.asked.push(p);
    return { outcome: { outcome: 'selected', optionId: e.answer(p.toolCall) } };
  });
  conn.onNotification('terminal/did_output', (p) => { e.mirrored[p.terminalId] = (e.mirrored[p.terminalId] || '') + p.data; });
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    capabilities: { terminal: { streaming: true }, permissions: { requestPermission: true } },
  });
  await conn.sendNotification('initialized', {});
  const started = await conn.sendRequest('mcp/start', {});
  e.url = started.url;
  e.token = started.token;
  e.status = () => conn.sendRequest('mcp/status', {});
  e.close = async () => {
    await conn.sendRequest('shutdown').catch(() => {});
    conn.sendNotification('exit').catch(() => {});
    await new Promise((r) => { if (child.exitCode !== null) r(); else child.on('exit', r); });
    conn.dispose();
  };
  return e;
}

// shellsUnder lists the shells (bash, zsh) running under process pid.
function shellsUnder(pid) {
  const parent = {};
  const comm = {};
  for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      comm[p] = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      if (fields[0] !== 'Z') parent[p] = fields[1];
    } catch { /* gone */ }
  }
  const under = (p) => { for (let q = parent[p]; q; q = parent[q]) if (q === String(pid)) return true; return false; };
  return Object.keys(parent).filter((p) => under(p) && /^(bash|zsh)$/.test(comm[p]));
}

// leftovers are the processes still running a command in dir whose
// command line is argv (e.g. ['sleep', '30']).
function leftovers(dir, argv) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (cmd.join(' ') === argv.join(' ') && fs.readlinkSync(`/proc/${pid}/cwd`) === dir) found.push(pid);
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}

// untilStatus polls the editor's mcp/status until pred holds or ms pass.
async function untilStatus(e, pred, ms) {
  const t0 = Date.now();
  let st = await e.status();
  while (!pred(st) && Date.now() - t0 < ms) {
    await sleep(100);
    st = await e.status();
  }
  return { status: st, ms: Date.now() - t0 };
}

// done is the terminal tool's text for a command that completed.
function done(out, ws, python, code = 0) {
  return `${out}\n[The command completed with exit code ${code}.]\n[Current working directory: ${ws}]\n` +
    `[Python interpreter: ${python}]\n[Command finished with exit code ${code}]`;
}

// The terminal tool's text for a command that ran in a new shell has
// OpenHands' reset line first; none of these tests ends a shell.

module.exports = { setup, block, apply, fill, run, traced, editorBridge, shellsUnder, leftovers, untilStatus, done, check, finish, sleep, repo, agentBin, transports, useNPMRegistry };
