// What the bridge asks of the editor (EditorHost): edits applied to the
// workspace, the person's answer to a permission question, messages, log
// lines and progress.
import * as vscode from 'vscode';
import type { ApplyWorkspaceEditParams, EditorHost, PermissionRequest, TextEdit } from './bridge';
import type { ConversationView } from './conversationView';
import { allowOption, decide, optionLabel, outcomeFor, type PermissionMode, type PermissionOption } from './permissions';

export class Host implements EditorHost {
  private readonly alwaysAllowed = new Set<string>();
  private readonly progressBars = new Map<string | number, { report: (m: string) => void; done: () => void }>();

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly view: ConversationView,
  ) {}

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
}
