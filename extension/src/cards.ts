// The conversation view's HTML for each card of a Transcript, and the
// header's connection line and buttons. Everything the agent or the user
// wrote is escaped (or rendered by the safe Markdown renderer); buttons
// carry data-action and the card's id for the view's script. Pure: no
// vscode, no DOM.
import { diffSummary, type DiffSummary } from './diff';
import { codeBlock, escapeHtml as esc, renderMarkdown } from './markdown';
import type { Status, ToolCallContent } from './protocol.gen';
import { Transcript, type Card } from './transcript';

/** The most of a command's output a card shows: its end. */
export const outputLimit = 20_000;

type ToolCard = Extract<Card, { kind: 'tool' }>;

const statusLabel: Record<string, string> = { pending: 'Pending', in_progress: 'Running', completed: 'Done', failed: 'Failed' };

/** The HTML of one card, its outer element included (id = card id). */
export function renderCard(card: Card): string {
  switch (card.kind) {
    case 'user':
      return article(card.id, 'message user', 'You', renderMarkdown(card.text));
    case 'agent':
      return article(card.id, 'message agent', 'Agent', renderMarkdown(card.text));
    case 'error':
      return `<article id="${card.id}" class="card error" role="alert" aria-label="Error"><div class="who">Error</div><div class="body">${renderMarkdown(card.text)}</div></article>`;
    case 'thought':
      return `<article id="${card.id}" class="card thought" aria-label="Agent's thought"><details><summary>Thought</summary><div class="body">${renderMarkdown(card.text)}</div></details></article>`;
    case 'plan':
      return plan(card);
    case 'permission':
      return permission(card);
    case 'tool':
      return tool(card);
  }
}

function article(id: string, cls: string, who: string, body: string): string {
  return `<article id="${id}" class="card ${cls}" aria-label="${who}"><div class="who">${who}</div><div class="body">${body}</div></article>`;
}

// How a plan entry's status shows; another status shows as pending.
const planMark: Record<string, string> = { pending: '○', in_progress: '◐', completed: '●' };
const planWords: Record<string, string> = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

function plan(card: Extract<Card, { kind: 'plan' }>): string {
  const items = card.entries.map((e) => {
    const status = e.status in planMark ? e.status : 'pending';
    return `<li class="plan-${status}"><span class="mark" aria-hidden="true">${planMark[status] ?? ''}</span> ${esc(e.content)}` +
      `<span class="visually-hidden"> (${planWords[status] ?? ''}${e.priority === 'medium' || e.priority === '' ? '' : `, ${esc(e.priority)} priority`})</span>` +
      `${e.priority === 'high' ? ' <span class="badge">high</span>' : ''}</li>`;
  });
  const done = card.entries.filter((e) => e.status === 'completed').length;
  return `<article id="${card.id}" class="card plan" aria-label="Plan"><div class="who">Plan <span class="muted">${done}/${card.entries.length} done</span></div>` +
    `<ul class="plan-list">${items.join('')}</ul></article>`;
}

function permission(card: Extract<Card, { kind: 'permission' }>): string {
  const head = `<div class="who">Permission</div><p>${esc(card.agent)} wants to ${renderInlineTitle(card.title)}</p><p class="muted">Kind: ${esc(card.toolKind)}</p>`;
  if (card.answer !== undefined) {
    return `<article id="${card.id}" class="card permission answered" aria-label="Permission request">${head}<p class="answer">${esc(card.answer)}</p></article>`;
  }
  const buttons = card.options.map((o) =>
    `<button type="button" class="${o.kind.startsWith('allow') ? 'primary' : 'secondary'}" data-action="permission" data-card="${card.id}" data-option="${esc(o.kind)}">${esc(o.name)}</button>`);
  return `<article id="${card.id}" class="card permission open" role="group" aria-label="Permission request">${head}<div class="actions">${buttons.join('')}</div></article>`;
}

/** A tool title may quote a command in backticks: render those as code. */
function renderInlineTitle(title: string): string {
  return esc(title).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function tool(card: ToolCard): string {
  const kind = card.tool === 'terminal' || card.toolKind === 'execute' ? 'command' : card.toolKind;
  const status = card.status;
  const exit = Transcript.exitCode(card);
  let badge = statusLabel[status] ?? status;
  if (kind === 'command' && exit !== undefined) badge = exit === null ? (status === 'failed' ? 'Stopped' : 'Done, no exit code') : `Exit ${exit}`;
  const badgeClass = status === 'failed' || (typeof exit === 'number' && exit !== 0) ? 'bad' : status === 'completed' ? 'good' : 'busy';
  const head = `<div class="tool-head"><span class="tool-kind">${esc(kindLabel(kind))}</span> <span class="tool-title">${renderInlineTitle(card.title)}</span>` +
    ` <span class="badge ${badgeClass}" aria-label="Status: ${esc(badge)}">${esc(badge)}</span></div>`;
  let body: string;
  if (kind === 'command') body = commandBody(card);
  else if (card.content.some((c) => c.type === 'diff')) body = editBody(card);
  else if (kind === 'read') body = readBody(card);
  else body = otherBody(card);
  return `<article id="${card.id}" class="card tool tool-${esc(kind)} status-${esc(status)}" aria-label="${esc(kindLabel(kind))}: ${esc(card.title)}">${head}${body}</article>`;
}

function kindLabel(kind: string): string {
  return ({ command: 'Command', edit: 'Edit', read: 'Read', think: 'Think', search: 'Search', delete: 'Delete', move: 'Move', fetch: 'Fetch' } as Record<string, string>)[kind] ?? 'Tool';
}

const texts = (content: readonly ToolCallContent[]): string =>
  content.flatMap((c) => (c.type === 'content' && c.content !== null ? [c.content.text] : [])).join('\n');

function rawField(raw: unknown, key: string): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const v: unknown = Object.getOwnPropertyDescriptor(raw, key)?.value;
  return typeof v === 'string' ? v : undefined;
}

/** The end of a long output, with a line saying what was left out. */
export function clipOutput(text: string, limit = outputLimit): string {
  if (text.length <= limit) return text;
  const cut = text.length - limit;
  const nl = text.indexOf('\n', cut);
  const from = nl >= 0 && nl - cut < 200 ? nl + 1 : cut;
  return `… (${from} earlier characters not shown)\n${text.slice(from)}`;
}

function commandBody(card: ToolCard): string {
  const command = rawField(card.rawInput, 'command') ?? '';
  const output = texts(card.content);
  const cmd = command === '' ? '' : codeBlock(command, 'sh').replace('class="code-block"', 'class="code-block command"');
  const running = card.status === 'in_progress' || card.status === 'pending';
  const out = output === '' ? (running ? '<p class="muted">Waiting for output…</p>' : '') : `<pre class="output" aria-label="Output">${esc(clipOutput(output))}</pre>`;
  return `${cmd}${out}`;
}

function editBody(card: ToolCard): string {
  return card.content
    .map((c, i) => {
      if (c.type !== 'diff') return c.content !== null && c.content.text !== '' ? `<pre class="output">${esc(clipOutput(c.content.text))}</pre>` : '';
      const summary = diffSummary(c.oldText, c.newText);
      const created = c.oldText === null ? ' <span class="badge">new file</span>' : '';
      return `<div class="diff"><div class="diff-head"><span class="path" title="${esc(c.path)}">${esc(c.path)}</span>${created} ` +
        `<span class="added" aria-label="${summary.added} lines added">+${summary.added}</span> <span class="removed" aria-label="${summary.removed} lines removed">−${summary.removed}</span></div>` +
        `${diffLines(summary)}<div class="actions">` +
        `<button type="button" class="secondary" data-action="openDiff" data-card="${card.id}" data-index="${i}" aria-label="Open the diff of ${esc(basename(c.path))}">Open Diff</button>` +
        `<button type="button" class="secondary" data-action="revert" data-card="${card.id}" data-index="${i}" aria-label="Revert the agent's edit of ${esc(basename(c.path))}">Revert</button></div></div>`;
    })
    .join('');
}

const maxDiffLines = 200;

function diffLines(summary: DiffSummary): string {
  const out: string[] = [];
  let n = 0;
  for (const h of summary.hunks) {
    out.push(`<span class="hunk">@@ -${h.oldStart} +${h.newStart} @@</span>`);
    for (const l of h.lines) {
      if (n++ >= maxDiffLines) break;
      const cls = l.op === '+' ? 'ins' : l.op === '-' ? 'del' : 'ctx';
      out.push(`<span class="${cls}">${esc(l.op + l.text)}</span>`);
    }
  }
  const more = n > maxDiffLines ? `<p class="muted">… more in Open Diff</p>` : '';
  return out.length === 0 ? '<p class="muted">No changes.</p>' : `<pre class="diff-lines">${out.join('\n')}</pre>${more}`;
}

function readBody(card: ToolCard): string {
  const where = card.locations.map((l) => `<button type="button" class="link" data-action="openFile" data-path="${esc(l.path)}"${typeof l.line === 'number' ? ` data-line="${l.line}"` : ''}>${esc(l.path)}${typeof l.line === 'number' ? `:${l.line}` : ''}</button>`);
  const text = texts(card.content);
  const seen = text === '' ? '' : `<details><summary>What the agent saw</summary><pre class="output">${esc(clipOutput(text))}</pre></details>`;
  return `${where.length === 0 ? '' : `<div class="locations">${where.join(' ')}</div>`}${seen}`;
}

function otherBody(card: ToolCard): string {
  const text = texts(card.content);
  if (text === '') return '';
  if (card.toolKind === 'think') return `<details><summary>Thought</summary><div class="body">${renderMarkdown(text)}</div></details>`;
  if (card.tool === 'task_tracker') return `<details><summary>Result</summary><pre class="output">${esc(clipOutput(text))}</pre></details>`;
  return `<pre class="output">${esc(clipOutput(text))}</pre>`;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

export interface HeaderView {
  /** One line: the connection and the agent. */
  label: string;
  /** 'ok' | 'busy' | 'bad' | 'off', for the dot's colour. */
  tone: 'ok' | 'busy' | 'bad' | 'off';
  connected: boolean;
  canStop: boolean;
  canPause: boolean;
  canResume: boolean;
  /** A remembered conversation to reopen, when disconnected. */
  reopen?: string;
  error?: string;
}

/** The view's header for a connection status (and a remembered conversation). */
export function headerView(conn: Status, remembered?: string): HeaderView {
  const exec = conn.executionStatus;
  const base = { connected: false, canStop: false, canPause: false, canResume: false };
  const err = conn.error === undefined || conn.error === '' ? {} : { error: conn.error };
  switch (conn.state) {
    case 'connecting':
      return { ...base, label: 'Connecting…', tone: 'busy' };
    case 'reconnecting':
      return { ...base, label: 'Reconnecting…', tone: 'busy', ...err };
    case 'failed':
      return { ...base, label: 'Connection failed', tone: 'bad', ...err, ...(remembered === undefined ? {} : { reopen: remembered }) };
    case 'disconnected':
      return { ...base, label: 'Not connected', tone: 'off', ...(remembered === undefined ? {} : { reopen: remembered }) };
    case 'connected':
      break;
    default:
      // A state this extension does not know yet.
      return { ...base, label: conn.state, tone: 'off', ...err };
  }
  const words: Record<string, string> = {
    running: 'Agent working',
    waiting_for_confirmation: 'Waiting for you',
    paused: 'Paused',
    finished: 'Done',
    error: 'Agent error',
    stuck: 'Agent stuck',
    idle: 'Idle',
  };
  const running = exec === 'running' || exec === 'waiting_for_confirmation';
  return {
    label: `Connected · ${words[exec ?? ''] ?? 'Ready'}`,
    tone: exec === 'error' || exec === 'stuck' ? 'bad' : running ? 'busy' : 'ok',
    connected: true,
    canStop: running,
    canPause: exec === 'running',
    canResume: exec === 'paused',
    ...err,
  };
}
