// Which OpenHands agent-server a conversation goes to: the one the
// settings name, else the one the bridge finds this person running (the
// environment, the bridge's config file, Agent Canvas, the default port:
// openhands/find_server), else one the bridge starts, once the person has
// agreed (openhands/start_server). The bridge keeps a found or started
// server's key: the extension names the URL only. A started server logs to
// the "OpenHands Agent Server" channel and stops with the bridge.
import * as vscode from 'vscode';
import type { Bridge } from './bridge';
import type { BridgeRequests, FoundServer, Owner } from './protocol.gen';
import { foundWords, llmWords, startQuestion, trustQuestion } from './serverWords';

/** Where the person's "always start it" is kept (all workspaces). */
const alwaysStartKey = 'openhands.alwaysStartServer';
/** The servers the person was told about, so each is said once. */
const toldKey = 'openhands.toldServers';

/** A server to talk to: its URL, and the key to send ('' lets the bridge use the one it found). */
export interface ServerChoice {
  serverUrl: string;
  sessionApiKey: string;
}

export class Servers {
  private log: vscode.OutputChannel | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly secretKey: string,
  ) {}

  /** The server output the bridge forwards (openhands/server_output). */
  output(data: string): void {
    this.log ??= vscode.window.createOutputChannel('OpenHands Agent Server');
    this.log.append(data);
  }

  dispose(): void {
    this.log?.dispose();
  }

  /** choose, with its failure shown to the person (then undefined). */
  async chooseOrSay(bridge: Bridge): Promise<ServerChoice | undefined> {
    try {
      return await this.choose(bridge);
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return undefined;
    }
  }

  /**
   * The server for a conversation, or undefined when there is none (the
   * person was told why, or declined to start one).
   */
  async choose(bridge: Bridge): Promise<ServerChoice | undefined> {
    const config = vscode.workspace.getConfiguration('openhands');
    const set = config.inspect<string>('serverUrl');
    const configured = set?.workspaceFolderValue ?? set?.workspaceValue ?? set?.globalValue;
    if (configured !== undefined && configured !== '') {
      return { serverUrl: configured, sessionApiKey: (await this.context.secrets.get(this.secretKey)) ?? '' };
    }
    let found = await bridge.request('openhands/find_server', {});
    const untrusted = found.untrusted?.[0];
    if (found.found === undefined && untrusted !== undefined) {
      // Found, but another user runs it: nothing was sent to it.
      found = (await this.askTrust(bridge, untrusted.serverUrl, untrusted.owner)) ?? found;
    }
    if (found.found !== undefined) {
      await this.tell(found.found);
      return { serverUrl: found.found.serverUrl, sessionApiKey: '' };
    }
    return this.offerToStart(bridge, found);
  }

  /**
   * Asks the person whether to use a server on this machine that another
   * user runs, showing who; the bridge keeps their answer
   * (openhands/trust_server) and looks again. Undefined when they declined.
   */
  async askTrust(bridge: Bridge, serverUrl: string, owner: Owner): Promise<BridgeRequests['openhands/find_server']['result'] | undefined> {
    const q = trustQuestion(serverUrl, owner);
    const choice = await vscode.window.showWarningMessage(q.message, { modal: true, detail: q.detail }, 'Use It Once', 'Always Use It');
    if (choice === undefined) return undefined;
    return bridge.request('openhands/trust_server', { serverUrl, uid: owner.uid, always: choice === 'Always Use It' });
  }

  private async offerToStart(bridge: Bridge, found: BridgeRequests['openhands/find_server']['result']): Promise<ServerChoice | undefined> {
    const way = found.ways?.[0];
    if (way === undefined) {
      const choice = await vscode.window.showErrorMessage(
        `No OpenHands agent-server was found, and none can be started here. ${found.install ?? ''}`,
        'Open Settings',
      );
      if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'openhands.serverUrl');
      return undefined;
    }
    if (this.context.globalState.get<boolean>(alwaysStartKey) !== true) {
      const q = startQuestion(way);
      const choice = await vscode.window.showInformationMessage(q.message, { modal: true, detail: q.detail }, 'Start', 'Always Start');
      if (choice === undefined) return undefined;
      if (choice === 'Always Start') await this.context.globalState.update(alwaysStartKey, true);
    }
    try {
      const started = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Starting ${way.description}…` },
        () => bridge.request('openhands/start_server', { kind: way.kind }),
      );
      await this.tell(started);
      return { serverUrl: started.serverUrl, sessionApiKey: '' };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const choice = await vscode.window.showErrorMessage(message, 'Show Server Log');
      if (choice === 'Show Server Log') this.log?.show();
      return undefined;
    }
  }

  /** Says once where the agent's model and key came from, when the editor gave none (the person's OpenHands settings). */
  async tellLLMSource(source: string): Promise<void> {
    if (await this.firstTime(`llm ${source}`)) void vscode.window.showInformationMessage(llmWords(source));
  }

  /** Says once which server is used and where its key came from (never the key); a started one each time. */
  private async tell(found: FoundServer): Promise<void> {
    if (found.source === 'started' || (await this.firstTime(`${found.source} ${found.serverUrl}`))) void vscode.window.showInformationMessage(foundWords(found));
  }

  /** Whether id was not told yet; it is told from now on (the last 20 kept). */
  private async firstTime(id: string): Promise<boolean> {
    const told = this.context.globalState.get<string[]>(toldKey) ?? [];
    if (told.includes(id)) return false;
    await this.context.globalState.update(toldKey, [...told.slice(-19), id]);
    return true;
  }
}
