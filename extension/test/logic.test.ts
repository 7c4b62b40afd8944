// Unit tests of the extension's decisions: binary lookup, restart backoff,
// permission modes, status text and terminal reuse.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { bundledPath, findBridge, type BinaryLookup } from '../src/binary';
import { RestartPolicy } from '../src/restart';
import { allowOption, decide, outcomeFor, type PermissionOption } from '../src/permissions';
import { disconnected, statusView } from '../src/status';
import { agentServerEvent, describeEvent } from '../src/events';
import { agentServerEventKinds, type AgentServerEvent, type Status } from '../src/protocol.gen';
import { chooseTerminal, type TerminalInfo } from '../src/reuse';
import { cliCommand, shellQuote } from '../src/cli';
import cliLines from './cli-commands.json';
import { isAgentTerminal, snippets, terminalTitle } from '../src/mcp';

function lookup(over: Partial<BinaryLookup>, executables: string[]): BinaryLookup {
  return {
    settingPath: '',
    extensionPath: '/ext',
    platform: 'linux',
    arch: 'x64',
    pathEnv: '/usr/bin:/opt/bin',
    isExecutable: (f) => executables.includes(f),
    ...over,
  };
}

void test('binary lookup: setting, then bundled, then PATH, else a fix-it message', () => {
  const bundled = bundledPath('/ext', 'linux', 'x64');
  assert.equal(bundled, '/ext/bin/linux-x64/oh-bridge');
  assert.deepEqual(findBridge(lookup({ settingPath: '/my/oh-bridge' }, ['/my/oh-bridge', bundled])), { path: '/my/oh-bridge', source: 'setting' });
  assert.deepEqual(findBridge(lookup({}, [bundled, '/usr/bin/oh-bridge'])), { path: bundled, source: 'bundled' });
  assert.deepEqual(findBridge(lookup({}, ['/opt/bin/oh-bridge'])), { path: '/opt/bin/oh-bridge', source: 'PATH' });
  const wrongSetting = findBridge(lookup({ settingPath: '/nope' }, [bundled]));
  assert.ok('error' in wrongSetting && wrongSetting.error.includes('openhands.bridge.path is set to /nope'), JSON.stringify(wrongSetting));
  const none = findBridge(lookup({ arch: 'arm64' }, []));
  assert.ok('error' in none && none.error.includes('linux-arm64') && none.error.includes('go install'), JSON.stringify(none));
  const win = findBridge(lookup({ platform: 'win32', pathEnv: 'C:\\bin;D:\\tools' }, ['D:\\tools/oh-bridge.exe']));
  assert.deepEqual(win, { path: 'D:\\tools/oh-bridge.exe', source: 'PATH' });
});

void test('restart policy: growing delays, then giving up after 5 crashes in 3 minutes', () => {
  const p = new RestartPolicy();
  const delays = [0, 1000, 2000, 3000, 4000].map((t) => p.onCrash(t));
  assert.deepEqual(delays.map((d) => (d.restart ? d.delayMs : -1)), [500, 1000, 2000, 4000, 8000]);
  const sixth = p.onCrash(5000);
  assert.equal(sixth.restart, false);
  assert.ok(!sixth.restart && sixth.reason.includes('crashed 6 times in 3 minutes'));
  // Crashes older than the window are forgotten.
  const later = p.onCrash(5000 + 180_000);
  assert.deepEqual(later, { restart: true, delayMs: 500 });
  p.reset();
  assert.deepEqual(p.onCrash(0), { restart: true, delayMs: 500 });
});

void test('permission modes', () => {
  const none = new Set<string>();
  const table: [Parameters<typeof decide>[0], string, ReadonlySet<string>, string][] = [
    ['ask', 'read', none, 'ask'],
    ['ask', 'execute', none, 'ask'],
    ['allowReads', 'read', none, 'allow'],
    ['allowReads', 'search', none, 'allow'],
    ['allowReads', 'edit', none, 'ask'],
    ['allowReads', 'execute', none, 'ask'],
    ['allowAll', 'delete', none, 'allow'],
    ['ask', 'execute', new Set(['execute']), 'allow'],
  ];
  for (const [mode, kind, always, want] of table) {
    assert.equal(decide(mode, kind, always), want, `${mode} ${kind}`);
  }
  const options: PermissionOption[] = [
    { optionId: 'a1', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'a2', name: 'Allow always', kind: 'allow_always' },
    { optionId: 'r1', name: 'Reject', kind: 'reject_once' },
  ];
  assert.deepEqual(outcomeFor(options, 'allow_always'), { outcome: 'selected', optionId: 'a2' });
  assert.deepEqual(outcomeFor(options, undefined), { outcome: 'cancelled' });
  assert.deepEqual(outcomeFor(options, 'reject_always'), { outcome: 'cancelled' });
  assert.deepEqual(allowOption(options), { outcome: 'selected', optionId: 'a1' });
});

void test('status bar text follows the bridge and the connection', () => {
  const conn = (over: Partial<Status>): Status => ({ ...disconnected, ...over });
  assert.match(statusView('missing', disconnected).text, /no bridge/);
  assert.match(statusView('running', disconnected).text, /Disconnected/);
  assert.match(statusView('running', conn({ state: 'connecting' })).text, /Connecting/);
  assert.match(statusView('running', conn({ state: 'connected', conversationId: '0123456789abcdef' })).text, /Connected \(01234567\)/);
  assert.match(statusView('running', conn({ state: 'connected', conversationId: 'c', runningActions: 2 })).text, /Running 2 actions/);
  assert.match(statusView('running', conn({ state: 'connected', conversationId: 'c', runningActions: 1 })).text, /Running 1 action$/);
  const failed = statusView('running', conn({ state: 'failed', error: 'cannot reach OpenHands at http://x: connection refused' }));
  assert.match(failed.text, /Failed/);
  assert.match(failed.tooltip, /connection refused/);
  assert.match(statusView('restarting', conn({ state: 'connected' })).text, /restarting/);
  assert.match(statusView('running', conn({ state: 'sleeping', error: 'why' })).text, /OpenHands: sleeping/, 'a state the extension does not know yet');
  const via = 'the relay at https://cloud/s/abc/relay, as window "app — VS Code"';
  assert.ok(statusView('running', conn({ state: 'connected', conversationId: 'c', via })).tooltip.endsWith(`Reached through ${via}.`));
  assert.ok(statusView('running', conn({ state: 'connected', conversationId: 'c', executionStatus: 'running', via })).tooltip.endsWith(`Reached through ${via}.`));
  assert.doesNotMatch(statusView('running', conn({ state: 'connected', conversationId: 'c' })).tooltip, /Reached/);
  assert.ok(statusView('running', conn({ state: 'connected', conversationId: 'c', via, viaDown: 'the link to the relay at X is down (EOF)' })).tooltip
    .endsWith(`Reached through ${via}. Now the link to the relay at X is down (EOF).`));
});

void test('status bar text follows the agent', () => {
  const agent = (executionStatus: string): ReturnType<typeof statusView> => statusView('running', { ...disconnected, state: 'connected', conversationId: '0123456789abcdef', executionStatus });
  assert.match(agent('running').text, /Agent working/);
  assert.match(agent('waiting_for_confirmation').text, /Waiting for you/);
  assert.match(agent('paused').text, /Paused/);
  assert.match(agent('paused').tooltip, /Resume Agent/);
  assert.match(agent('finished').text, /Done \(01234567\)/);
  assert.match(agent('stuck').text, /stuck/);
  assert.match(agent('idle').text, /Connected \(01234567\)/);
  assert.match(agent('running').tooltip, /Conversation 0123456789abcdef/);
});

void test('conversation lines: what the agent says and does, and what it got back', () => {
  const text = (t: string): { type: string; text: string } => ({ type: 'text', text: t });
  assert.equal(describeEvent({ kind: 'MessageEvent', source: 'user', llm_message: { role: 'user', content: [text('Fix it.')] } }), 'You: Fix it.');
  assert.equal(describeEvent({ kind: 'MessageEvent', source: 'agent', llm_message: { role: 'assistant', content: [text('Done.')] } }), 'Agent: Done.');
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'terminal', thought: [text('Run the tests.')], action: { kind: 'MCPToolAction', data: { command: 'make test' } } }),
    'Agent thinks: Run the tests.\nAgent runs: make test');
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'file_editor', thought: [], action: { kind: 'MCPToolAction', data: { command: 'str_replace', path: '/w/a.py' } } }),
    'Agent edits (str_replace): /w/a.py');
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'finish', thought: [], action: { kind: 'FinishAction', message: 'All green.' } }), 'Agent finished: All green.');
  const long = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
  const obs = describeEvent({ kind: 'ObservationEvent', tool_name: 'terminal', observation: { kind: 'MCPToolObservation', is_error: false, content: [text("[Tool 'terminal' executed.]"), text(long)] } }) ?? '';
  assert.match(obs, /^Result \(terminal\):\n {4}line 0\n/);
  assert.match(obs, /… \(8 more lines\)$/);
  assert.match(describeEvent({ kind: 'ObservationEvent', tool_name: 'file_editor', observation: { kind: 'MCPToolObservation', is_error: true, content: [text('x'), text('No file.')] } }) ?? '', /^Failed \(file_editor\)/);
  assert.equal(describeEvent({ kind: 'UserRejectObservation', tool_name: 'terminal', rejection_reason: 'not now' }), 'Rejected (terminal): not now');
  assert.equal(describeEvent({ kind: 'ConversationStateUpdateEvent', key: 'execution_status', value: 'running' }), undefined);
  assert.equal(describeEvent({ kind: 'SomethingNew' }), undefined);
  assert.equal(describeEvent('not an event'), undefined);
  // The fields a server leaves out or sends as null.
  assert.equal(describeEvent({ kind: 'MessageEvent', source: 'agent', llm_message: null }), 'Agent: ');
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'terminal', thought: null, action: null }), 'Agent runs: ');
  assert.equal(describeEvent({ kind: 'ObservationEvent', tool_name: 'terminal', observation: null }), undefined);
});

void test('agent-server events: the kinds the bridge reads are the generated ones, another kind is not one', () => {
  for (const kind of ['ActionEvent', 'ObservationEvent', 'MessageEvent', 'AgentErrorEvent', 'UserRejectObservation', 'ConversationStateUpdateEvent', 'PauseEvent', 'SystemPromptEvent', 'Condensation']) {
    assert.ok(agentServerEventKinds.includes(kind as AgentServerEvent['kind']), kind);
    assert.equal(agentServerEvent({ kind, id: 'e1' })?.kind, kind);
  }
  assert.equal(agentServerEvent({ kind: 'SomethingNew' }), undefined);
  assert.equal(agentServerEvent({ id: 'no kind' }), undefined);
  assert.equal(agentServerEvent(null), undefined);
});

void test("conversation lines: a tool's line follows its declaration's card kind, not its name", () => {
  // open_file is declared in Go with the file card and no command: the
  // extension has no case of its own for it.
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'open_file', thought: [], action: { kind: 'MCPToolAction', data: { path: '/w/a.go', line: 3 } } }),
    'Agent shows: /w/a.go');
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'task_tracker', thought: [], action: { kind: 'MCPToolAction', data: { command: 'plan' } } }),
    'Agent updates its task list');
  assert.equal(describeEvent({ kind: 'ActionEvent', tool_name: 'browser', thought: [], action: { kind: 'MCPToolAction', data: {} } }), 'Agent calls browser');
});

void test('terminal reuse: newest idle OpenHands terminal with shell integration, else a new one', () => {
  const t = (id: number, name: string, integration: boolean, busy: boolean, createdAt: number): TerminalInfo => ({ id, name, mirror: false, hasShellIntegration: integration, busy, createdAt });
  assert.deepEqual(chooseTerminal([t(1, 'OpenHands', true, false, 1), t(2, 'OpenHands', true, false, 5), t(3, 'bash', true, false, 9)], 'smart'), { reuse: 2 });
  assert.deepEqual(chooseTerminal([t(1, 'OpenHands', true, true, 1), t(2, 'OpenHands', true, false, 0)], 'smart'), { reuse: 2 });
  assert.ok('create' in chooseTerminal([t(1, 'OpenHands', true, true, 1)], 'smart'));
  assert.ok('create' in chooseTerminal([t(1, 'OpenHands', false, false, 1)], 'smart'));
  assert.ok('create' in chooseTerminal([t(1, 'zsh', true, false, 1)], 'smart'));
  const always = chooseTerminal([t(1, 'OpenHands', true, false, 1)], 'alwaysNew');
  assert.ok('create' in always && always.reason.includes('alwaysNew'));
  // The bridge's terminals, mirrored: never, idle as they may look.
  const mirrors = [{ ...t(1, 'OpenHands: t1', true, false, 1), mirror: true }, { ...t(2, 'OpenHands tools: claude-code 2.1', true, false, 2), mirror: true }];
  assert.deepEqual(chooseTerminal(mirrors, 'smart'), { create: true, reason: 'no OpenHands terminal is open' });
  assert.deepEqual(chooseTerminal([...mirrors, t(3, 'OpenHands', true, false, 0)], 'smart'), { reuse: 3 });
});

void test('the CLI command line: the task as one shell word, never expanded', () => {
  for (const c of cliLines.commands) {
    assert.equal(cliCommand(c.task, 'activate' in c ? c.activate : undefined), c.command, JSON.stringify(c.task));
  }
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
  // bash reads each line back as the task (the real CLI gets it in
  // cmd/oh-bridge/real_cli_test.go).
  for (const c of cliLines.commands.filter((x) => x.task !== '')) {
    const echoed = spawnSync('bash', ['-c', `${cliCommand(c.task).replace(/^openhands --task=/, 'printf %s ')}`], { encoding: 'utf8' });
    assert.equal(echoed.stdout, c.task);
  }
});

void test('MCP: a configuration for each agent, with the URL and the token', () => {
  const ep = { url: 'http://127.0.0.1:4711/mcp', token: 'tok_123' };
  const all = snippets(ep);
  const [openhands, claude, claudeProject, codex, gemini] = all.map((s) => s.text) as [string, string, string, string, string];
  assert.deepEqual(JSON.parse(claudeProject), { mcpServers: { 'oh-bridge': { type: 'http', url: ep.url, headers: { Authorization: 'Bearer tok_123' } } } });
  assert.deepEqual(all.map((s) => s.label), [
    'OpenHands agent (mcp_config)',
    'Claude Code',
    'Claude Code (.mcp.json)',
    'Codex (~/.codex/config.toml)',
    'Gemini CLI (.gemini/settings.json)',
    'Any MCP client (mcpServers JSON)',
  ]);
  assert.deepEqual(JSON.parse(openhands), { 'oh-bridge': { transport: 'http', url: ep.url, headers: { Authorization: 'Bearer tok_123' } } });
  assert.equal(claude, 'claude mcp add --scope local --transport http oh-bridge http://127.0.0.1:4711/mcp --header "Authorization: Bearer tok_123"');
  assert.ok(codex.includes('url = "http://127.0.0.1:4711/mcp"') && codex.includes('http_headers = { Authorization = "Bearer tok_123" }') &&
    codex.includes('default_tools_approval_mode = "approve"'), codex);
  assert.deepEqual(JSON.parse(gemini), { mcpServers: { 'oh-bridge': { httpUrl: ep.url, headers: { Authorization: 'Bearer tok_123' }, trust: true } } });
  assert.ok(all.every((s) => !/\{(URL|TOKEN|BIN|WS)\}/.test(s.text)), 'a placeholder left unfilled');
});

void test('MCP: agent terminals are read-only and named after the agent', () => {
  assert.ok(isAgentTerminal('oh-agent'));
  assert.ok(isAgentTerminal('agent-12'));
  assert.ok(!isAgentTerminal('t1'));
  assert.ok(!isAgentTerminal('agent-x'));
  assert.equal(terminalTitle('oh-agent', 'OpenHands agent'), 'OpenHands: agent');
  assert.equal(terminalTitle('agent-1', 'OpenHands tools: claude-code 2.1'), 'OpenHands tools: claude-code 2.1');
  assert.equal(terminalTitle('t2', 'build'), 'OpenHands: build');
  assert.equal(terminalTitle('agent-3', undefined), 'OpenHands: agent-3');
});
