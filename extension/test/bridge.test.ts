// The extension's bridge client against the real compiled oh-bridge
// (OH_BRIDGE_BIN): an edit landing in an unsaved buffer through
// workspace/applyEdit, a terminal mirrored through terminal/did_output, a
// connection failure reported in plain words, and an agent-server's agent
// (the stand-in) working through the bridge after asking. The requests and
// notifications are typed by protocol.gen.ts.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn, spawnSync } from 'node:child_process';
import { Bridge, type ApplyWorkspaceEditParams, type EditorHost, type PermissionRequest, type TextEdit } from '../src/bridge';
import type { BridgeNotifications } from '../src/protocol.gen';

const binary = process.env.OH_BRIDGE_BIN ?? '';

/** A host with in-memory buffers that applies LSP edits like VS Code. */
class FakeHost implements EditorHost {
  buffers = new Map<string, string>();
  edits: ApplyWorkspaceEditParams[] = [];
  logs: string[] = [];

  applyEdit(p: ApplyWorkspaceEditParams): Promise<{ applied: boolean }> {
    this.edits.push(p);
    for (const change of p.edit.documentChanges ?? []) {
      const text = this.buffers.get(change.textDocument.uri);
      if (text === undefined) return Promise.resolve({ applied: false });
      this.buffers.set(change.textDocument.uri, applyEdits(text, change.edits ?? []));
    }
    return Promise.resolve({ applied: true });
  }
  permissionRequests: PermissionRequest[] = [];
  /** The answer to session/request_permission: reject unless set. */
  permissionAnswer = 'reject_once';
  requestPermission(p: PermissionRequest): Promise<{ outcome: { outcome: 'selected'; optionId: string } }> {
    this.permissionRequests.push(p);
    const option = (p.options ?? []).find((o) => o.kind === this.permissionAnswer);
    return Promise.resolve({ outcome: { outcome: 'selected', optionId: option?.optionId ?? this.permissionAnswer } });
  }
  showMessage(): void {}
  log(message: string): void {
    this.logs.push(message);
  }
  progress(): void {}
}

const notificationMethods = [
  'fs/did_change',
  'terminal/did_output',
  'terminal/did_change_state',
  'openhands/did_change_status',
  'openhands/did_receive_event',
  'openhands/did_update_conversation',
] as const satisfies readonly (keyof BridgeNotifications)[];

/** The bridge's notifications so far, by method, for a test to wait on. */
class Notes {
  private readonly byMethod: { [N in keyof BridgeNotifications]?: BridgeNotifications[N][] } = {};
  private readonly waiters = new Set<() => void>();

  constructor(bridge: Bridge) {
    for (const method of notificationMethods) bridge.onNotification(method, (params) => this.add(method, params));
  }

  private add<N extends keyof BridgeNotifications>(method: N, params: BridgeNotifications[N]): void {
    this.byMethod[method] ??= [];
    this.byMethod[method]?.push(params);
    for (const w of this.waiters) w();
  }

  of<N extends keyof BridgeNotifications>(method: N): readonly BridgeNotifications[N][] {
    return this.byMethod[method] ?? [];
  }

  /** Resolves once ok holds for the method's notifications so far, or fails after ms. */
  until<N extends keyof BridgeNotifications>(method: N, ok: (all: readonly BridgeNotifications[N][]) => boolean, ms = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (): void => {
        this.waiters.delete(check);
        clearTimeout(timer);
      };
      const check = (): void => {
        if (!ok(this.of(method))) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no such ${method}; got ${JSON.stringify(this.of(method)).slice(0, 2000)}`));
      }, ms);
      this.waiters.add(check);
      check();
    });
  }
}

/** Applies LSP edits (UTF-16 positions, which JS strings index) to text. */
function applyEdits(text: string, edits: TextEdit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const offset = (p: { line: number; character: number }): number => (lineStarts[p.line] ?? text.length) + p.character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) {
    text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  }
  return text;
}

async function withBridge(fn: (bridge: Bridge, host: FakeHost, notes: Notes, ws: string) => Promise<void>): Promise<void> {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ext-bridge-')));
  const host = new FakeHost();
  const bridge = new Bridge({ binary, folders: [ws], host, env: { HOME: ws } });
  const notes = new Notes(bridge);
  try {
    await bridge.start();
    await fn(bridge, host, notes, ws);
  } finally {
    await bridge.stop();
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

void test('an agent edit lands in the unsaved buffer, not on disk', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  await withBridge(async (bridge, host, _notes, ws) => {
    const file = path.join(ws, 'notes.txt');
    fs.writeFileSync(file, 'on disk\n');
    const uri = pathToFileURL(file).href;
    const unsaved = 'on disk\nunsaved line\n';
    host.buffers.set(uri, unsaved);
    await bridge.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 3, text: unsaved } });
    const res = await bridge.request('edit/str_replace', { path: 'notes.txt', oldStr: 'unsaved line', newStr: 'edited by the agent' });
    assert.match(res.output, /has been edited/);
    assert.equal(host.edits.length, 1);
    assert.equal(host.buffers.get(uri), 'on disk\nedited by the agent\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'on disk\n');
    const read = await bridge.request('fs/read_text_file', { path: 'notes.txt' });
    assert.equal(read.content, 'on disk\nedited by the agent\n');
  });
});

void test('an OpenHands edit action lands in the unsaved buffer too', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  await withBridge(async (bridge, host, _notes, ws) => {
    const file = path.join(ws, 'agent.txt');
    fs.writeFileSync(file, 'hello\n');
    const uri = pathToFileURL(file).href;
    host.buffers.set(uri, 'hello\n');
    await bridge.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text: 'hello\n' } });
    const action = { action: 'edit', id: 5, args: { command: 'str_replace', path: file, old_str: 'hello', new_str: 'hello from the agent', impl_source: 'oh_aci' } };
    const res = await bridge.request('openhands/execute_action', { action });
    assert.match(JSON.stringify(res.observation), /has been edited/);
    assert.equal(host.buffers.get(uri), 'hello from the agent\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'hello\n');
  });
});

void test('a terminal is mirrored through terminal/did_output', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  await withBridge(async (bridge, _host, notes) => {
    const run = await bridge.request('terminal/run', { command: 'echo mirrored-$((6*7))' });
    assert.equal(run.exitCode, 0);
    assert.match(run.output, /mirrored-42/);
    await notes.until('terminal/did_output', (all) => all.filter((p) => p.terminalId === run.terminalId).map((p) => p.data).join('').includes('mirrored-42'));
    await notes.until('terminal/did_change_state', (all) => all.some((p) => p.terminalId === run.terminalId && p.state === 'idle'));
  });
});

void test('a connection failure comes back in plain words', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await withBridge(async (bridge) => {
    await assert.rejects(bridge.request('openhands/connect', { serverUrl: `http://127.0.0.1:${port}` }), (err: { code: number; message: string }) => {
      assert.equal(err.code, 1019);
      assert.equal(err.message, `cannot reach the OpenHands agent-server at http://127.0.0.1:${port}: connection refused: is the agent-server running (python -m openhands.agent_server, port 8000 by default)?`);
      return true;
    });
  });
});

const standIn = path.join(__dirname, '..', '..', 'fixtures', 'peers', 'agent_server_standin.py');

/** Whether Debian's python3 has what the agent-server stand-in needs. */
function standInRuns(): boolean {
  if (!fs.existsSync('/usr/bin/python3') || !fs.existsSync(standIn)) return false;
  return spawnSync('/usr/bin/python3', ['-c', 'import uvicorn, fastapi, websockets']).status === 0;
}

void test('an agent-server\'s agent asks before it runs a command, and its conversation comes as typed updates', { skip: (binary === '' || !standInRuns()) && 'needs OH_BRIDGE_BIN and the agent-server stand-in (task peer-deps)' }, async () => {
  await withBridge(async (bridge, host, notes, ws) => {
    const marker = path.join(ws, 'ran');
    const script = path.join(ws, 'script.json');
    fs.writeFileSync(script, JSON.stringify({ turns: [
      [{ tool: 'terminal', arguments: { command: `touch ${marker} && echo made-$((6*7))` }, thought: 'Make the marker.' }],
      [{ message: 'Made it.' }],
    ] }));
    host.permissionAnswer = 'allow_once';
    const peer = spawn('/usr/bin/python3', [standIn, '--script', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines: string[] = [];
      const waiters = new Set<() => void>();
      let partial = '';
      peer.stdout.on('data', (d: Buffer) => {
        const all = (partial + d.toString()).split('\n');
        partial = all.pop() ?? '';
        lines.push(...all);
        for (const w of waiters) w();
      });
      const line = (prefix: string): Promise<string> => new Promise((resolve, reject) => {
        const check = (): void => {
          const found = lines.find((l) => l.startsWith(prefix));
          if (found === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the stand-in never printed ${prefix}: ${lines.join('\n')}`));
        }, 30_000);
        waiters.add(check);
        check();
      });
      const port = (await line('PORT ')).slice(5);
      const connected = await bridge.request('openhands/connect', {
        serverUrl: `http://127.0.0.1:${port}`,
        task: 'Make the marker.',
        llm: { model: 'test/scripted' },
        confirmationPolicy: 'AlwaysConfirm',
      });
      assert.equal(connected.status.state, 'connected');
      assert.notEqual(connected.conversationId, '');
      assert.match(await line('TOOL_RESULT '), /made-42/);
      assert.ok(fs.existsSync(marker), 'the allowed command did not run');
      assert.equal(host.permissionRequests[0]?.toolCall.kind, 'execute');
      assert.match(host.permissionRequests[0]?.toolCall.title ?? '', /touch /);
      await notes.until('openhands/did_update_conversation', (all) => all.some((p) => p.update.sessionUpdate === 'agent_message_chunk' && p.update.content.text.includes('Made it.')), 30_000);
      const updates = notes.of('openhands/did_update_conversation');
      assert.ok(updates.every((p) => p.conversationId === '' || p.conversationId === connected.conversationId), JSON.stringify(updates).slice(0, 2000));
      const call = updates.map((p) => p.update).find((u) => u.sessionUpdate === 'tool_call');
      assert.ok(call?.sessionUpdate === 'tool_call' && JSON.stringify(call.rawInput).includes('touch '), JSON.stringify(call));
      await notes.until('openhands/did_change_status', (all) => all.some((s) => s.state === 'connected' && s.conversationId === connected.conversationId));
      assert.ok(notes.of('openhands/did_receive_event').length > 0);
    } finally {
      peer.kill('SIGKILL');
    }
  });
});
