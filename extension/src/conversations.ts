// The person's conversation with the agent, through the bridge: connect
// (a new conversation, or back to this workspace's last one), disconnect,
// the list of earlier conversations, and messages and steering sent to
// the agent.
import * as vscode from 'vscode';
import { bridgeNotRunning, type Bridge } from './bridge';
import type { ConversationView } from './conversationView';
import { ago, conversationName } from './history';
import { lastConversationKey, llmSecretKey, relaySecretKey } from './secrets';
import { errorData } from './serverWords';
import type { Servers } from './servers';
import type { SteerMethod } from './webview/protocol';
import type { BridgeRequests, ConnectParams, ConversationSummary, Status } from './protocol.gen';

/** This workspace's last conversation; open is false after Disconnect. */
interface RememberedConversation {
  serverUrl: string;
  conversationId: string;
  open?: boolean;
}

/** What Conversations needs of the extension. */
export interface ConversationDeps {
  context: vscode.ExtensionContext;
  /** The bridge running now, if any. */
  bridge: () => Bridge | undefined;
  /** The bridge's last reported status. */
  connection: () => Status;
  servers: Servers;
  view: ConversationView;
  /** The "OpenHands Conversation" output channel. */
  conversation: vscode.OutputChannel;
}

export class Conversations {
  private readonly context: vscode.ExtensionContext;
  private readonly servers: Servers;
  private readonly view: ConversationView;
  private readonly conversation: vscode.OutputChannel;

  constructor(private readonly deps: ConversationDeps) {
    this.context = deps.context;
    this.servers = deps.servers;
    this.view = deps.view;
    this.conversation = deps.conversation;
  }

  private get bridge(): Bridge | undefined {
    return this.deps.bridge();
  }

  private get connection(): Status {
    return this.deps.connection();
  }

  /**
   * Connects on demand; failures show the bridge's plain-words error.
   * With attach (and no task), it goes back to this workspace's last
   * conversation on the same server, if there is one. Resolves whether it
   * connected.
   */
  async connect(task?: string, opts: { attach?: boolean; fromView?: boolean; conversationId?: string; continueFrom?: string } = {}): Promise<boolean> {
    const bridge = this.bridge;
    if (bridge === undefined) {
      void vscode.window.showErrorMessage(bridgeNotRunning);
      return false;
    }
    const config = vscode.workspace.getConfiguration('openhands');
    const server = await this.servers.chooseOrSay(bridge);
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
    const relayUrl = config.get<string>('relayUrl', '');
    if (relayUrl !== '') {
      const relaySecret = await this.context.secrets.get(relaySecretKey);
      if (relaySecret === undefined || relaySecret === '') {
        const go = await vscode.window.showErrorMessage('OpenHands: "openhands.relayUrl" is set, but not the relay\'s pairing secret.', 'Set Relay Pairing Secret');
        if (go !== undefined) await vscode.commands.executeCommand('openhands.setRelaySecret');
        return false;
      }
      params.relayUrl = relayUrl;
      params.relaySecret = relaySecret;
    }
    try {
      const result = await bridge.request('openhands/connect', params);
      if (result.via !== undefined && result.via !== '') {
        // Said once a conversation: where the agent's calls come from.
        this.conversation.appendLine(`The agent on ${serverUrl} reaches this window through ${result.via}.`);
        void vscode.window.showInformationMessage(`OpenHands: the agent on ${serverUrl} reaches this window through ${result.via}.`);
      }
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
  async leave(): Promise<unknown> {
    const last = this.remembered();
    if (last !== undefined) await this.context.workspaceState.update(lastConversationKey, { ...last, open: false });
    return this.bridge?.request('openhands/disconnect', {});
  }

  /** A page of this workspace's conversations on the configured server. */
  async listConversations(cursor?: string): Promise<{ conversations: ConversationSummary[]; next?: string }> {
    const bridge = this.bridge;
    if (bridge === undefined) throw new Error(bridgeNotRunning);
    const server = await this.servers.choose(bridge);
    if (server === undefined) throw new Error('No OpenHands agent-server to list the conversations of.');
    const res = await bridge.request('openhands/list_conversations', { ...server, ...(cursor === undefined ? {} : { cursor }) });
    return { conversations: res.conversations ?? [], ...(res.next === undefined ? {} : { next: res.next }) };
  }

  /** "Open Earlier Conversation": the same list as the view's, in a quick pick. */
  async pickConversation(): Promise<void> {
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
  remembered(): RememberedConversation | undefined {
    return this.context.workspaceState.get<RememberedConversation>(lastConversationKey);
  }

  async remember(conn: Status): Promise<void> {
    if (conn.state !== 'connected' || conn.conversationId === undefined || conn.conversationId === '' || conn.serverUrl === '') return;
    const last = this.remembered();
    if (last?.conversationId === conn.conversationId && last.serverUrl === conn.serverUrl && last.open === true) return;
    await this.context.workspaceState.update(lastConversationKey, { serverUrl: conn.serverUrl, conversationId: conn.conversationId, open: true });
  }

  /**
   * The view's message box: a message to the agent while connected, else
   * the task of a new conversation. Resolves whether it went.
   */
  async sendFromView(text: string): Promise<boolean> {
    if (this.connection.state === 'connected') return this.steer('openhands/send_message', { text }, true);
    return this.connect(text, { fromView: true });
  }

  /** Sends the user's message, or pauses, resumes or interrupts the agent. Resolves whether it went. */
  async steer<M extends 'openhands/send_message' | SteerMethod>(method: M, params: BridgeRequests[M]['params'], fromView = false): Promise<boolean> {
    const bridge = this.bridge;
    if (bridge === undefined) {
      void vscode.window.showErrorMessage(bridgeNotRunning);
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
}
