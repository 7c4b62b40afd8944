// The connection to the oh-bridge process: spawn it, speak JSON-RPC with
// vscode-jsonrpc, initialize with the client capabilities, answer the
// bridge's requests through an EditorHost, and pass its notifications to
// whoever listens for them. The methods and notifications, and their
// params and results, are typed by protocol.gen.ts, which Go generates
// from the bridge's own types. Nothing here uses the vscode module, so the
// same client is tested against the real binary in plain node.
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';
import type { PermissionOutcome } from './permissions';
import type { BridgeNotifications, BridgeRequests, EditorRequests, InitializeResult } from './protocol.gen';

export type { TextEdit } from './protocol.gen';

/** What the person is told when a command needs the bridge and it is not running. */
export const bridgeNotRunning = 'The OpenHands bridge is not running. See "OpenHands: Show Bridge Log".';

/** What the bridge sends with workspace/applyEdit. */
export type ApplyWorkspaceEditParams = EditorRequests['workspace/applyEdit']['params'];

/** What the bridge sends with session/request_permission. */
export type PermissionRequest = EditorRequests['session/request_permission']['params'];

/** What the editor does when the bridge asks. */
export interface EditorHost {
  applyEdit(params: ApplyWorkspaceEditParams): Promise<{ applied: boolean; failureReason?: string }>;
  requestPermission(params: PermissionRequest): Promise<{ outcome: PermissionOutcome }>;
  showMessage(type: number, message: string): void;
  log(message: string): void;
  progress(token: string | number, value: unknown): void;
}

export interface BridgeOptions {
  binary: string;
  folders: string[];
  host: EditorHost;
  /** Extra environment for the bridge process. */
  env?: NodeJS.ProcessEnv;
  /** Extra command-line flags (openhands.bridge.args). */
  args?: string[];
  /** Called with every message when tracing is on. */
  trace?: (line: string) => void;
}

/** Listeners for each notification the bridge sends. */
type Listeners = { [N in keyof BridgeNotifications]?: ((params: BridgeNotifications[N]) => void)[] };

export class Bridge {
  private child: ChildProcess | undefined;
  private conn: rpc.MessageConnection | undefined;
  private exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  private readonly listeners: Listeners = {};
  private stopping = false;

  constructor(private readonly opts: BridgeOptions) {}

  /** Starts the process and runs initialize/initialized. */
  async start(): Promise<InitializeResult> {
    const child = spawn(this.opts.binary, ['--stdio', '--log-level', 'info', ...(this.opts.args ?? [])], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...this.opts.env },
    });
    this.child = child;
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => reject(new Error(`cannot start the bridge ${this.opts.binary}: ${err.message}`)));
    });
    child.stderr?.on('data', (d: Buffer) => this.opts.host.log(d.toString().trimEnd()));
    child.on('exit', (code, signal) => {
      for (const l of this.exitListeners) l(code, signal);
    });
    await spawned;
    if (child.stdout === null || child.stdin === null) {
      throw new Error('the bridge process has no stdio pipes');
    }
    const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
    this.conn = conn;
    this.register(conn);
    if (this.opts.trace !== undefined) {
      const trace = this.opts.trace;
      await conn.trace(rpc.Trace.Verbose, { log: (message: string, data?: string) => trace(data === undefined ? message : `${message}\n${data}`) });
    }
    conn.listen();
    const result = await this.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'oh-bridge-vscode', version: '0.1.0' },
      workspaceFolders: this.opts.folders.map((f) => ({ uri: pathToFileURL(f).href, name: f })),
      capabilities: {
        workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } },
        window: { workDoneProgress: true },
        terminal: { streaming: true },
        permissions: { requestPermission: true },
      },
    });
    await this.notify('initialized', {});
    return result;
  }

  private register(conn: rpc.MessageConnection): void {
    const host = this.opts.host;
    conn.onRequest('workspace/applyEdit', (p: ApplyWorkspaceEditParams) => host.applyEdit(p));
    conn.onRequest('session/request_permission', (p: PermissionRequest) => host.requestPermission(p));
    conn.onNotification('window/showMessage', (p: { type: number; message: string }) => host.showMessage(p.type, p.message));
    conn.onNotification('window/logMessage', (p: { message: string }) => host.log(p.message));
    conn.onNotification('$/progress', (p: { token: string | number; value: unknown }) => host.progress(p.token, p.value));
    for (const method of this.listened) this.dispatch(conn, method);
  }

  /** The notifications someone listens for, in the order they were first asked for. */
  private readonly listened: (keyof BridgeNotifications)[] = [];

  /**
   * Calls handler with each notification of this method the bridge sends,
   * from now on (listen before start() to miss none). The params are as
   * protocol.gen.ts says: the Go types they are generated from are what the
   * bridge marshals.
   */
  onNotification<N extends keyof BridgeNotifications>(method: N, handler: (params: BridgeNotifications[N]) => void): void {
    this.listeners[method] ??= [];
    this.listeners[method]?.push(handler);
    if (this.listened.includes(method)) return;
    this.listened.push(method);
    if (this.conn !== undefined) this.dispatch(this.conn, method);
  }

  /** Routes a notification to its listeners (vscode-jsonrpc keeps one handler a method). */
  private dispatch<N extends keyof BridgeNotifications>(conn: rpc.MessageConnection, method: N): void {
    conn.onNotification(method, (params: BridgeNotifications[N]) => {
      for (const l of this.listeners[method] ?? []) l(params);
    });
  }

  /** Sends a request to the bridge. */
  request<M extends keyof BridgeRequests>(method: M, params: BridgeRequests[M]['params'], token?: rpc.CancellationToken): Promise<BridgeRequests[M]['result']> {
    if (this.conn === undefined) {
      return Promise.reject(new Error('the bridge is not running'));
    }
    // vscode-jsonrpc treats every extra argument as a positional param: an
    // undefined token would turn params into [params, undefined].
    return token === undefined ? this.conn.sendRequest(method, params) : this.conn.sendRequest(method, params, token);
  }

  /** Sends a notification to the bridge: one of its methods that answers nothing (textDocument/didOpen, ...). */
  async notify<M extends keyof BridgeRequests>(method: M, params: BridgeRequests[M]['params']): Promise<void> {
    await this.conn?.sendNotification(method, params);
  }

  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListeners.push(listener);
  }

  /** Whether stop() was called (an exit is then not a crash). */
  get isStopping(): boolean {
    return this.stopping;
  }

  /** shutdown + exit, then kill the process if it lingers. */
  async stop(timeoutMs = 3000): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      // shutdown and exit are the connection's own, not in the method table.
      await Promise.race([this.conn?.sendRequest('shutdown'), delay(timeoutMs)]);
      await this.conn?.sendNotification('exit');
    } catch {
      // The connection may already be gone; the kill below still runs.
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
    this.conn?.dispose();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
