// The extension's commands (package.json's contributes.commands), each
// bound to what it does.
import * as vscode from 'vscode';
import type { Bridge } from './bridge';
import type { Conversations } from './conversations';
import { serveMcp, stopMcp } from './mcpServe';
import { installRelay } from './relayInstall';
import { llmSecretKey, relaySecretKey, secretKey } from './secrets';
import type { Servers } from './servers';
import type { Terminals } from './terminals';

/** What the commands act on. */
export interface CommandDeps {
  context: vscode.ExtensionContext;
  /** The bridge running now, if any. */
  bridge: () => Bridge | undefined;
  conversations: Conversations;
  servers: Servers;
  terminals: Terminals;
  /** The "OpenHands Bridge" output channel. */
  output: vscode.OutputChannel;
  /** The "OpenHands Conversation" output channel. */
  conversation: vscode.OutputChannel;
}

export function registerCommands(d: CommandDeps): vscode.Disposable[] {
  const all: vscode.Disposable[] = [];
  const reg = (id: string, fn: () => unknown): void => {
    all.push(vscode.commands.registerCommand(id, fn));
  };
  reg('openhands.connect', () => d.conversations.connect(undefined, { attach: true }));
  reg('openhands.disconnect', () => d.conversations.leave());
  reg('openhands.openEarlierConversation', () => d.conversations.pickConversation());
  reg('openhands.startConversation', async () => {
    const task = await vscode.window.showInputBox({ prompt: 'What should the OpenHands agent do?' });
    if (task !== undefined && task.trim() !== '') await d.conversations.connect(task);
  });
  reg('openhands.startConversationWithSelection', async () => {
    const editor = vscode.window.activeTextEditor;
    const text = editor?.document.getText(editor.selection) ?? '';
    if (text !== '') await d.conversations.connect(text);
  });
  reg('openhands.startConversationWithFile', async () => {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc !== undefined) await d.conversations.connect(`Look at ${doc.uri.fsPath}:\n\n${doc.getText()}`);
  });
  reg('openhands.setApiKey', async () => {
    const key = await vscode.window.showInputBox({ prompt: 'OpenHands session API key (the server\'s OH_SESSION_API_KEYS_0)', password: true });
    if (key !== undefined) await d.context.secrets.store(secretKey, key);
  });
  reg('openhands.setLlmApiKey', async () => {
    const key = await vscode.window.showInputBox({ prompt: 'API key of the agent\'s LLM (sent to the agent-server when a conversation starts)', password: true });
    if (key !== undefined) await d.context.secrets.store(llmSecretKey, key);
  });
  reg('openhands.setRelaySecret', async () => {
    const key = await vscode.window.showInputBox({ prompt: 'The pairing secret the relay in "openhands.relayUrl" was started with', password: true });
    if (key !== undefined) await d.context.secrets.store(relaySecretKey, key);
  });
  reg('openhands.installRelay', () => installRelay({ context: d.context, bridge: d.bridge, servers: d.servers }));
  reg('openhands.sendMessage', async () => {
    const text = await vscode.window.showInputBox({ prompt: 'Message to the OpenHands agent' });
    if (text !== undefined && text.trim() !== '') await d.conversations.steer('openhands/send_message', { text });
  });
  reg('openhands.pause', () => d.conversations.steer('openhands/pause', {}));
  reg('openhands.resume', () => d.conversations.steer('openhands/resume', {}));
  reg('openhands.interrupt', () => d.conversations.steer('openhands/interrupt', {}));
  reg('openhands.showConversation', () => d.conversation.show(true));
  reg('openhands.openConversationView', () => vscode.commands.executeCommand('openhands.conversation.focus'));
  reg('openhands.showBridgeLog', () => d.output.show());
  reg('openhands.openAgentTerminal', () => d.terminals.openAgentTerminal());
  reg('openhands.startCli', () => d.terminals.startCli());
  reg('openhands.serveMcp', () => serveMcp(d.bridge()));
  reg('openhands.stopMcp', () => stopMcp(d.bridge()));
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
  return all;
}
