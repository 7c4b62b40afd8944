// The VS Code extension: it starts the oh-bridge process for the workspace
// (cheap, no network), keeps it running, mirrors open documents into it,
// shows the agent's terminals and the connection state, and asks the user
// before risky actions. It connects to an OpenHands server only when a
// command needs one.
//
// This file starts the bridge, restarts it when it crashes, and routes its
// notifications; each concern lives in its own module: host.ts (what the
// bridge asks of the editor), documents.ts, terminals.ts,
// conversations.ts, commands.ts and mcpServe.ts.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { bundledPath, findBridge } from './binary';
import { Bridge } from './bridge';
import { registerCommands } from './commands';
import { ConversationView } from './conversationView';
import { Conversations } from './conversations';
import { didOpen, syncDocuments } from './documents';
import { describeEvent } from './events';
import { Host } from './host';
import { RestartPolicy } from './restart';
import { secretKey } from './secrets';
import { Servers } from './servers';
import { disconnected, statusView, type BridgeState } from './status';
import { Terminals } from './terminals';
import { startTestFeed } from './testFeed';
import type { SteerMethod } from './webview/protocol';
import type { Status } from './protocol.gen';

let controller: Controller | undefined;

export function activate(context: vscode.ExtensionContext): void {
  controller = new Controller(context);
  controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.dispose();
}

class Controller {
  private readonly output = vscode.window.createOutputChannel('OpenHands Bridge');
  private readonly conversation = vscode.window.createOutputChannel('OpenHands Conversation');
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  private readonly restart = new RestartPolicy();
  private bridge: Bridge | undefined;
  private bridgeState: BridgeState = 'starting';
  private connection: Status = disconnected;
  private readonly view: ConversationView;
  private readonly servers: Servers;
  private readonly host: Host;
  private readonly terminals: Terminals;
  private readonly conversations: Conversations;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.statusItem.command = 'openhands.quickPick';
    this.servers = new Servers(context, secretKey);
    const bridge = (): Bridge | undefined => this.bridge;
    this.terminals = new Terminals(bridge);
    this.view = new ConversationView(context.extensionUri, {
      send: (text) => this.conversations.sendFromView(text),
      steer: (method: SteerMethod) => this.conversations.steer(method, {}),
      reopen: () => this.conversations.connect(undefined, { attach: true, fromView: true }),
      list: (cursor) => this.conversations.listConversations(cursor),
      open: (conversationId) => this.conversations.connect(undefined, { conversationId, fromView: true }),
      leave: () => this.conversations.leave(),
    }, context.workspaceState);
    this.host = new Host(this.output, this.view);
    this.conversations = new Conversations({
      context, bridge, connection: () => this.connection, servers: this.servers, view: this.view, conversation: this.conversation,
    });
    context.subscriptions.push(this.output, this.conversation, this.statusItem, this.view.register(), this.servers);
    // Test only (OH_BRIDGE_TEST_FEED): the e2e test's long conversation.
    context.subscriptions.push(startTestFeed(this.view, (line) => this.output.appendLine(line)));
    this.view.status(this.connection, this.conversations.remembered()?.conversationId);
    context.subscriptions.push(...registerCommands({
      context, bridge, conversations: this.conversations, servers: this.servers, terminals: this.terminals, output: this.output, conversation: this.conversation,
    }));
    context.subscriptions.push(...syncDocuments(bridge));
    context.subscriptions.push(...this.terminals.watch());
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
    const bridge = new Bridge({ binary: found.path, folders, host: this.host, args, ...(trace === undefined ? {} : { trace }) });
    this.bridge = bridge;
    this.listen(bridge);
    bridge.onExit((code, signal) => this.onBridgeExit(bridge, code, signal));
    bridge.start().then(
      () => {
        this.setBridgeState('running');
        for (const doc of vscode.workspace.textDocuments) didOpen(bridge, doc);
        // Reopening VS Code shows the conversation again: the person asked
        // for it and never disconnected, so attaching is theirs to expect.
        const last = this.conversations.remembered();
        if (last?.open === true && config.get<boolean>('restoreConversation', true)) {
          void this.conversations.connect(undefined, { attach: true, fromView: true });
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

  // The bridge's notifications -------------------------------------------------

  private listen(bridge: Bridge): void {
    bridge.onNotification('openhands/did_change_status', (status) => {
      this.connection = status;
      if (status.llmSource !== undefined && status.llmSource !== '') void this.servers.tellLLMSource(status.llmSource);
      this.render();
      this.view.status(status, this.conversations.remembered()?.conversationId);
      // The view reads the latest status once the conversation is remembered.
      void this.conversations.remember(status).then(() => this.view.status(this.connection, this.conversations.remembered()?.conversationId));
    });
    bridge.onNotification('openhands/did_update_conversation', (p) => this.view.update(p.conversationId, p.update));
    bridge.onNotification('openhands/server_output', (p) => this.servers.output(p.data));
    bridge.onNotification('openhands/did_receive_event', (p) => {
      const line = describeEvent(p.event);
      if (line !== undefined) this.conversation.appendLine(line);
    });
    bridge.onNotification('terminal/did_output', (p) => this.terminals.output(p.terminalId, p.data));
    bridge.onNotification('editor/show_file', (p) => void showFile(p.path, p.line));
    bridge.onNotification('terminal/did_change_state', (p) => this.terminals.stateChanged(p.terminalId, p.name));
  }

  // Status -------------------------------------------------------------------

  private setBridgeState(s: BridgeState): void {
    this.bridgeState = s;
    this.render();
  }

  private render(): void {
    const view = statusView(this.bridgeState, this.connection);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
  }
}

/** Shows a file the agent points the person to (open_file), at its line. */
async function showFile(path: string, line: number | undefined): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  const at = Math.max(0, (line ?? 1) - 1);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, 0, at, 0), preview: true });
}
