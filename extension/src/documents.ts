// The workspace's open documents, mirrored into the bridge
// (textDocument/didOpen, didChange and didClose), so the agent reads and
// edits what the person sees, unsaved text included.
import * as vscode from 'vscode';
import type { Bridge } from './bridge';
import { didChangeParams } from './docsync';

/** syncDocuments follows the documents; bridge is the bridge running now. */
export function syncDocuments(bridge: () => Bridge | undefined): vscode.Disposable[] {
  return [
    vscode.workspace.onDidOpenTextDocument((d) => didOpen(bridge(), d)),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (!inWorkspace(e.document)) return;
      // Only what changed, not the whole text per keystroke (docsync.ts).
      const params = didChangeParams(e);
      if (params !== undefined) void bridge()?.notify('textDocument/didChange', params);
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (inWorkspace(d)) void bridge()?.notify('textDocument/didClose', { textDocument: { uri: d.uri.toString() } });
    }),
  ];
}

/** didOpen tells the bridge of a document of the workspace. */
export function didOpen(bridge: Bridge | undefined, d: vscode.TextDocument): void {
  if (!inWorkspace(d)) return;
  void bridge?.notify('textDocument/didOpen', {
    textDocument: { uri: d.uri.toString(), languageId: d.languageId, version: d.version, text: d.getText() },
  });
}

function inWorkspace(d: vscode.TextDocument): boolean {
  return d.uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(d.uri) !== undefined;
}
