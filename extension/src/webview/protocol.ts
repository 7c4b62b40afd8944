// The messages between the conversation view's webview and the extension
// host. Shared by both sides; no vscode, no DOM.
import type { HeaderView } from '../cards';
import type { BridgeRequests } from '../protocol.gen';

export type { HeaderView };

/** From the extension to the webview. */
export type ToWebview =
  /** Every card, after the webview (re)loaded or the conversation changed. */
  | { type: 'reset'; cards: { id: string; html: string }[]; header: HeaderView }
  /** One card added (appended) or changed (replaced in place). */
  | { type: 'upsert'; id: string; html: string }
  | { type: 'header'; header: HeaderView }
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
  | { type: 'copy'; text: string }
  | { type: 'openDiff'; card: string; index: number }
  | { type: 'revert'; card: string; index: number }
  | { type: 'openFile'; path: string; line?: number }
  | { type: 'permission'; card: string; option: string };
