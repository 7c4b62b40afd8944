// The conversation view's HTML for each card of a Transcript, and the
// header's connection line and buttons. Everything the agent or the user
// wrote is escaped (or rendered by the safe Markdown renderer); buttons
// carry data-action and the card's id for the view's script. A tool
// call's card carries the permission question about it: its buttons
// while it waits, its answer after. Pure: no vscode, no DOM.
import { diffSummary, type DiffSummary } from './diff';
import { codeBlock, escapeHtml as esc, renderMarkdown } from './markdown';
import { allows, answerWords, optionKeys } from './permissions';
import type { Status, ToolCallContent } from './protocol.gen';
import { Transcript, cardKindOf, editDiffs, outputText, rawField, type Card, type DiffContent, type Question, type ToolCard } from './transcript';

/** The most of a command's output a card shows: its end. The rest opens in an editor. */
export const outputLimit = 8_000;

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

/** A tool title may quote a command in backticks: render those as code. */
function renderInlineTitle(title: string): string {
  return esc(title).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** The badge of a tool card: its status, a command's exit code, or the question's state. */
function badgeOf(card: ToolCard, kind: string): { text: string; tone: 'good' | 'bad' | 'busy' | 'ask' } {
  const status = card.status;
  const q = card.question;
  if (status === 'pending' && q !== undefined) {
    if (q.answer === undefined) return { text: 'Needs you', tone: 'ask' };
    // A call only asked about: no update tells what came of it.
    if (card.askedOnly === true) return allows(q.answer) ? { text: 'Allowed', tone: 'good' } : { text: 'Not run', tone: 'bad' };
  }
  const exit = Transcript.exitCode(card);
  let text = statusLabel[status] ?? status;
  if (kind === 'command' && exit !== undefined) text = exit === null ? (status === 'failed' ? 'Stopped' : 'Done, no exit code') : `Exit ${exit}`;
  const tone = status === 'failed' || (typeof exit === 'number' && exit !== 0) ? 'bad' : status === 'completed' ? 'good' : 'busy';
  return { text, tone };
}

function tool(card: ToolCard): string {
  const kind = cardKindOf(card.tool) === 'command' || card.toolKind === 'execute' ? 'command' : card.toolKind;
  const status = card.status;
  const badge = badgeOf(card, kind);
  const head = `<div class="tool-head"><span class="tool-kind">${esc(kindLabel(kind))}</span> <span class="tool-title">${renderInlineTitle(card.title)}</span>` +
    ` <span class="badge ${badge.tone}" aria-label="Status: ${esc(badge.text)}">${esc(badge.text)}</span></div>`;
  let body: string;
  if (kind === 'command') body = commandBody(card);
  else if (editDiffs(card).length > 0) body = editBody(card);
  else if (kind === 'read') body = readBody(card);
  else body = otherBody(card);
  const q = card.question;
  const asking = q !== undefined && q.answer === undefined;
  return `<article id="${card.id}" class="card tool tool-${esc(kind)} status-${esc(status)}${asking ? ' asking' : ''}" aria-label="${esc(kindLabel(kind))}: ${esc(card.title)}">` +
    `${head}${body}${q === undefined ? '' : question(card, q)}</article>`;
}

/** The question on a card: what the agent asks and a button per option, or the answer given. */
function question(card: ToolCard, q: Question): string {
  const ask = `${esc(q.agent)} wants to ${renderInlineTitle(q.title)}`;
  if (q.answer !== undefined) {
    const tone = allows(q.answer) ? 'allowed' : 'refused';
    return `<div class="question answered ${tone}" id="${q.id}" data-question="${q.id}" role="note" aria-label="Permission">` +
      `<span class="answer-mark" aria-hidden="true">${tone === 'allowed' ? '✓' : '✕'}</span> <span class="answer">${esc(answerWords(q.answer, card.toolKind))}</span>` +
      `<span class="muted"> · ${ask}</span></div>`;
  }
  const keys: string[] = [];
  const buttons = q.options.map((o) => {
    const key = optionKeys[o.kind];
    keys.push(`<kbd>${key.toUpperCase()}</kbd> ${esc(o.name.toLowerCase())}`);
    return `<button type="button" class="${o.kind.startsWith('allow') ? 'primary' : 'secondary'}" data-action="permission" data-question="${q.id}" data-option="${esc(o.kind)}"` +
      ` data-key="${key}" aria-keyshortcuts="${key.toUpperCase()}">${esc(o.name)} <kbd aria-hidden="true">${key.toUpperCase()}</kbd></button>`;
  });
  return `<div class="question open" id="${q.id}" data-question="${q.id}" role="group" tabindex="-1" aria-labelledby="${q.id}-ask" aria-describedby="${q.id}-keys">` +
    `<p class="ask" id="${q.id}-ask"><span class="visually-hidden">Permission question: </span>${ask}</p>` +
    `<div class="actions">${buttons.join('')}</div>` +
    `<p class="keys muted" id="${q.id}-keys">Keys: ${keys.join(' · ')}</p></div>`;
}

function kindLabel(kind: string): string {
  return ({ command: 'Command', edit: 'Edit', read: 'Read', think: 'Think', search: 'Search', delete: 'Delete', move: 'Move', fetch: 'Fetch' } as Record<string, string>)[kind] ?? 'Tool';
}


/** The end of a long output, with a line saying what was left out. */
export function clipOutput(text: string, limit = outputLimit): string {
  if (text.length <= limit) return text;
  const cut = text.length - limit;
  const nl = text.indexOf('\n', cut);
  const from = nl >= 0 && nl - cut < 200 ? nl + 1 : cut;
  return `… (${from} earlier characters not shown)\n${text.slice(from)}`;
}

/** An output, clipped to its end, with a button for all of it when clipped. */
function output(card: ToolCard, text: string, label = ''): string {
  const more = text.length > outputLimit
    ? `<button type="button" class="link show-all" data-action="showOutput" data-card="${card.id}">Show all ${text.length.toLocaleString('en-US')} characters in an editor</button>`
    : '';
  return `<pre class="output"${label === '' ? '' : ` aria-label="${label}"`}>${esc(clipOutput(text))}</pre>${more}`;
}

function commandBody(card: ToolCard): string {
  const command = rawField(card.rawInput, 'command') ?? '';
  const text = outputText(card);
  const cmd = command === '' ? '' : codeBlock(command, 'sh').replace('class="code-block"', 'class="code-block command"');
  const waiting = card.question !== undefined && !allows(card.question.answer);
  const running = card.status === 'in_progress' || (card.status === 'pending' && !waiting && card.askedOnly !== true);
  const out = text === '' ? (running ? '<p class="muted">Waiting for output…</p>' : '') : output(card, text, 'Output');
  return `${cmd}${out}`;
}

function editBody(card: ToolCard): string {
  const diffs = editDiffs(card);
  const proposed = diffs[0]?.index === -1;
  // A proposed diff comes from the call's arguments: the content, if any, follows it.
  if (proposed) return `${diffs.map((d) => diffBlock(card, d.diff, d.index)).join('')}${card.content.map((c) => contentBlock(card, c)).join('')}`;
  return card.content.map((c, i) => (c.type === 'diff' ? diffBlock(card, c, i) : contentBlock(card, c))).join('');
}

function contentBlock(card: ToolCard, c: ToolCallContent): string {
  return c.type === 'content' && c.content !== null && c.content.text !== '' ? output(card, c.content.text) : '';
}

/** One diff of an edit card; index -1 is the proposed one, from the call's arguments, before it ran. */
function diffBlock(card: ToolCard, c: DiffContent, index: number): string {
  const summary = diffSummary(c.oldText, c.newText);
  const name = esc(basename(c.path));
  const created = c.oldText === null ? ' <span class="badge">new file</span>' : '';
  const proposed = index < 0 ? ' <span class="badge proposed" title="What the agent asks to change; it has not run">proposed</span>' : '';
  const revert = index < 0 ? '' : `<button type="button" class="secondary" data-action="revert" data-card="${card.id}" data-index="${index}" aria-label="Revert the agent's edit of ${name}">Revert</button>`;
  return `<div class="diff${index < 0 ? ' proposed' : ''}"><div class="diff-head"><span class="path" title="${esc(c.path)}">${esc(c.path)}</span>${created}${proposed} ` +
    `<span class="added" aria-label="${summary.added} lines added">+${summary.added}</span> <span class="removed" aria-label="${summary.removed} lines removed">−${summary.removed}</span></div>` +
    `${diffLines(summary, index >= 0)}<div class="actions">` +
    `<button type="button" class="secondary" data-action="openDiff" data-card="${card.id}" data-index="${index}" aria-label="Open the diff of ${name}">Open Diff</button>` +
    `${revert}</div></div>`;
}

const maxDiffLines = 200;

/** A diff's lines; numbered hunks only when the diff is of the whole file (a proposed one is of a snippet). */
function diffLines(summary: DiffSummary, numbered = true): string {
  const out: string[] = [];
  let n = 0;
  for (const h of summary.hunks) {
    out.push(`<span class="hunk">${numbered ? `@@ -${h.oldStart} +${h.newStart} @@` : '@@'}</span>`);
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
  const text = outputText(card);
  const seen = text === '' ? '' : `<details><summary>What the agent saw</summary>${output(card, text)}</details>`;
  return `${where.length === 0 ? '' : `<div class="locations">${where.join(' ')}</div>`}${seen}`;
}

function otherBody(card: ToolCard): string {
  const text = outputText(card);
  if (text === '') return '';
  if (card.toolKind === 'think') return `<details><summary>Thought</summary><div class="body">${renderMarkdown(text)}</div></details>`;
  if (cardKindOf(card.tool) === 'plan') return `<details><summary>Result</summary>${output(card, text)}</details>`;
  return output(card, text);
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
  /**
   * Where the agent's calls reach this window from when not from this
   * machine ("the relay at URL, as window NAME"), while connected.
   */
  via?: string;
  /** Why that way is down, while it is (the relay's link): the agent's calls wait. */
  viaDown?: string;
}

/** The view's header for a connection status (and a remembered conversation). */
export function headerView(conn: Status, remembered?: string): HeaderView {
  const exec = conn.executionStatus;
  const base = { connected: false, canStop: false, canPause: false, canResume: false };
  const err = conn.error === undefined || conn.error === '' ? {} : { error: conn.error };
  const via = conn.via === undefined || conn.via === '' ? {}
    : { via: conn.via, ...(conn.viaDown === undefined || conn.viaDown === '' ? {} : { viaDown: conn.viaDown }) };
  switch (conn.state) {
    case 'connecting':
      return { ...base, label: 'Connecting…', tone: 'busy' };
    case 'reconnecting':
      return { ...base, label: 'Reconnecting…', tone: 'busy', ...err, ...via };
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
    ...via,
  };
}
