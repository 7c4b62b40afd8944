// The VS Code terminals of the extension: those that mirror the bridge's
// terminals (the agent's shell, and terminals the person opened through
// the bridge), and the one "Start OpenHands CLI in Terminal" runs in.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { Bridge } from './bridge';
import { cliCommand } from './cli';
import { isAgentTerminal, terminalTitle } from './mcp';
import { MirrorTerminal } from './mirrorTerminal';
import { chooseTerminal, type ReuseStrategy } from './reuse';

export class Terminals {
  private readonly terminals = new Map<string, MirrorTerminal>();
  private readonly terminalNames = new Map<string, string>();
  private readonly busyTerminals = new WeakSet<vscode.Terminal>();
  /** The VS Code terminals that mirror the bridge's. */
  private readonly mirrors = new WeakSet<vscode.Terminal>();

  /** bridge is the bridge running now, if any. */
  constructor(private readonly bridge: () => Bridge | undefined) {}

  /**
   * Shell integration tells which terminals run a command right now, for
   * "Start OpenHands CLI in Terminal" to reuse only idle ones.
   */
  watch(): vscode.Disposable[] {
    return [
      vscode.window.onDidStartTerminalShellExecution((e) => this.busyTerminals.add(e.terminal)),
      vscode.window.onDidEndTerminalShellExecution((e) => this.busyTerminals.delete(e.terminal)),
      vscode.window.onDidCloseTerminal((t) => this.busyTerminals.delete(t)),
    ];
  }

  /** terminal/did_output: the bridge terminal's output, shown in its mirror. */
  output(terminalId: string, data: string): void {
    this.mirror(terminalId).write(data);
  }

  /** terminal/did_change_state: a new name renames the mirror. */
  stateChanged(terminalId: string, name: string | undefined): void {
    // The first output can come before the first state change: a
    // mirror made by then is renamed.
    if (name !== undefined && name !== this.terminalNames.get(terminalId)) {
      this.terminalNames.set(terminalId, name);
      this.terminals.get(terminalId)?.rename(terminalTitle(terminalId, name));
    }
  }

  /** A VS Code terminal backed by a bridge terminal, mirrored live. */
  async openAgentTerminal(): Promise<void> {
    const bridge = this.bridge();
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
    const bridge = this.bridge();
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
  startCli(): void {
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
}
