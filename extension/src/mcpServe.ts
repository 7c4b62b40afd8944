// "Serve Tools to Agents (MCP)": the bridge's MCP endpoint opened and
// closed, and the configuration an agent needs copied for the person.
import * as vscode from 'vscode';
import { bridgeNotRunning, type Bridge } from './bridge';
import { snippets, type Endpoint } from './mcp';

/**
 * Opens the bridge's MCP endpoint (127.0.0.1, a fresh token) and offers
 * the configuration an agent needs, copied to the clipboard: its tool
 * calls then run here, in terminals and buffers the user sees.
 */
export async function serveMcp(bridge: Bridge | undefined): Promise<void> {
  if (bridge === undefined) {
    void vscode.window.showErrorMessage(bridgeNotRunning);
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

export async function stopMcp(bridge: Bridge | undefined): Promise<void> {
  await bridge?.request('mcp/stop', {});
  void vscode.window.showInformationMessage('OpenHands tools are no longer served over MCP; agents using them are disconnected.');
}
