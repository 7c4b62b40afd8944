// The conversation view: a WebviewView in the "OpenHands" activity-bar
// container that shows the agent's conversation as cards (from the
// bridge's openhands/did_update_conversation), lets the user write to the
// agent and stop, pause or resume it, opens and reverts the agent's edits,
// and asks permission questions on the card of the call they are about.
// The cards are built by the pure Transcript and cards modules; this file
// is the vscode-facing part. Changed cards go to the webview in batches,
// one a frame at most, so a burst of updates (a replay) draws each card
// once.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { headerView, renderCard } from './cards';
import { planRevert } from './diff';
import { renderHistory } from './history';
import type { ConversationSummary, Status, Update } from './protocol.gen';
import { disconnected } from './status';
import { Transcript, editDiffs, outputText, type Answer, type KeptAnswer, type QuestionRequest } from './transcript';
import type { CardHtml, FromWebview, SteerMethod, ToWebview } from './webview/protocol';

export const viewId = 'openhands.conversation';
const diffScheme = 'openhands-diff';
const outputScheme = 'openhands-output';
/** The workspace state's key of the answers kept across reloads, and how many conversations' it keeps. */
const answersKey = 'openhands.answers';
const keptConversations = 50;
/** How long changed cards wait to go to the webview together (one frame). */
const batchMs = 16;
/** The most HTML one message carries: a bigger batch is split, for the webview to draw between. */
const batchBytes = 256 * 1024;

/** What the view asks of the rest of the extension. */
export interface ConversationActions {
  /** Sends the user's message, or starts a conversation with it. Resolves false if it did not go. */
  send(text: string): Promise<boolean>;
  steer(method: SteerMethod): Promise<unknown>;
  /** Attaches to the remembered conversation. */
  reopen(): Promise<unknown>;
  /** A page of this workspace's earlier conversations (the first, or the one at cursor). */
  list(cursor?: string): Promise<{ conversations: ConversationSummary[]; next?: string }>;
  /** Reopens an earlier conversation, its history replayed. */
  open(conversationId: string): Promise<unknown>;
  /** Leaves the conversation shown: the next message starts a new one. */
  leave(): Promise<unknown>;
}

/** A permission question on a card: the user's pick, once the view answers it. */
export interface InlineQuestion {
  id: string;
  /** The option kind the user picked in the view. */
  answered: Promise<string>;
}

export class ConversationView implements vscode.WebviewViewProvider, vscode.TextDocumentContentProvider {
  readonly transcript: Transcript;
  private view: vscode.WebviewView | undefined;
  private connection: Status = disconnected;
  private remembered: string | undefined;
  private readonly answers = new Map<string, (kind: string) => void>();
  /** The earlier conversations listed so far (pages added as the person asks for more). */
  private listed: ConversationSummary[] = [];
  /** Cards changed since the last batch went to the webview. */
  private readonly dirty = new Set<string>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** Resets so far: an older one stops sending its cards. */
  private resets = 0;
  /** A reset's older cards are still going to the webview. */
  private sendingOlder = false;
  private readonly hidden = new vscode.EventEmitter<void>();
  private readonly ready = new vscode.EventEmitter<void>();
  /** The webview loaded (again) and has every card. */
  readonly onReady = this.ready.event;
  private readonly docChanges = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.docChanges.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly actions: ConversationActions,
    /** Where the person's answers are kept across reloads (the workspace's state). */
    private readonly memento?: vscode.Memento,
  ) {
    this.transcript = new Transcript((id) => this.keptAnswers()[id]);
  }

  /** Registers the view and the diff documents' scheme. */
  register(): vscode.Disposable {
    return vscode.Disposable.from(
      vscode.window.registerWebviewViewProvider(viewId, this),
      vscode.workspace.registerTextDocumentContentProvider(diffScheme, this),
      vscode.workspace.registerTextDocumentContentProvider(outputScheme, this),
      this.hidden,
      this.ready,
      this.docChanges,
    );
  }

  get visible(): boolean {
    return this.view?.visible === true;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const root = vscode.Uri.joinPath(this.extensionUri, 'out', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [root] };
    view.webview.html = this.html(view.webview, root);
    view.webview.onDidReceiveMessage((m: FromWebview) => void this.receive(m));
    view.onDidChangeVisibility(() => {
      if (!view.visible) this.hidden.fire();
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
      this.hidden.fire();
    });
  }

  // From the bridge ---------------------------------------------------------

  /** One openhands/did_update_conversation. */
  update(conversationId: string, update: Update): void {
    const ids = this.transcript.apply(conversationId, update);
    this.changed(ids);
    // A question asked before its call's update came is kept once the
    // update names the call.
    if (ids.some((id) => { const c = this.transcript.card(id); return c?.kind === 'tool' && c.question?.answer !== undefined; })) this.keepAnswers();
  }

  /** The bridge's openhands/did_change_status, and the conversation to offer to reopen. */
  status(conn: Status, remembered: string | undefined): void {
    this.connection = conn;
    this.remembered = remembered;
    if (conn.state === 'connected' && this.transcript.follow(conn.conversationId)) this.changed(['*']);
    else this.post({ type: 'header', header: this.header() });
  }

  // Permission questions ------------------------------------------------------

  /** Puts a permission question on the card of the call it asks about (made if need be). */
  ask(q: QuestionRequest): InlineQuestion {
    const { questionId, cardId } = this.transcript.ask(q);
    const answered = new Promise<string>((resolve) => this.answers.set(questionId, resolve));
    this.changed([cardId]);
    // The question goes out at once: the person is waited for.
    this.flush();
    return { id: questionId, answered };
  }

  /** Marks a question answered (in the view or the modal), or dismissed. */
  settle(id: string, answer: Answer): void {
    this.answers.delete(id);
    this.changed(this.transcript.answer(id, answer));
    this.flush();
    this.keepAnswers();
  }

  /** Every conversation's kept answers. */
  private keptAnswers(): Record<string, Record<string, KeptAnswer>> {
    return this.memento?.get<Record<string, Record<string, KeptAnswer>>>(answersKey) ?? {};
  }

  /** Keeps this conversation's answers, for its cards to show them after a reload; the newest conversations only. */
  private keepAnswers(): void {
    const id = this.transcript.conversationId;
    if (this.memento === undefined || id === undefined || id === '') return;
    const mine = this.transcript.answers();
    if (Object.keys(mine).length === 0) return;
    const all = { ...this.keptAnswers() };
    delete all[id];
    const ids = Object.keys(all);
    for (const old of ids.slice(0, Math.max(0, ids.length - (keptConversations - 1)))) delete all[old];
    all[id] = mine;
    void this.memento.update(answersKey, all);
  }

  /** Resolves the next time the view is hidden or closed. */
  whenHidden(): { promise: Promise<void>; dispose: () => void } {
    let sub: vscode.Disposable | undefined;
    const promise = new Promise<void>((resolve) => {
      sub = this.hidden.event(() => resolve());
    });
    return { promise, dispose: () => { sub?.dispose(); } };
  }

  /** Empties the view for a new conversation; returns what changed. */
  private clear(): string[] {
    this.transcript.reset(undefined);
    return ['*'];
  }

  /** Lists the earlier conversations into the view: the first page anew, or the next added. */
  private async history(cursor?: string): Promise<void> {
    let html: string;
    try {
      const page = await this.actions.list(cursor);
      this.listed = cursor === undefined ? [...page.conversations] : [...this.listed, ...page.conversations];
      html = renderHistory({ conversations: this.listed, next: page.next, current: this.connection.state === 'connected' ? this.transcript.conversationId : undefined }, Date.now());
    } catch (err) {
      html = renderHistory({ conversations: [], error: err instanceof Error ? err.message : String(err) }, Date.now());
    }
    this.post({ type: 'history', html });
  }

  // The webview ---------------------------------------------------------------

  private header(): ReturnType<typeof headerView> {
    const offer = this.transcript.cards.length === 0 || this.connection.state !== 'connected' ? this.remembered : undefined;
    return headerView(this.connection, offer);
  }

  private changed(ids: readonly string[]): void {
    if (ids.includes('*')) {
      this.dirty.clear();
      if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      if (this.view?.visible === true) this.resetView();
      return;
    }
    // No webview, or a hidden one (it loads again when shown): it gets
    // every card when it is ready.
    if (this.view?.visible !== true) return;
    for (const id of ids) this.dirty.add(id);
    this.flushTimer ??= setTimeout(() => this.flush(), batchMs);
  }

  /**
   * Sends every card anew: the newest, a batch's worth, at once; the older
   * ones after, newest first, a batch a task, each drawn as it is when it
   * goes. Changed cards wait until all are sent.
   */
  private resetView(): void {
    const gen = ++this.resets;
    const cards = [...this.transcript.cards];
    const batch = (): CardHtml[] => {
      const out: CardHtml[] = [];
      let bytes = 0;
      while (cards.length > 0 && bytes < batchBytes) {
        const c = cards.pop() as (typeof cards)[number];
        const html = renderCard(c);
        out.unshift({ id: c.id, html });
        bytes += html.length;
      }
      return out;
    };
    this.post({ type: 'reset', cards: batch(), header: this.header() });
    const next = (): void => {
      if (gen !== this.resets) return;
      if (cards.length === 0) {
        this.sendingOlder = false;
        return;
      }
      this.post({ type: 'older', cards: batch() });
      setImmediate(next);
    };
    this.sendingOlder = cards.length > 0;
    if (this.sendingOlder) setImmediate(next);
  }

  /** Sends the changed cards, each once, in transcript order, in messages of at most batchBytes. */
  private flush(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.dirty.size === 0) return;
    if (this.sendingOlder) {
      this.flushTimer = setTimeout(() => this.flush(), batchMs);
      return;
    }
    const ids = [...this.dirty];
    this.dirty.clear();
    let batch: CardHtml[] = [];
    let bytes = 0;
    for (const id of ids) {
      const card = this.transcript.card(id);
      if (card === undefined) continue;
      const html = renderCard(card);
      batch.push({ id, html, after: this.transcript.before(id) });
      bytes += html.length;
      if (bytes >= batchBytes) {
        this.post({ type: 'cards', cards: batch });
        batch = [];
        bytes = 0;
      }
    }
    if (batch.length > 0) this.post({ type: 'cards', cards: batch });
  }

  private post(m: ToWebview): void {
    void this.view?.webview.postMessage(m);
  }

  private async receive(m: FromWebview): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.changed(['*']);
        this.ready.fire();
        return;
      case 'send': {
        const ok = await this.actions.send(m.text);
        this.post({ type: 'sent', ok });
        return;
      }
      case 'steer':
        await this.actions.steer(m.method);
        return;
      case 'reopen':
        await this.actions.reopen();
        return;
      case 'history':
        return this.history(m.cursor);
      case 'openConversation':
        if (m.id !== this.transcript.conversationId || this.connection.state !== 'connected') await this.actions.open(m.id);
        return;
      case 'newConversation':
        await this.actions.leave();
        // A question still waiting keeps its card: it is answered or
        // dismissed by its own request.
        this.changed(this.clear());
        return;
      case 'copy':
        await vscode.env.clipboard.writeText(m.text);
        return;
      case 'openDiff':
        return this.openDiff(m.card, m.index);
      case 'revert':
        return this.revert(m.card, m.index);
      case 'openFile': {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(m.path));
        const line = Math.max(0, (m.line ?? 1) - 1);
        await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0), preview: true });
        return;
      }
      case 'permission':
        this.answers.get(m.question)?.(m.option);
        return;
      case 'showOutput':
        return this.showOutput(m.card);
    }
  }

  private html(webview: vscode.Webview, root: vscode.Uri): string {
    const nonce = randomBytes(18).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(root, 'view.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource} 'nonce-${nonce}'`,
      `script-src 'nonce-${nonce}'`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" nonce="${nonce}" href="${style.toString()}">
<title>OpenHands Conversation</title>
</head>
<body>
<header class="bar">
  <div class="state" role="status" aria-live="polite"><span class="dot off" id="dot" aria-hidden="true"></span><span id="state">Not connected</span></div>
  <div class="controls" role="toolbar" aria-label="Agent controls">
    <button type="button" id="stop" class="secondary" data-steer="openhands/interrupt" title="Stop the agent now (interrupts its command)" disabled>Stop</button>
    <button type="button" id="pause" class="secondary" data-steer="openhands/pause" title="Pause after the current step" disabled>Pause</button>
    <button type="button" id="resume" class="secondary" data-steer="openhands/resume" title="Let the paused agent go on" disabled>Resume</button>
    <button type="button" id="history" class="secondary" aria-expanded="false" aria-controls="conversations" title="This workspace's earlier conversations">History</button>
    <button type="button" id="new" class="secondary" title="Leave this conversation: your next message starts a new one" disabled>New</button>
  </div>
</header>
<div id="error" class="banner error-banner" role="alert" hidden></div>
<div id="via" class="banner via-banner" hidden></div>
<section id="conversations" class="conversations" aria-label="Earlier conversations" hidden><p class="history-empty">Loading…</p></section>
<div id="reopen" class="banner" hidden><span id="reopen-text"></span> <button type="button" id="reopen-button" class="secondary">Reopen</button></div>
<main id="transcript" class="transcript" role="log" aria-live="polite" aria-label="Conversation with the agent" tabindex="0">
  <p class="empty" id="empty">Write a task below to start a conversation with the OpenHands agent.</p>
</main>
<form id="composer" class="composer">
  <label for="input" class="visually-hidden">Message to the agent</label>
  <textarea id="input" rows="3" placeholder="Message the agent (Enter to send, Shift+Enter for a new line)" aria-describedby="hint"></textarea>
  <span id="hint" class="visually-hidden">Enter sends, Shift+Enter starts a new line.</span>
  <button type="submit" id="send" class="primary">Send</button>
</form>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  // Edits ---------------------------------------------------------------------

  /** A diff of a card: index -1 is the proposed one, from the call's arguments. */
  private diffOf(cardId: string, index: number): { path: string; oldText: string | null; newText: string } | undefined {
    const card = this.transcript.card(cardId);
    return card?.kind === 'tool' ? editDiffs(card).find((d) => d.index === index)?.diff : undefined;
  }

  /** The old or new text of an edit, as a virtual document for vscode.diff; or a card's whole output. */
  provideTextDocumentContent(uri: vscode.Uri): string {
    if (uri.scheme === outputScheme) {
      const card = this.transcript.card(uri.query);
      return card?.kind === 'tool' ? outputText(card) : '';
    }
    const [cardId = '', index = '0', side = 'new'] = uri.query.split('/');
    const d = this.diffOf(cardId, Number(index));
    if (d === undefined) return '';
    return side === 'old' ? (d.oldText ?? '') : d.newText;
  }

  private async openDiff(cardId: string, index: number): Promise<void> {
    const d = this.diffOf(cardId, index);
    if (d === undefined) return;
    const side = (s: string): vscode.Uri => vscode.Uri.from({ scheme: diffScheme, path: d.path, query: `${cardId}/${index}/${s}` });
    const name = d.path.slice(d.path.lastIndexOf('/') + 1);
    const what = index < 0 ? 'the change the agent proposes' : "the agent's edit";
    await vscode.commands.executeCommand('vscode.diff', side('old'), side('new'), `${name} (${what})`, { preview: true });
  }

  /** Opens all of a card's output, which the card shows the end of, in an editor. */
  private async showOutput(cardId: string): Promise<void> {
    const card = this.transcript.card(cardId);
    if (card?.kind !== 'tool') return;
    const name = card.title.replace(/[/\\?#]/g, ' ').slice(0, 60).trim() || 'output';
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: outputScheme, path: `/${name}.log`, query: cardId }));
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** Puts the text from before an edit back, in the buffer, asking first if the file changed since. */
  private async revert(cardId: string, index: number): Promise<void> {
    // A proposed change has not run: there is nothing to revert.
    const d = index < 0 ? undefined : this.diffOf(cardId, index);
    if (d === undefined) return;
    const uri = vscode.Uri.file(d.path);
    const current = await currentText(uri);
    const plan = planRevert(current, d.oldText, d.newText);
    // Deleting a file the agent created always asks: it is not a buffer edit.
    if (plan.kind !== 'revert') {
      const go = plan.kind === 'ask' ? 'Revert Anyway' : 'Delete File';
      const what = plan.kind === 'ask' ? `Put back the text of ${d.path} from before the agent's edit?` : `The agent created ${d.path}. Delete it?`;
      const detail = plan.kind === 'delete' ? 'The file did not exist before the edit.' : plan.reason;
      const choice = await vscode.window.showWarningMessage(what, { modal: true, detail }, go);
      if (choice !== go) return;
    }
    const edit = new vscode.WorkspaceEdit();
    if (plan.kind === 'delete' || plan.kind === 'askDelete') {
      if (current === undefined) return;
      edit.deleteFile(uri, { ignoreIfNotExists: true });
    } else if (current === undefined) {
      edit.createFile(uri, { ignoreIfExists: true });
      edit.insert(uri, new vscode.Position(0, 0), plan.text);
    } else {
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), plan.text);
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage(`Could not revert ${d.path}.`);
      return;
    }
    if (plan.kind === 'revert' || plan.kind === 'ask') {
      await vscode.window.showTextDocument(uri, { preview: true });
      void vscode.window.showInformationMessage(`Reverted the agent's edit of ${d.path}; review and save it.`);
    }
  }
}

/** A file's text as the editor has it (its buffer if open), or undefined if it does not exist. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === uri.toString());
  if (open !== undefined) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}
