// The messages between the conversation view's webview and the extension
// host. Shared by both sides; no vscode, no DOM.
import type { HeaderView } from '../cards';
import type { BridgeRequests } from '../protocol.gen';

export type { HeaderView };

/** A card's HTML; after is the card it follows (null: the first), for a card added or moved. */
export interface CardHtml {
  id: string;
  html: string;
  after?: string | null;
}

/** From the extension to the webview. */
export type ToWebview =
  /**
   * Every card anew, after the webview (re)loaded or the conversation
   * changed: the newest ones; 'older' messages bring the rest, newest
   * first, before any other message.
   */
  | { type: 'reset'; cards: CardHtml[]; header: HeaderView }
  /** Cards older than all the view has, to go above them. */
  | { type: 'older'; cards: CardHtml[] }
  /** Cards added (after the card named), changed (replaced in place) or moved. */
  | { type: 'cards'; cards: CardHtml[] }
  | { type: 'header'; header: HeaderView }
  /** The earlier conversations' list, rendered (history.ts). */
  | { type: 'history'; html: string }
  /** The host took the message: the composer may clear and enable. */
  | { type: 'sent'; ok: boolean };

/** The bridge's methods the view's buttons call. */
export type SteerMethod = Extract<keyof BridgeRequests, 'openhands/interrupt' | 'openhands/pause' | 'openhands/resume'>;

/** From the webview to the extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'steer'; method: SteerMethod }
  | { type: 'reopen' }
  /** List this workspace's earlier conversations: the first page, or the one at cursor. */
  | { type: 'history'; cursor?: string }
  /** Reopen an earlier conversation, its history replayed. */
  | { type: 'openConversation'; id: string }
  /** Leave this conversation: the next message starts a new one. */
  | { type: 'newConversation' }
  | { type: 'copy'; text: string }
  | { type: 'openDiff'; card: string; index: number }
  | { type: 'revert'; card: string; index: number }
  | { type: 'openFile'; path: string; line?: number }
  /** The person's answer to a permission question: the option's kind. */
  | { type: 'permission'; question: string; option: string }
  /** Open all of a card's output in an editor. */
  | { type: 'showOutput'; card: string };
