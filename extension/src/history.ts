// The conversation view's list of earlier conversations: this workspace's
// conversations on the agent-server, as the bridge's
// openhands/list_conversations answers them (the search ACP's session/list
// uses), each a button that reopens it, the open one marked. Pure: no
// vscode, no DOM; everything the server sent is escaped.
import { escapeHtml as esc } from './markdown';
import type { ConversationSummary } from './protocol.gen';

/** What the list shows: a page of conversations, or why there is none. */
export interface HistoryView {
  conversations: readonly ConversationSummary[];
  /** The cursor of the next page, when there is one. */
  next?: string | undefined;
  /** The conversation the view shows now. */
  current?: string | undefined;
  /** The listing failed: the bridge's words. */
  error?: string;
}

/** "just now", "5 minutes ago", "yesterday", or the date. */
export function ago(iso: string | undefined, now: number): string {
  if (iso === undefined || iso === '') return '';
  // The agent-server writes local times without a zone: read them as local.
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return m === 1 ? '1 minute ago' : `${m} minutes ago`;
  const h = Math.round(m / 60);
  if (h < 24) return h === 1 ? '1 hour ago' : `${h} hours ago`;
  const d = Math.round(h / 24);
  if (d === 1) return 'yesterday';
  if (d < 7) return `${d} days ago`;
  return new Date(t).toISOString().slice(0, 10);
}

/** A conversation's name: its title, or its id's start until the server titles it. */
export function conversationName(c: ConversationSummary): string {
  const title = (c.title ?? '').trim();
  return title === '' ? `Untitled conversation ${c.conversationId.slice(0, 8)}` : title;
}

/** The list's items (appended to the ones shown when more is true), and its "More" button. */
export function renderHistory(v: HistoryView, now: number): string {
  if (v.error !== undefined) return `<p class="history-error" role="alert">${esc(v.error)}</p>`;
  const items = v.conversations.map((c) => {
    const open = c.conversationId === v.current;
    const when = ago(c.updatedAt, now);
    return `<li><button type="button" class="history-item${open ? ' open' : ''}" data-action="openConversation" data-id="${esc(c.conversationId)}"` +
      `${open ? ' aria-current="true"' : ''} title="${esc(c.conversationId)}"><span class="history-title">${esc(conversationName(c))}</span>` +
      `<span class="history-when">${open ? 'open now' : esc(when)}</span></button></li>`;
  });
  const more = v.next === undefined || v.next === '' ? '' :
    `<button type="button" class="secondary history-more" data-action="moreConversations" data-cursor="${esc(v.next)}">More</button>`;
  if (items.length === 0 && more === '') return '<p class="history-empty">No earlier conversations in this workspace on this server.</p>';
  return `<ul class="history-list">${items.join('')}</ul>${more}`;
}
