// Drives the editor's face of a compiled oh-bridge with vscode-jsonrpc (the
// library the VS Code extension uses) against OpenHands' own agent-server,
// whose agent's model is a scripted one (the Go test's, one per scenario):
//   C. confirmation mode (AlwaysConfirm): each action the agent waits to
//      run is put to the editor as session/request_permission; the one it
//      allows runs (and is not asked about again when it reaches the
//      bridge's tools), the one it rejects does not, and the agent is told.
//   P. openhands/pause while a command runs: the agent finishes that step
//      and stops before the next; openhands/resume lets it go on.
//   I. openhands/interrupt while a command runs: the agent stops at once,
//      the command in the bridge's terminal is stopped, and a message
//      afterwards sets the agent going again.
// Usage: node editor_real.cjs BRIDGE CONFIG.json
// CONFIG is {"server", "key", "model", "models": {"C", "P", "I": the base
// URL of each scenario's scripted model}, "tmp"}.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');
const report = require('./report.cjs');

const { check, finish, sleep } = report;

const [bin, configFile] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
// until polls cond for up to 60 s.
const until = (what, cond) => report.until(what, cond, 60);

// runs says whether the scenario of this letter is run (all by default).
const runs = (letter) => config.scenarios === undefined || config.scenarios.includes(letter);


function processRunning(marker) {
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(marker)) return true;
    } catch { /* gone */ }
  }
  return false;
}

async function main() {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(config.tmp, 'ws-')));
  const home = fs.mkdtempSync(path.join(config.tmp, 'home-'));
  const child = spawn(bin, ['--stdio', '--workspace', ws, '--log-level', 'error'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') },
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const asked = [];
  let answer = () => 'allow_once';
  let events = [];
  let statuses = [];
  let updates = [];
  conn.onRequest('session/request_permission', (p) => { asked.push(p); return { outcome: { outcome: 'selected', optionId: answer(p) } }; });
  conn.onNotification('openhands/did_receive_event', (p) => events.push(p.event));
  conn.onNotification('openhands/did_change_status', (p) => statuses.push(p));
  conn.onNotification('openhands/did_update_conversation', (p) => updates.push(p.update));
  conn.listen();
  const llm = (letter) => ({ model: config.model, base_url: config.models[letter], api_key: 'sk-scripted', num_retries: 0 });
  const connect = async (letter, task, more) => {
    events = [];
    statuses = [];
    updates = [];
    asked.length = 0;
    return conn.sendRequest('openhands/connect', { serverUrl: config.server, sessionApiKey: config.key, llm: llm(letter), task, ...more });
  };
  const last = () => statuses.at(-1) || {};
  const statusSeen = (s) => statuses.some((x) => x.executionStatus === s);
  const ofKind = (kind) => events.filter((e) => e.kind === kind);
  const file = (name) => path.join(ws, name);
  try {
    await conn.sendRequest('initialize', {
      processId: process.pid,
      capabilities: { workspace: { applyEdit: true }, terminal: { streaming: true }, permissions: { requestPermission: true } },
    });
    await conn.sendNotification('initialized', {});

    // C. Confirmation mode: the first command is allowed, the second
    // rejected; a message afterwards lets the agent say so.
    if (runs('C')) {
    answer = (p) => (p.toolCall.rawInput && String(p.toolCall.rawInput.command || '').includes('rejected') ? 'reject_once' : 'allow_once');
    const c = await connect('C', 'Run two commands.', { confirmationPolicy: 'AlwaysConfirm' });
    check('C: openhands/connect answers a new conversation, connected', /^[0-9a-f-]{36}$/.test(c.conversationId) && c.status.state === 'connected', c);
    await until('the rejection', () => ofKind('UserRejectObservation').length > 0);
    await until('the agent to stop after the rejection', () => last().executionStatus === 'idle' || last().executionStatus === 'finished');
    check('C: the agent waited for confirmation', statusSeen('waiting_for_confirmation'), statuses.map((s) => s.executionStatus));
    check('C: the allowed command ran', fs.existsSync(file('confirmed.txt')) && fs.readFileSync(file('confirmed.txt'), 'utf8') === 'confirmed-9\n');
    check('C: the rejected command did not run', !fs.existsSync(file('rejected.txt')));
    check('C: the editor was asked once per action, as the action (the allowed call was not asked about again at the tools)',
      asked.length === 2 && asked.every((p) => p.toolCall.kind === 'execute') && /confirmed/.test(JSON.stringify(asked[0].toolCall.rawInput)), asked.map((p) => p.toolCall));
    const rejection = ofKind('UserRejectObservation')[0];
    check('C: the rejection names the command\'s tool and a reason', rejection.tool_name === 'terminal' && /reject/i.test(rejection.rejection_reason), rejection);
    const obs = ofKind('ObservationEvent').find((e) => e.tool_name === 'terminal');
    check('C: the allowed command\'s observation is the bridge\'s terminal text', obs !== undefined &&
      obs.observation.content.map((x) => x.text).join('\n').includes('[The command completed with exit code 0.]'), obs);
    check('C: no action is counted as running', last().runningActions === 0, last());
    await conn.sendRequest('openhands/send_message', { text: 'Did both run?' });
    await until('the agent\'s answer', () => ofKind('MessageEvent').some((e) => e.source === 'agent'));
    const said = ofKind('MessageEvent').filter((e) => e.source === 'agent').map((e) => e.llm_message.content.map((x) => x.text).join('')).join('\n');
    check('C: the agent goes on after the rejection (its model saw it)', said.includes('The second was rejected.'), said);
    }

    // P. Pause while the first command runs: its step ends, no next one
    // starts; resume goes on.
    answer = () => 'allow_once';
    if (runs('P')) {
    await connect('P', 'Run the slow command, then the quick one.');
    // The command runs for 9 s: on a loaded machine openhands/connect, and
    // the command's start, may take seconds, and the pause must land while
    // it runs.
    await until('the slow command to start', () => processRunning('sleep 9.25'));
    // 1.58.2 answers the pause once the step under way ends (it waits for
    // the conversation's lock, which the step holds while the bridge's tool
    // runs): the time is printed, not checked.
    const pauseAt = Date.now();
    await conn.sendRequest('openhands/pause', {});
    console.log(`(openhands/pause answered in ${Date.now() - pauseAt} ms)`);
    await until('the pause', () => statusSeen('paused'));
    await until('the slow command\'s observation', () => ofKind('ObservationEvent').some((e) => e.tool_name === 'terminal'));
    check('P: the step under way finished: the slow command ran to its end', fs.existsSync(file('one.txt')));
    check('P: the agent is paused after it', last().executionStatus === 'paused', last());
    // A negative can only be bounded: the scripted model answers in
    // milliseconds, so a next step would be under way within a second.
    await sleep(1500);
    check('P: no next step was taken while paused', ofKind('ActionEvent').length === 1 && !fs.existsSync(file('two.txt')), ofKind('ActionEvent').map((e) => e.tool_name));
    check('P: a PauseEvent is in the conversation', ofKind('PauseEvent').length === 1, events.map((e) => e.kind));
    await conn.sendRequest('openhands/resume', {});
    await until('the agent to finish', () => last().executionStatus === 'finished' && ofKind('MessageEvent').some((e) => e.source === 'agent'));
    check('P: after resume the next command ran', fs.existsSync(file('two.txt')));
    }

    // I. Interrupt while a command runs.
    if (runs('I')) {
    await connect('I', 'Run the long command.');
    // As soon as the command runs in the bridge's terminal: the
    // agent-server may not have reported it yet (1.58.2 sends a socket
    // that attaches during a step nothing until the step ends).
    await until('the long command to start', () => processRunning('sleep 61.5'));
    await conn.sendRequest('openhands/interrupt', {});
    await until('the agent to stop', () => ['paused', 'idle', 'finished', 'error'].includes(last().executionStatus) && statusSeen('running'));
    const stoppedAs = last().executionStatus;
    check('I: the agent stopped (paused)', stoppedAs === 'paused', { statuses: statuses.map((s) => s.executionStatus), events: events.map((e) => e.kind) });
    let gone = false;
    for (let i = 0; i < 200 && !gone; i++) {
      gone = !processRunning('sleep 61.5');
      if (!gone) await sleep(50);
    }
    check('I: the command in the bridge\'s terminal was stopped', gone);
    const card = Object.assign({}, ...updates.filter((u) => u.toolCallId !== undefined && u.toolCallId === (updates.find((x) => x.sessionUpdate === 'tool_call' && x.kind === 'execute') || {}).toolCallId));
    check('I: its card did not complete, and "never" was never printed', card.status !== 'completed' && !JSON.stringify(card.content || []).includes('never'), card);
    await conn.sendRequest('openhands/send_message', { text: 'Go on.' });
    await until('the agent\'s answer', () => ofKind('MessageEvent').some((e) => e.source === 'agent'));
    await until('the agent to finish', () => last().executionStatus === 'finished');
    check('I: a message after the interrupt sets the agent going again', true);
    check('I: no action is counted as running', last().runningActions === 0, last());
    }
    await conn.sendRequest('openhands/disconnect', {});
    check('openhands/disconnect reports disconnected', last().state === 'disconnected', last());
  } catch (err) {
    check('no exception', false, err && err.stack ? err.stack : String(err));
  } finally {
    // The bridge ends as an editor ends it, and is waited for: the Go test
    // removes its home after this script.
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
    try {
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
    } catch { /* gone already */ }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    conn.dispose();
  }
  check('the bridge wrote nothing on stderr at --log-level error', stderr === '', stderr);
}

main().then(finish);
