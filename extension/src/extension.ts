// The VS Code extension: it starts the oh-bridge process for the workspace
// (cheap, no network), keeps it running, mirrors open documents into it,
// shows the agent's terminals and the connection state, and asks the user
// before risky actions. It connects to an OpenHands server only when a
// command needs one.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { bundledPath, findBridge } from './binary';
import { Bridge, type ApplyWorkspaceEditParams, type EditorHost, type PermissionRequest, type TextEdit } from './bridge';
import { allowOption, decide, optionLabel, outcomeFor, type PermissionMode, type PermissionOption } from './permissions';
import { RestartPolicy } from './restart';
import { isAgentTerminal, snippets, terminalTitle, type Endpoint } from './mcp';
import { chooseTerminal, type ReuseStrategy } from './reuse';
import { cliCommand } from './cli';
import { disconnected, statusView, type BridgeState } from './status';
import { describeEvent } from './events';
import { ConversationView } from './conversationView';
import { startTestFeed } from './testFeed';
import { MirrorTerminal } from './mirrorTerminal';
import { didChangeParams } from './docsync';
import type { SteerMethod } from './webview/protocol';
import { ago, conversationName } from './history';
import { Servers, type ServerChoice } from './servers';
import { errorData } from './serverWords';
import type { BridgeRequests, ConnectParams, ConversationSummary, Status } from './protocol.gen';

const secretKey = 'openhands.sessionApiKey';
const llmSecretKey = 'openhands.llmApiKey';
// The last conversation of this workspace: {serverUrl, conversationId}.
const lastConversationKey = 'openhands.lastConversation';

/** This workspace's last conversation; open is false after Disconnect. */
interface RememberedConversation {
  serverUrl: string;
  conversationId: string;
  open?: boolean;
}

let controller: Controller | undefined;

export function activate(context: vscode.ExtensionContext): void {
  controller = new Controller(context);
  controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.dispose();
}

class Controller implements EditorHost {
  private readonly output = vscode.window.createOutputChannel('OpenHands Bridge');
  private readonly conversation = vscode.window.createOutputChannel('OpenHands Conversation');
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  private readonly restart = new RestartPolicy();
  private readonly alwaysAllowed = new Set<string>();
  private readonly terminals = new Map<string, MirrorTerminal>();
  private readonly terminalNames = new Map<string, string>();
  private readonly progressBars = new Map<string | number, { report: (m: string) => void; done: () => void }>();
  private bridge: Bridge | undefined;
  private bridgeState: BridgeState = 'starting';
  private connection: Status = disconnected;
  private readonly view: ConversationView;
  private readonly servers: Servers;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.statusItem.command = 'openhands.quickPick';
    this.servers = new Servers(context, secretKey);
    this.view = new ConversationView(context.extensionUri, {
      send: (text) => this.sendFromView(text),
      steer: (method: SteerMethod) => this.steer(method, {}),
      reopen: () => this.connect(undefined, { attach: true, fromView: true }),
      list: (cursor) => this.listConversations(cursor),
      open: (conversationId) => this.connect(undefined, { conversationId, fromView: true }),
      leave: () => this.leave(),
    }, context.workspaceState);
    context.subscriptions.push(this.output, this.conversation, this.statusItem, this.view.register(), this.servers);
    // Test only (OH_BRIDGE_TEST_FEED): the e2e test's long conversation.
    context.subscriptions.push(startTestFeed(this.view, (line) => this.output.appendLine(line)));
    this.view.status(this.connection, this.remembered()?.conversationId);
    this.registerCommands();
    this.syncDocuments();
    // Shell integration tells which terminals run a command right now, for
    // "Start OpenHands CLI in Terminal" to reuse only idle ones.
    context.subscriptions.push(
      vscode.window.onDidStartTerminalShellExecution((e) => this.busyTerminals.add(e.terminal)),
      vscode.window.onDidEndTerminalShellExecution((e) => this.busyTerminals.delete(e.terminal)),
      vscode.window.onDidCloseTerminal((t) => this.busyTerminals.delete(t)),
    );
    this.render();
    this.statusItem.show();
  }

  start(): void {
    const config = vscode.workspace.getConfiguration('openhands');
    // A .vsix does not always keep the executable bit of the bundled bridge.
    const bundled = bundledPath(this.context.extensionPath, process.platform, process.arch);
    try {
      if (fs.existsSync(bundled)) fs.chmodSync(bundled, 0o755);
    } catch {
      // findBridge reports a binary that stays unusable.
    }
    const found = findBridge({
      settingPath: config.get<string>('bridge.path', ''),
      extensionPath: this.context.extensionPath,
      platform: process.platform,
      arch: process.arch,
      pathEnv: process.env.PATH ?? '',
      isExecutable: (f) => {
        try {
          fs.accessSync(f, fs.constants.X_OK);
          return fs.statSync(f).isFile();
        } catch {
          return false;
        }
      },
    });
    if ('error' in found) {
      this.setBridgeState('missing');
      this.output.appendLine(found.error);
      void vscode.window.showErrorMessage(found.error, 'Open Settings').then((choice) => {
        if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'openhands.bridge.path');
      });
      return;
    }
    this.output.appendLine(`starting ${found.path} (${found.source})`);
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const trace = config.get<boolean>('trace', false) ? (line: string) => this.output.appendLine(line) : undefined;
    const extraTools = config.get<string[]>('bridge.extraTools', []);
    const args = [...config.get<string[]>('bridge.args', []), ...(extraTools.length === 0 ? [] : ['--extra-tools', extraTools.join(',')])];
    const bridge = new Bridge({ binary: found.path, folders, host: this, args, ...(trace === undefined ? {} : { trace }) });
    this.bridge = bridge;
    this.listen(bridge);
    bridge.onExit((code, signal) => this.onBridgeExit(bridge, code, signal));
    bridge.start().then(
      () => {
        this.setBridgeState('running');
        for (const doc of vscode.workspace.textDocuments) this.didOpen(doc);
        // Reopening VS Code shows the conversation again: the person asked
        // for it and never disconnected, so attaching is theirs to expect.
        const last = this.remembered();
        if (last?.open === true && config.get<boolean>('restoreConversation', true)) {
          void this.connect(undefined, { attach: true, fromView: true });
        }
      },
      (err: Error) => this.output.appendLine(`the bridge did not start: ${err.message}`),
    );
  }

  private onBridgeExit(bridge: Bridge, code: number | null, signal: string | null): void {
    if (bridge !== this.bridge || bridge.isStopping) return;
    this.output.appendLine(`the bridge exited (code ${String(code)}, signal ${String(signal)})`);
    const decision = this.restart.onCrash(Date.now());
    if (!decision.restart) {
      this.setBridgeState('stopped');
      void vscode.window.showErrorMessage(decision.reason, 'Show Bridge Log').then((c) => {
        if (c !== undefined) this.output.show();
      });
      return;
    }
    this.setBridgeState('restarting');
    setTimeout(() => this.start(), decision.delayMs);
  }

  async dispose(): Promise<void> {
    await this.bridge?.stop();
  }

  // EditorHost ------------------------------------------------------------

  async applyEdit(params: ApplyWorkspaceEditParams): Promise<{ applied: boolean; failureReason?: string }> {
    const edit = new vscode.WorkspaceEdit();
    const toRange = (r: TextEdit['range']): vscode.Range => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
    for (const change of params.edit.documentChanges ?? []) {
      const uri = vscode.Uri.parse(change.textDocument.uri);
      for (const e of change.edits ?? []) edit.replace(uri, toRange(e.range), e.newText);
    }
    for (const [uri, edits] of Object.entries(params.edit.changes ?? {})) {
      for (const e of edits) edit.replace(vscode.Uri.parse(uri), toRange(e.range), e.newText);
    }
    const applied = await vscode.workspace.applyEdit(edit, params.label === undefined ? undefined : { isRefactoring: false });
    return applied ? { applied } : { applied, failureReason: 'VS Code did not apply the edit (the document changed?)' };
  }

  async requestPermission(params: PermissionRequest): Promise<{ outcome: ReturnType<typeof outcomeFor> }> {
    const mode = vscode.workspace.getConfiguration('openhands').get<PermissionMode>('permissions.mode', 'ask');
    const kind = params.toolCall.kind ?? 'other';
    if (decide(mode, kind, this.alwaysAllowed) === 'allow') {
      return { outcome: allowOption(params.options ?? []) };
    }
    const options = params.options ?? [];
    const offered = options.map((o) => o.kind);
    const labels = new Map(offered.map((k) => [k, optionLabel(k, kind)]));
    const who = params.agent === undefined || params.agent === '' ? 'OpenHands' : params.agent;
    const modal = async (): Promise<PermissionOption['kind'] | undefined> => {
      const choice = await vscode.window.showWarningMessage(
        `${who} wants to ${params.toolCall.title}`,
        { modal: true, detail: `Kind: ${kind}` },
        ...offered.map((k) => labels.get(k) ?? k),
      );
      return offered.find((k) => labels.get(k) === choice);
    };
    // The question shows on the card of the call it asks about, in the
    // conversation view. While the view is visible it is the only place
    // asked; a hidden view adds the modal. The first answer wins.
    const inline = this.view.ask({
      toolCallId: params.toolCall.toolCallId,
      title: params.toolCall.title,
      toolKind: kind,
      agent: who,
      options: options.map((o) => ({ ...o, name: labels.get(o.kind) ?? o.name })),
      rawInput: params.toolCall.rawInput,
    });
    const hidden = this.view.visible ? this.view.whenHidden() : { promise: Promise.resolve(), dispose: () => undefined };
    const clicked = inline.answered.then((k) => offered.find((o) => o === k));
    const chosen = await Promise.race([clicked, hidden.promise.then(modal)]);
    hidden.dispose();
    this.view.settle(inline.id, chosen ?? 'dismissed');
    if (chosen === 'allow_always') this.alwaysAllowed.add(kind);
    return { outcome: outcomeFor(options, chosen) };
  }

  showMessage(type: number, message: string): void {
    if (type === 1) void vscode.window.showErrorMessage(message);
    else if (type === 2) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  log(message: string): void {
    this.output.appendLine(message);
  }

  progress(token: string | number, value: unknown): void {
    const v = value !== null && typeof value === 'object' ? value : {};
    const field = (key: string): string | undefined => {
      const f: unknown = Object.getOwnPropertyDescriptor(v, key)?.value;
      return typeof f === 'string' ? f : undefined;
    };
    const kind = field('kind');
    if (kind === 'begin') {
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: field('title') ?? 'OpenHands' }, (p) =>
        new Promise<void>((done) => this.progressBars.set(token, { report: (m) => p.report({ message: m }), done })),
      );
    } else if (kind === 'report') {
      this.progressBars.get(token)?.report(field('message') ?? '');
    } else {
      this.progressBars.get(token)?.done();
      this.progressBars.delete(token);
    }
  }

  // The bridge's notifications -------------------------------------------------

  private listen(bridge: Bridge): void {
    bridge.onNotification('openhands/did_change_status', (status) => {
      this.connection = status;
      if (status.llmSource !== undefined && status.llmSource !== '') void this.servers.tellLLMSource(status.llmSource);
      this.render();
      this.view.status(status, this.remembered()?.conversationId);
      // The view reads the latest status once the conversation is remembered.
      void this.remember(status).then(() => this.view.status(this.connection, this.remembered()?.conversationId));
    });
    bridge.onNotification('openhands/did_update_conversation', (p) => this.view.update(p.conversationId, p.update));
    bridge.onNotification('openhands/server_output', (p) => this.servers.output(p.data));
    bridge.onNotification('openhands/did_receive_event', (p) => {
      const line = describeEvent(p.event);
      if (line !== undefined) this.conversation.appendLine(line);
    });
    bridge.onNotification('terminal/did_output', (p) => this.mirror(p.terminalId).write(p.data));
    bridge.onNotification('editor/show_file', (p) => void showFile(p.path, p.line));
    bridge.onNotification('terminal/did_change_state', (p) => {
      // The first output can come before the first state change: a
      // mirror made by then is renamed.
      if (p.name !== undefined && p.name !== this.terminalNames.get(p.terminalId)) {
        this.terminalNames.set(p.terminalId, p.name);
        this.terminals.get(p.terminalId)?.rename(terminalTitle(p.terminalId, p.name));
      }
    });
  }

  // Documents ---------------------------------------------------------------

  private syncDocuments(): void {
    this.context.subscriptions.push(
      vscode.workspace.onDidOpenTextDocument((d) => this.didOpen(d)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (!this.inWorkspace(e.document)) return;
        // Only what changed, not the whole text per keystroke (docsync.ts).
        const params = didChangeParams(e);
        if (params !== undefined) void this.bridge?.notify('textDocument/didChange', params);
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (this.inWorkspace(d)) void this.bridge?.notify('textDocument/didClose', { textDocument: { uri: d.uri.toString() } });
      }),
    );
  }

  private didOpen(d: vscode.TextDocument): void {
    if (!this.inWorkspace(d)) return;
    void this.bridge?.notify('textDocument/didOpen', {
      textDocument: { uri: d.uri.toString(), languageId: d.languageId, version: d.version, text: d.getText() },
    });
  }

  private inWorkspace(d: vscode.TextDocument): boolean {
    return d.uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(d.uri) !== undefined;
  }

  // Status and commands -------------------------------------------------------

  private setBridgeState(s: BridgeState): void {
    this.bridgeState = s;
    this.render();
  }

  private render(): void {
    const view = statusView(this.bridgeState, this.connection);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
  }

  private registerCommands(): void {
    const reg = (id: string, fn: () => unknown): void => {
      this.context.subscriptions.push(vscode.commands.registerCommand(id, fn));
    };
    reg('openhands.connect', () => this.connect(undefined, { attach: true }));
    reg('openhands.disconnect', () => this.leave());
    reg('openhands.openEarlierConversation', () => this.pickConversation());
    reg('openhands.startConversation', async () => {
      const task = await vscode.window.showInputBox({ prompt: 'What should the OpenHands agent do?' });
      if (task !== undefined && task.trim() !== '') await this.connect(task);
    });
    reg('openhands.startConversationWithSelection', async () => {
      const editor = vscode.window.activeTextEditor;
      const text = editor?.document.getText(editor.selection) ?? '';
      if (text !== '') await this.connect(text);
    });
    reg('openhands.startConversationWithFile', async () => {
      const doc = vscode.window.activeTextEditor?.document;
      if (doc !== undefined) await this.connect(`Look at ${doc.uri.fsPath}:\n\n${doc.getText()}`);
    });
    reg('openhands.setApiKey', async () => {
      const key = await vscode.window.showInputBox({ prompt: 'OpenHands session API key (the server\'s OH_SESSION_API_KEYS_0)', password: true });
      if (key !== undefined) await this.context.secrets.store(secretKey, key);
    });
    reg('openhands.setLlmApiKey', async () => {
      const key = await vscode.window.showInputBox({ prompt: 'API key of the agent\'s LLM (sent to the agent-server when a conversation starts)', password: true });
      if (key !== undefined) await this.context.secrets.store(llmSecretKey, key);
    });
    reg('openhands.sendMessage', async () => {
      const text = await vscode.window.showInputBox({ prompt: 'Message to the OpenHands agent' });
      if (text !== undefined && text.trim() !== '') await this.steer('openhands/send_message', { text });
    });
    reg('openhands.pause', () => this.steer('openhands/pause', {}));
    reg('openhands.resume', () => this.steer('openhands/resume', {}));
    reg('openhands.interrupt', () => this.steer('openhands/interrupt', {}));
    reg('openhands.showConversation', () => this.conversation.show(true));
    reg('openhands.openConversationView', () => vscode.commands.executeCommand('openhands.conversation.focus'));
    reg('openhands.showBridgeLog', () => this.output.show());
    reg('openhands.openAgentTerminal', () => this.openAgentTerminal());
    reg('openhands.startCli', () => this.startCli());
    reg('openhands.serveMcp', () => this.serveMcp());
    reg('openhands.stopMcp', () => this.stopMcp());
    reg('openhands.quickPick', async () => {
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'Connect to Server', id: 'openhands.connect' },
          { label: 'Start Conversation', id: 'openhands.startConversation' },
          { label: 'Open Earlier Conversation', id: 'openhands.openEarlierConversation' },
          { label: 'Send Message to Agent', id: 'openhands.sendMessage' },
          { label: 'Pause Agent', id: 'openhands.pause' },
          { label: 'Resume Agent', id: 'openhands.resume' },
          { label: 'Interrupt Agent', id: 'openhands.interrupt' },
          { label: 'Open Conversation View', id: 'openhands.openConversationView' },
          { label: 'Show Conversation', id: 'openhands.showConversation' },
          { label: 'Open Agent Terminal', id: 'openhands.openAgentTerminal' },
          { label: 'Serve Tools to Agents (MCP)', id: 'openhands.serveMcp' },
          { label: 'Disconnect', id: 'openhands.disconnect' },
          { label: 'Show Bridge Log', id: 'openhands.showBridgeLog' },
        ],
        { placeHolder: 'OpenHands' },
      );
      if (pick !== undefined) await vscode.commands.executeCommand(pick.id);
    });
  }

  /**
   * Connects on demand; failures show the bridge's plain-words error.
   * With attach (and no task), it goes back to this workspace's last
   * conversation on the same server, if there is one. Resolves whether it
   * connected.
   */
  private async connect(task?: string, opts: { attach?: boolean; fromView?: boolean; conversationId?: string; continueFrom?: string } = {}): Promise<boolean> {
    const bridge = this.bridge;
    if (bridge === undefined) {
      void vscode.window.showErrorMessage('The OpenHands bridge is not running. See "OpenHands: Show Bridge Log".');
      return false;
    }
    const config = vscode.workspace.getConfiguration('openhands');
    let server: ServerChoice | undefined;
    try {
      server = await this.servers.choose(bridge);
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return false;
    }
    if (server === undefined) return false;
    const { serverUrl, sessionApiKey } = server;
    const params: ConnectParams = { serverUrl, sessionApiKey, ...(task === undefined ? {} : { task }) };
    const last = this.remembered();
    const attachTo = opts.conversationId ?? (opts.attach === true && task === undefined && last?.serverUrl === serverUrl ? last.conversationId : undefined);
    if (attachTo !== undefined) params.conversationId = attachTo;
    if (opts.continueFrom !== undefined) params.continueFrom = opts.continueFrom;
    const model = config.get<string>('llm.model', '');
    if (model !== '') {
      const apiKey = await this.context.secrets.get(llmSecretKey);
      const baseUrl = config.get<string>('llm.baseUrl', '');
      params.llm = { model, ...(apiKey === undefined ? {} : { api_key: apiKey }), ...(baseUrl === '' ? {} : { base_url: baseUrl }) };
    }
    if (config.get<boolean>('confirmationMode', false)) params.confirmationPolicy = 'AlwaysConfirm';
    try {
      await bridge.request('openhands/connect', params);
      if (opts.fromView !== true) this.conversation.show(true);
      return true;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const data = errorData(err);
      if (data.kind === 'server_not_trusted' && data.owner !== undefined && data.serverUrl !== undefined) {
        // A server on this machine that another user runs: nothing was sent.
        if ((await this.servers.askTrust(bridge, data.serverUrl, data.owner)) !== undefined) return this.connect(task, opts);
        return false;
      }
      if (data.kind === 'mcp_token_exposed' && attachTo !== undefined) {
        const go = await vscode.window.showWarningMessage(message, { modal: true }, 'Continue in a New Conversation');
        if (go === undefined) return false;
        return this.connect(task, { ...(opts.fromView === undefined ? {} : { fromView: opts.fromView }), continueFrom: attachTo });
      }
      const buttons = attachTo === undefined ? ['Retry', 'Open Settings'] : ['Retry', 'Forget Conversation', 'Open Settings'];
      const choice = await vscode.window.showErrorMessage(message, ...buttons);
      if (choice === 'Retry') return this.connect(task, opts);
      if (choice === 'Forget Conversation') {
        await this.context.workspaceState.update(lastConversationKey, undefined);
        this.view.status(this.connection, undefined);
      }
      if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'openhands.serverUrl');
      return false;
    }
  }

  /** Disconnects from the conversation: it goes on on the server, and is not reopened at the next start. */
  private async leave(): Promise<unknown> {
    const last = this.remembered();
    if (last !== undefined) await this.context.workspaceState.update(lastConversationKey, { ...last, open: false });
    return this.bridge?.request('openhands/disconnect', {});
  }

  /** A page of this workspace's conversations on the configured server. */
  private async listConversations(cursor?: string): Promise<{ conversations: ConversationSummary[]; next?: string }> {
    const bridge = this.bridge;
    if (bridge === undefined) throw new Error('The OpenHands bridge is not running. See "OpenHands: Show Bridge Log".');
    const server = await this.servers.choose(bridge);
    if (server === undefined) throw new Error('No OpenHands agent-server to list the conversations of.');
    const res = await bridge.request('openhands/list_conversations', { ...server, ...(cursor === undefined ? {} : { cursor }) });
    return { conversations: res.conversations ?? [], ...(res.next === undefined ? {} : { next: res.next }) };
  }

  /** "Open Earlier Conversation": the same list as the view's, in a quick pick. */
  private async pickConversation(): Promise<void> {
    let page: { conversations: ConversationSummary[]; next?: string };
    try {
      page = await this.listConversations();
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return;
    }
    if (page.conversations.length === 0) {
      void vscode.window.showInformationMessage('No earlier conversations in this workspace on this server.');
      return;
    }
    const now = Date.now();
    const pick = await vscode.window.showQuickPick(
      page.conversations.map((c) => ({ label: conversationName(c), description: ago(c.updatedAt, now), detail: c.conversationId, id: c.conversationId })),
      { placeHolder: 'Reopen a conversation of this workspace' },
    );
    if (pick !== undefined) await this.connect(undefined, { conversationId: pick.id });
  }

  /** This workspace's last conversation, to attach to again. */
  private remembered(): RememberedConversation | undefined {
    return this.context.workspaceState.get<RememberedConversation>(lastConversationKey);
  }

  private async remember(conn: Status): Promise<void> {
    if (conn.state !== 'connected' || conn.conversationId === undefined || conn.conversationId === '' || conn.serverUrl === '') return;
    const last = this.remembered();
    if (last?.conversationId === conn.conversationId && last.serverUrl === conn.serverUrl && last.open === true) return;
    await this.context.workspaceState.update(lastConversationKey, { serverUrl: conn.serverUrl, conversationId: conn.conversationId, open: true });
  }

  /**
   * The view's message box: a message to the agent while connected, else
   * the task of a new conversation. Resolves whether it went.
   */
  private async sendFromView(text: string): Promise<boolean> {
    if (this.connection.state === 'connected') return this.steer('openhands/send_message', { text }, true);
    return this.connect(text, { fromView: true });
  }

  /** Sends the user's message, or pauses, resumes or interrupts the agent. Resolves whether it went. */
  private async steer<M extends 'openhands/send_message' | SteerMethod>(method: M, params: BridgeRequests[M]['params'], fromView = false): Promise<boolean> {
    const bridge = this.bridge;
    if (bridge === undefined) {
      void vscode.window.showErrorMessage('The OpenHands bridge is not running. See "OpenHands: Show Bridge Log".');
      return false;
    }
    try {
      await bridge.request(method, params);
      if (method === 'openhands/send_message' && !fromView) this.conversation.show(true);
      return true;
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return false;
    }
  }

  /**
   * Opens the bridge's MCP endpoint (127.0.0.1, a fresh token) and offers
   * the configuration an agent needs, copied to the clipboard: its tool
   * calls then run here, in terminals and buffers the user sees.
   */
  private async serveMcp(): Promise<void> {
    const bridge = this.bridge;
    if (bridge === undefined) {
      void vscode.window.showErrorMessage('The OpenHands bridge is not running. See "OpenHands: Show Bridge Log".');
      return;
    }
    let ep: Endpoint;
    try {
      const res = await bridge.request('mcp/start', {});
      if (res.url === undefined || res.token === undefined) throw new Error('the bridge serves no MCP endpoint');
      ep = { url: res.url, token: res.token };
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return;
    }
    const pick = await vscode.window.showQuickPick(
      snippets(ep).map((s) => ({ label: s.label, detail: s.detail, text: s.text })),
      { placeHolder: `OpenHands tools are served at ${ep.url}: copy the configuration for…` },
    );
    if (pick === undefined) return;
    await vscode.env.clipboard.writeText(pick.text);
    void vscode.window.showInformationMessage(`Copied the ${pick.label} configuration. The token is a secret: it lets an agent run commands here.`);
  }

  private async stopMcp(): Promise<void> {
    await this.bridge?.request('mcp/stop', {});
    void vscode.window.showInformationMessage('OpenHands tools are no longer served over MCP; agents using them are disconnected.');
  }

  /** A VS Code terminal backed by a bridge terminal, mirrored live. */
  private async openAgentTerminal(): Promise<void> {
    const bridge = this.bridge;
    if (bridge === undefined) return;
    const { terminalId } = await bridge.request('terminal/open', { name: 'agent' });
    this.mirror(terminalId);
  }

  /**
   * The VS Code terminal that mirrors a bridge terminal, created on first
   * use: a terminal the user opened, or the agent's own shell ("oh-agent")
   * the first time it prints.
   */
  private mirror(terminalId: string): MirrorTerminal {
    let m = this.terminals.get(terminalId);
    if (m !== undefined) return m;
    const bridge = this.bridge;
    // The agent's own shell belongs to the agent: its view is read-only
    // (typing or resizing would change what the agent sees), and closing
    // the view does not end it.
    const agents = isAgentTerminal(terminalId);
    m = new MirrorTerminal({
      input: (data) => {
        if (!agents) void bridge?.request('terminal/send_input', { terminalId, data, appendNewline: false });
      },
      resize: (cols, rows) => {
        if (!agents) void bridge?.request('terminal/resize', { terminalId, cols, rows });
      },
      close: () => {
        this.terminals.delete(terminalId);
        if (!agents) void bridge?.request('terminal/close', { terminalId });
      },
    });
    this.terminals.set(terminalId, m);
    const terminal = vscode.window.createTerminal({ name: terminalTitle(terminalId, this.terminalNames.get(terminalId)), pty: m.pty });
    this.mirrors.add(terminal);
    terminal.show(true);
    return m;
  }

  /** Runs the OpenHands CLI for the selection or file, reusing an idle terminal. */
  private startCli(): void {
    const editor = vscode.window.activeTextEditor;
    const task = editor === undefined ? '' : editor.selection.isEmpty ? `Look at ${editor.document.uri.fsPath}` : editor.document.getText(editor.selection);
    const strategy = vscode.workspace.getConfiguration('openhands').get<ReuseStrategy>('terminal.reuseStrategy', 'smart');
    const open = vscode.window.terminals;
    const decision = chooseTerminal(
      open.map((t, id) => ({
        id,
        name: t.name,
        mirror: this.mirrors.has(t),
        hasShellIntegration: t.shellIntegration !== undefined,
        busy: this.busyTerminals.has(t),
        createdAt: id,
      })),
      strategy,
    );
    const terminal = 'reuse' in decision ? open[decision.reuse] : undefined;
    const target = terminal ?? vscode.window.createTerminal({ name: 'OpenHands' });
    target.show();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const venv = folder === undefined ? undefined : ['.venv', 'venv'].find((v) => fs.existsSync(`${folder}/${v}/bin/activate`));
    const command = cliCommand(task, venv === undefined ? undefined : `${folder}/${venv}/bin/activate`);
    if (target.shellIntegration !== undefined) {
      target.shellIntegration.executeCommand(command);
    } else {
      target.sendText(command);
    }
  }

  private readonly busyTerminals = new WeakSet<vscode.Terminal>();
  /** The VS Code terminals that mirror the bridge's. */
  private readonly mirrors = new WeakSet<vscode.Terminal>();
}

/** Shows a file the agent points the person to (open_file), at its line. */
async function showFile(path: string, line: number | undefined): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  const at = Math.max(0, (line ?? 1) - 1);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, 0, at, 0), preview: true });
}
