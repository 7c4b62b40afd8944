// Incremental document sync: VS Code's change event becomes the params of
// textDocument/didChange carrying only what changed, as the bridge
// advertises (textDocumentSync.change = 2). Pure, with no vscode import, so
// it is unit-tested without an editor.
import type { ContentChange, DidChangeParams } from './protocol.gen';

/** A position as VS Code and LSP give it: zero-based line, and character in UTF-16 code units. */
export interface DocumentPosition {
  readonly line: number;
  readonly character: number;
}

/** The part of a vscode.TextDocumentContentChangeEvent the sync reads. */
export interface DocumentContentChange {
  readonly range: { readonly start: DocumentPosition; readonly end: DocumentPosition };
  readonly text: string;
}

/** The part of a vscode.TextDocumentChangeEvent the sync reads. */
export interface DocumentChangeEvent {
  readonly document: { readonly uri: { toString(): string }; readonly version: number };
  readonly contentChanges: readonly DocumentContentChange[];
}

/**
 * The textDocument/didChange params for one change event: each change as a
 * range and its replacement, in the order VS Code gives them (each applies
 * to the text the previous one left, as LSP reads them), and the version
 * the document has after them all. An event without content changes (only
 * the dirty state changed, say) answers undefined: there is nothing to send.
 */
export function didChangeParams(e: DocumentChangeEvent): DidChangeParams | undefined {
  if (e.contentChanges.length === 0) return undefined;
  return {
    textDocument: { uri: e.document.uri.toString(), version: e.document.version },
    contentChanges: e.contentChanges.map(toContentChange),
  };
}

function toContentChange(c: DocumentContentChange): ContentChange {
  // Plain objects: the vscode.Range class carries more than LSP's range.
  const { start, end } = c.range;
  return {
    range: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
    text: c.text,
  };
}
