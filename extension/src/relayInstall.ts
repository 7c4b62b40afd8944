// "OpenHands: Install Relay on the Server": with the person's consent, the
// bridge puts `oh-bridge relay` beside an agent-server on another machine
// through that server's own API (openhands/install_relay), and this
// window keeps the relay's URL and pairing secret, so that the next
// conversation reaches it through the relay (docs/relay.md).
import * as vscode from 'vscode';
import { bridgeNotRunning, type Bridge } from './bridge';
import { relaySecretKey } from './secrets';
import type { Servers } from './servers';

/** What the install needs of the extension. */
export interface RelayInstallDeps {
  context: vscode.ExtensionContext;
  bridge: () => Bridge | undefined;
  servers: Servers;
}

/** The install's button in the question. */
const installButton = 'Install Relay';

/** An http(s) URL with a host, or why not: the input box's check. */
function publicUrlProblem(value: string): string | undefined {
  const want = 'An http(s) URL, e.g. https://cloud.example/s/abc/relay';
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    return want;
  }
  return (u.protocol !== 'http:' && u.protocol !== 'https:') || u.host === '' ? want : undefined;
}

/** Asks, installs, and keeps the relay's URL and secret; true once it runs. */
export async function installRelay(d: RelayInstallDeps): Promise<boolean> {
  const bridge = d.bridge();
  if (bridge === undefined) {
    void vscode.window.showErrorMessage(bridgeNotRunning);
    return false;
  }
  const server = await d.servers.chooseOrSay(bridge);
  if (server === undefined) return false;
  const config = vscode.workspace.getConfiguration('openhands');
  const publicUrl = await vscode.window.showInputBox({
    title: 'Install the OpenHands relay beside the agent-server',
    prompt: `The URL at which your proxy exposes the relay to editors (it forwards there to 127.0.0.1:8932 on ${server.serverUrl}'s machine)`,
    placeHolder: 'https://cloud.example/s/abc/relay',
    value: config.get<string>('relayUrl', ''),
    ignoreFocusOut: true,
    validateInput: publicUrlProblem,
  });
  if (publicUrl === undefined) return false;
  const params = { ...server, publicUrl: publicUrl.trim() };
  try {
    const plan = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `OpenHands: asking ${server.serverUrl} what machine it runs on…` },
      () => bridge.request('openhands/install_relay', params));
    const go = await vscode.window.showWarningMessage(`Install the OpenHands relay beside the agent-server at ${server.serverUrl}?`, {
      modal: true,
      detail: `${(plan.plan ?? []).join('\n')}\n\nIts pairing secret is kept in VS Code's secret storage. Anyone with it can reach the tools of the windows you register.`,
    }, installButton);
    if (go !== installButton) return false;
    const done = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'OpenHands: installing the relay…' },
      () => bridge.request('openhands/install_relay', { ...params, confirmed: true }));
    if (!done.installed || done.relayUrl === undefined || done.relaySecret === undefined) {
      void vscode.window.showErrorMessage('OpenHands: the bridge did not say the relay runs. See "OpenHands: Show Bridge Log".');
      return false;
    }
    await d.context.secrets.store(relaySecretKey, done.relaySecret);
    await config.update('relayUrl', done.relayUrl, vscode.ConfigurationTarget.Workspace);
    void vscode.window.showInformationMessage(`OpenHands: the relay runs beside ${server.serverUrl}. New conversations reach this window through ${done.relayUrl}.`);
    return true;
  } catch (err) {
    void vscode.window.showErrorMessage(`OpenHands: the relay was not installed: ${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
}
