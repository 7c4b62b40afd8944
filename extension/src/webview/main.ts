// The conversation view's script, inside the webview: it puts the cards
// the extension rendered into the log, keeps the header in step, and turns
// clicks and keys into messages to the extension. It builds no HTML of its
// own from conversation text: the extension escapes and renders it.
import type { FromWebview, HeaderView, ToWebview } from './protocol';

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

/** Replaces a card, keeping which of its <details> the user opened or closed. */
function upsert(id: string, html: string): void {
  const next = element(html);
  if (next === null) return;
  const old = document.getElementById(id);
  if (old === null) {
    $('empty').hidden = true;
    log.appendChild(next);
    return;
  }
  const open = Array.from(old.querySelectorAll('details')).map((d) => d.open);
  next.querySelectorAll('details').forEach((d, i) => {
    const was = open[i];
    if (was !== undefined) d.open = was;
  });
  const focused = old.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.action : undefined;
  old.replaceWith(next);
  if (focused !== undefined) next.querySelector<HTMLElement>(`[data-action="${focused}"]`)?.focus();
}

function header(h: HeaderView): void {
  $('state').textContent = h.label;
  $('dot').className = `dot ${h.tone}`;
  $<HTMLButtonElement>('stop').disabled = !h.canStop;
  $<HTMLButtonElement>('pause').disabled = !h.canPause;
  $<HTMLButtonElement>('resume').disabled = !h.canResume;
  const error = $('error');
  error.hidden = h.error === undefined;
  error.textContent = h.error ?? '';
  const reopen = $('reopen');
  reopen.hidden = h.reopen === undefined;
  $('reopen-text').textContent = h.reopen === undefined ? '' : `Last conversation: ${h.reopen.slice(0, 8)}`;
  input.placeholder = h.connected ? 'Message the agent (Enter to send, Shift+Enter for a new line)' : 'Describe a task to start a conversation (Enter to send)';
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  const stick = nearBottom();
  switch (m.type) {
    case 'reset':
      log.querySelectorAll('article').forEach((a) => a.remove());
      $('empty').hidden = m.cards.length > 0;
      for (const c of m.cards) upsert(c.id, c.html);
      header(m.header);
      break;
    case 'upsert':
      upsert(m.id, m.html);
      break;
    case 'header':
      header(m.header);
      break;
    case 'sent':
      send.disabled = false;
      input.readOnly = false;
      if (m.ok) {
        input.value = '';
        vscode.setState({ draft: '' });
      }
      input.focus();
      break;
  }
  if (stick) log.scrollTop = log.scrollHeight;
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
      b.closest('.actions')?.querySelectorAll('button').forEach((x) => (x.disabled = true));
      vscode.postMessage({ type: 'permission', card: d.card ?? '', option: d.option ?? '' });
      return;
  }
});

vscode.postMessage({ type: 'ready' });
