// The conversation view's script, inside the webview: it puts the cards
// the extension rendered into the log, keeps the header in step, moves the
// focus to a new permission question, and turns clicks and keys into
// messages to the extension. It builds no HTML of its own from
// conversation text: the extension escapes and renders it. Each message's
// drawing is measured (performance.measure "oh-render", layout included:
// the log's height is read after it) for the devtools and the e2e test.
import type { CardHtml, FromWebview, HeaderView, ToWebview } from './protocol';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} is missing`);
  return el as T;
};

const log = $<HTMLElement>('transcript');
const input = $<HTMLTextAreaElement>('input');
const form = $<HTMLFormElement>('composer');
const send = $<HTMLButtonElement>('send');
const state = (vscode.getState() ?? {}) as { draft?: string };
input.value = state.draft ?? '';

/** Parses trusted HTML from the extension into one element. */
function element(html: string): Element | null {
  const t = document.createElement('template');
  t.innerHTML = html;
  return t.content.firstElementChild;
}

function nearBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

// The log follows the conversation while the reader is at its end: only
// their scrolling changes that. A card grows after it is drawn (off-screen
// cards are laid out at an estimated size until they show), so a card
// that changes size scrolls the log back to the end too.
let stuck = true;
log.addEventListener('scroll', () => (stuck = nearBottom()), { passive: true });
const follow = (): void => {
  if (stuck) log.scrollTop = log.scrollHeight;
};
const resized = new ResizeObserver(follow);

/** Every card anew: the newest ones (the extension sends the older ones after, in 'older' messages). */
function reset(cards: readonly CardHtml[]): void {
  const active = document.activeElement as HTMLElement | null;
  const focused = active !== null && log.contains(active) && active !== log ? focusTarget(active) : undefined;
  log.querySelectorAll('article').forEach((a) => a.remove());
  resized.disconnect();
  $('empty').hidden = cards.length > 0;
  log.insertAdjacentHTML('beforeend', cards.map((c) => c.html).join(''));
  log.querySelectorAll('article').forEach((a) => resized.observe(a));
  // The focus stays where it was (a question, a button), if that is still there.
  if (focused !== undefined) log.querySelector<HTMLElement>(focused)?.focus({ preventScroll: true });
  log.querySelectorAll<HTMLElement>('.question.open').forEach(offerQuestion);
}

/** Cards older than the drawn ones, above them: the browser's scroll anchoring keeps the reader's place. */
function older(cards: readonly CardHtml[]): void {
  $('empty').hidden = true;
  $('empty').insertAdjacentHTML('afterend', cards.map((c) => c.html).join(''));
  for (const c of cards) {
    const el = document.getElementById(c.id);
    if (el !== null) resized.observe(el);
    offerQuestionIn(el);
  }
}

/** Where an element's focus goes back to once its card is redrawn. */
function focusTarget(el: HTMLElement): string | undefined {
  if (el.id !== '') return `#${CSS.escape(el.id)}`;
  const d = el.dataset;
  if (d.action === undefined) return undefined;
  return ['action', 'option', 'index'].flatMap((k) => (d[k] === undefined ? [] : [`[data-${k}="${CSS.escape(d[k] ?? '')}"]`])).join('');
}

/** Adds a card after the one named (null: first), or replaces it in place, keeping which of its <details> the user opened or closed. */
function upsert(c: CardHtml): void {
  const next = element(c.html);
  if (next === null) return;
  const old = document.getElementById(c.id);
  const place = (): void => {
    const prev = c.after === undefined ? undefined : c.after === null ? $('empty') : document.getElementById(c.after);
    if (prev !== null && prev !== undefined) prev.after(next);
    else log.appendChild(next);
  };
  resized.observe(next);
  if (old === null) {
    $('empty').hidden = true;
    place();
    offerQuestionIn(next);
    return;
  }
  const open = Array.from(old.querySelectorAll('details')).map((d) => d.open);
  next.querySelectorAll('details').forEach((d, i) => {
    const was = open[i];
    if (was !== undefined) d.open = was;
  });
  const active = document.activeElement as HTMLElement | null;
  const focused = active !== null && old.contains(active) ? focusTarget(active) : undefined;
  resized.unobserve(old);
  const stays = c.after === undefined || (c.after === null ? old.previousElementSibling?.id === 'empty' : old.previousElementSibling?.id === c.after);
  if (stays) old.replaceWith(next);
  else {
    old.remove();
    place();
  }
  if (focused !== undefined) next.querySelector<HTMLElement>(focused)?.focus({ preventScroll: true });
  offerQuestionIn(next);
}

// Permission questions -------------------------------------------------------

/** The questions the view has offered already: each takes the focus once. */
const offered = new Set<string>();
/** When the focus last moved to a question by itself: a key pressed just then was meant for something else. */
let movedAt = -Infinity;
const keyGraceMs = 300;

function offerQuestionIn(card: Element | null): void {
  const q = card?.querySelector<HTMLElement>('.question.open');
  if (q !== null && q !== undefined) offerQuestion(q);
}

/**
 * Moves the focus to a new question, unless the person is writing a
 * message (their next keys are not answers); the log announces it either way.
 */
function offerQuestion(q: HTMLElement): void {
  if (offered.has(q.id)) return;
  offered.add(q.id);
  const writing = document.activeElement === input && !input.readOnly && input.value.trim() !== '';
  if (writing) return;
  q.scrollIntoView({ block: 'nearest' });
  q.focus({ preventScroll: true });
  movedAt = performance.now();
}

/** After an answer, the focus goes to the next open question, else to the log. */
function afterAnswer(): void {
  const next = Array.from(log.querySelectorAll<HTMLElement>('.question.open')).find((q) => q.querySelector('button:not(:disabled)') !== null);
  if (next !== undefined) {
    next.scrollIntoView({ block: 'nearest' });
    next.focus({ preventScroll: true });
  } else log.focus({ preventScroll: true });
}

function answer(b: HTMLButtonElement): void {
  const d = b.dataset;
  b.closest('.actions')?.querySelectorAll('button').forEach((x) => (x.disabled = true));
  vscode.postMessage({ type: 'permission', question: d.question ?? '', option: d.option ?? '' });
  afterAnswer();
}

// Keys answer the question that has the focus: each button shows its key.
log.addEventListener('keydown', (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey || e.repeat || e.isComposing) return;
  const q = (e.target as Element).closest<HTMLElement>('.question.open');
  if (q === null) return;
  const b = q.querySelector<HTMLButtonElement>(`button[data-key="${CSS.escape(e.key.toLowerCase())}"]`);
  if (b === null || b.disabled) return;
  e.preventDefault();
  if (performance.now() - movedAt < keyGraceMs) return;
  answer(b);
});

function header(h: HeaderView): void {
  $('state').textContent = h.label;
  $('dot').className = `dot ${h.tone}`;
  $<HTMLButtonElement>('stop').disabled = !h.canStop;
  $<HTMLButtonElement>('pause').disabled = !h.canPause;
  $<HTMLButtonElement>('resume').disabled = !h.canResume;
  const error = $('error');
  error.hidden = h.error === undefined;
  error.textContent = h.error ?? '';
  // New leaves a conversation there is: connected, or cards shown.
  $<HTMLButtonElement>('new').disabled = !h.connected && log.querySelector('article') === null;
  // Which window the agent's calls reach, when they come through a relay.
  const via = $('via');
  via.hidden = h.via === undefined;
  const down = h.viaDown === undefined ? '' : ` Now ${h.viaDown}.`;
  via.textContent = h.via === undefined ? '' : `The agent reaches this window through ${h.via}.${down}`;
  via.classList.toggle('via-down', down !== '');
  const reopen = $('reopen');
  reopen.hidden = h.reopen === undefined;
  $('reopen-text').textContent = h.reopen === undefined ? '' : `Last conversation: ${h.reopen.slice(0, 8)}`;
  input.placeholder = h.connected ? 'Message the agent (Enter to send, Shift+Enter for a new line)' : 'Describe a task to start a conversation (Enter to send)';
}

/** Render measures kept at most: the oldest go (a conversation can be long). */
const maxMeasures = 10_000;
let measures = 0;

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  const t0 = performance.now();
  switch (m.type) {
    case 'reset':
      reset(m.cards);
      header(m.header);
      break;
    case 'older':
      older(m.cards);
      break;
    case 'cards':
      for (const c of m.cards) upsert(c);
      break;
    case 'header':
      header(m.header);
      break;
    case 'history':
      conversations.innerHTML = m.html;
      break;
    case 'sent':
      send.disabled = false;
      input.readOnly = false;
      if (m.ok) {
        input.value = '';
        vscode.setState({ draft: '' });
      }
      // A question that came meanwhile keeps the focus.
      if (document.activeElement?.closest('.question.open') == null) input.focus();
      break;
  }
  // Layout now, inside the measure.
  if (stuck) log.scrollTop = log.scrollHeight;
  else void log.scrollHeight;
  if (++measures > maxMeasures) {
    performance.clearMeasures('oh-render');
    measures = 1;
  }
  performance.measure('oh-render', { start: t0, detail: { type: m.type, cards: 'cards' in m ? m.cards.length : 0 } });
});

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (text === '' || send.disabled) return;
  send.disabled = true;
  input.readOnly = true;
  vscode.postMessage({ type: 'send', text });
});

input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    form.requestSubmit();
  }
});
input.addEventListener('input', () => vscode.setState({ draft: input.value }));

document.querySelectorAll<HTMLButtonElement>('[data-steer]').forEach((b) =>
  b.addEventListener('click', () => {
    const method = b.dataset.steer;
    if (method === 'openhands/interrupt' || method === 'openhands/pause' || method === 'openhands/resume') vscode.postMessage({ type: 'steer', method });
  }),
);
$('reopen-button').addEventListener('click', () => vscode.postMessage({ type: 'reopen' }));

// Earlier conversations: History shows and hides the list, asked anew
// each time it opens; an item reopens its conversation.
const conversations = $<HTMLElement>('conversations');
const historyButton = $<HTMLButtonElement>('history');
function showHistory(show: boolean): void {
  conversations.hidden = !show;
  historyButton.setAttribute('aria-expanded', String(show));
  if (show) {
    conversations.innerHTML = '<p class="history-empty">Loading…</p>';
    vscode.postMessage({ type: 'history' });
  }
}
historyButton.addEventListener('click', () => showHistory(conversations.hidden));
$('new').addEventListener('click', () => {
  showHistory(false);
  vscode.postMessage({ type: 'newConversation' });
  input.focus();
});
conversations.addEventListener('click', (e) => {
  const b = (e.target as Element).closest<HTMLButtonElement>('button[data-action]');
  if (b === null) return;
  if (b.dataset.action === 'openConversation') {
    showHistory(false);
    vscode.postMessage({ type: 'openConversation', id: b.dataset.id ?? '' });
  } else if (b.dataset.action === 'moreConversations') {
    b.disabled = true;
    vscode.postMessage({ type: 'history', cursor: b.dataset.cursor ?? '' });
  }
});
conversations.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    showHistory(false);
    historyButton.focus();
  }
});

log.addEventListener('click', (e) => {
  const b = (e.target as Element).closest<HTMLButtonElement>('button[data-action]');
  if (b === null) return;
  const d = b.dataset;
  switch (d.action) {
    case 'copy': {
      const code = b.closest('.code-block')?.querySelector('code')?.textContent ?? '';
      vscode.postMessage({ type: 'copy', text: code });
      b.textContent = 'Copied';
      setTimeout(() => (b.textContent = 'Copy'), 1500);
      return;
    }
    case 'openDiff':
    case 'revert':
      vscode.postMessage({ type: d.action, card: d.card ?? '', index: Number(d.index ?? 0) });
      return;
    case 'openFile':
      vscode.postMessage({ type: 'openFile', path: d.path ?? '', ...(d.line === undefined ? {} : { line: Number(d.line) }) });
      return;
    case 'permission':
      answer(b);
      return;
    case 'showOutput':
      vscode.postMessage({ type: 'showOutput', card: d.card ?? '' });
      return;
  }
});

vscode.postMessage({ type: 'ready' });
