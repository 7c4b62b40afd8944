// The extension's bridge client against the real compiled oh-bridge
// (OH_BRIDGE_BIN): an edit landing in an unsaved buffer through
// workspace/applyEdit, a terminal mirrored through terminal/did_output,
// and a connection failure reported in plain words.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { Bridge, type ApplyWorkspaceEditParams, type EditorHost, type PermissionRequest, type TextEdit } from '../src/bridge';

const binary = process.env.OH_BRIDGE_BIN ?? '';

/** A host with in-memory buffers that applies LSP edits like VS Code. */
class FakeHost implements EditorHost {
  buffers = new Map<string, string>();
  edits: ApplyWorkspaceEditParams[] = [];
  notes: { method: string; params: unknown }[] = [];
  logs: string[] = [];
  private waiters: (() => void)[] = [];

  applyEdit(p: ApplyWorkspaceEditParams): Promise<{ applied: boolean }> {
    this.edits.push(p);
    for (const change of p.edit.documentChanges ?? []) {
      const text = this.buffers.get(change.textDocument.uri);
      if (text === undefined) return Promise.resolve({ applied: false });
      this.buffers.set(change.textDocument.uri, applyEdits(text, change.edits));
    }
    return Promise.resolve({ applied: true });
  }
  permissionRequests: PermissionRequest[] = [];
  /** The answer to session/request_permission: reject unless set. */
  permissionAnswer = 'reject_once';
  requestPermission(p: PermissionRequest): Promise<{ outcome: { outcome: 'selected'; optionId: string } }> {
    this.permissionRequests.push(p);
    return Promise.resolve({ outcome: { outcome: 'selected', optionId: this.permissionAnswer } });
  }
  showMessage(): void {}
  log(message: string): void {
    this.logs.push(message);
  }
  progress(): void {}
  notification(method: string, params: unknown): void {
    this.notes.push({ method, params });
    for (const w of this.waiters.splice(0)) w();
  }
  /** Waits until a notification satisfies ok. */
  async await(ok: (n: { method: string; params: unknown }) => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.notes.some(ok)) {
      if (Date.now() > deadline) throw new Error(`no such notification; got ${JSON.stringify(this.notes).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
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

async function withBridge(fn: (bridge: Bridge, host: FakeHost, ws: string) => Promise<void>): Promise<void> {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ext-bridge-')));
  const host = new FakeHost();
  const bridge = new Bridge({ binary, folders: [ws], host, env: { HOME: ws } });
  try {
    await bridge.start();
    await fn(bridge, host, ws);
  } finally {
    await bridge.stop();
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

void test('an agent edit lands in the unsaved buffer, not on disk', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  await withBridge(async (bridge, host, ws) => {
    const file = path.join(ws, 'notes.txt');
    fs.writeFileSync(file, 'on disk\n');
    const uri = pathToFileURL(file).href;
    host.buffers.set(uri, 'on disk\nunsaved line\n');
    await bridge.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 3, text: host.buffers.get(uri) } });
    const res = await bridge.request<{ output: string }>('edit/str_replace', { path: 'notes.txt', oldStr: 'unsaved line', newStr: 'edited by the agent' });
    assert.match(res.output, /has been edited/);
    assert.equal(host.edits.length, 1);
    assert.equal(host.buffers.get(uri), 'on disk\nedited by the agent\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'on disk\n');
    const read = await bridge.request<{ content: string }>('fs/read_text_file', { path: 'notes.txt' });
    assert.equal(read.content, 'on disk\nedited by the agent\n');
  });
});

void test('an OpenHands edit action lands in the unsaved buffer too', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  await withBridge(async (bridge, host, ws) => {
    const file = path.join(ws, 'agent.txt');
    fs.writeFileSync(file, 'hello\n');
    const uri = pathToFileURL(file).href;
    host.buffers.set(uri, 'hello\n');
    await bridge.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'plaintext', version: 1, text: 'hello\n' } });
    const action = { action: 'edit', id: 5, args: { command: 'str_replace', path: file, old_str: 'hello', new_str: 'hello from the agent', impl_source: 'oh_aci' } };
    const res = await bridge.request<{ observation: { content: string } }>('openhands/execute_action', { action });
    assert.match(res.observation.content, /has been edited/);
    assert.equal(host.buffers.get(uri), 'hello from the agent\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'hello\n');
  });
});

void test('a terminal is mirrored through terminal/did_output', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  await withBridge(async (bridge, host) => {
    const run = await bridge.request<{ terminalId: string; exitCode: number; output: string }>('terminal/run', { command: 'echo mirrored-$((6*7))' });
    assert.equal(run.exitCode, 0);
    assert.match(run.output, /mirrored-42/);
    await host.await((n) => n.method === 'terminal/did_output' && JSON.stringify(n.params).includes('mirrored-42'));
    await host.await((n) => n.method === 'terminal/did_change_state' && (n.params as { state: string; exitCode?: number }).state === 'idle');
  });
});

void test('a connection failure comes back in plain words', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await withBridge(async (bridge, host) => {
    await assert.rejects(bridge.request('openhands/connect', { protocol: 'v0', serverUrl: `http://127.0.0.1:${port}` }), (err: { code: number; message: string }) => {
      assert.equal(err.code, 1019);
      assert.equal(err.message, `cannot reach OpenHands at http://127.0.0.1:${port}: connection refused — is the OpenHands server running?`);
      return true;
    });
    await host.await((n) => n.method === 'openhands/did_change_status' && (n.params as { state: string }).state === 'failed');
  });
});

const standIn = path.join(__dirname, '..', '..', 'fixtures', 'peers', 'openhands_standin.py');

void test('the user is asked before a server action runs, and a rejection is what OpenHands records', { skip: (binary === '' || !fs.existsSync('/usr/bin/python3')) && 'needs OH_BRIDGE_BIN and the stand-in' }, async () => {
  await withBridge(async (bridge, host, ws) => {
    const marker = path.join(ws, 'ran');
    const script = path.join(ws, 'script.json');
    fs.writeFileSync(script, JSON.stringify([{ action: 'run', args: { command: `touch ${marker}`, blocking: true }, timeout: 30 }]));
    const peer = spawn('/usr/bin/python3', [standIn, '--script', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines: string[] = [];
      peer.stdout.on('data', (d: Buffer) => lines.push(...d.toString().split('\n')));
      const waitLine = async (prefix: string): Promise<string> => {
        for (let i = 0; i < 200; i++) {
          const line = lines.find((l) => l.startsWith(prefix));
          if (line !== undefined) return line;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`the stand-in never printed ${prefix}: ${lines.join('\n')}`);
      };
      const port = (await waitLine('PORT ')).slice(5);
      await bridge.request('openhands/connect', { protocol: 'v0', serverUrl: `http://127.0.0.1:${port}` });
      const observation = await waitLine('OBSERVATION ');
      assert.match(observation, /"observation": "user_rejected"/);
      assert.match(observation, /Action has been rejected by the user! Waiting for further user input\./);
      assert.equal(host.permissionRequests.length, 1);
      assert.equal(host.permissionRequests[0]?.toolCall.kind, 'execute');
      assert.match(host.permissionRequests[0]?.toolCall.title ?? '', /^run `touch /);
      assert.deepEqual(host.permissionRequests[0]?.options.map((o) => o.kind), ['allow_once', 'allow_always', 'reject_once']);
      assert.equal(fs.existsSync(marker), false, 'the rejected command ran');
    } finally {
      peer.kill('SIGKILL');
    }
  });
});
