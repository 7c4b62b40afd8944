// The conversation view's model: ACP session updates (the bridge's
// openhands/did_update_conversation) reduced into cards — messages,
// thoughts, errors, tool calls, plans — plus the permission questions
// asked inline. Replays of a conversation's events rebuild the same
// cards; a new conversation id starts over. Pure: no vscode, no DOM.
import type { Chunk, Location, Plan, PlanEntry, ToolCall, ToolCallContent, Update } from './protocol.gen';

export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

const statuses: readonly string[] = ['pending', 'in_progress', 'completed', 'failed'] satisfies ToolStatus[];

function isToolStatus(s: string): s is ToolStatus {
  return statuses.includes(s);
}

export interface PermissionOptionView {
  optionId: string;
  name: string;
  kind: string;
}

export type Card =
  | { id: string; kind: 'user' | 'agent' | 'thought' | 'error'; text: string; messageId?: string }
  | {
      id: string;
      kind: 'tool';
      toolCallId: string;
      title: string;
      toolKind: string;
      status: ToolStatus;
      /** The bridge's tool: terminal, file_editor, task_tracker, … */
      tool?: string;
      rawInput?: unknown;
      rawOutput?: unknown;
      locations: Location[];
      content: ToolCallContent[];
    }
  | { id: string; kind: 'plan'; entries: PlanEntry[] }
  | {
      id: string;
      kind: 'permission';
      title: string;
      toolKind: string;
      agent: string;
      options: PermissionOptionView[];
      /** The chosen option's name, "Dismissed", or undefined while open. */
      answer?: string;
    };

/** The message id an update carries in the bridge's _meta.ohBridge.messageId. */
function messageIdOf(u: Update): string | undefined {
  const id = u._meta?.ohBridge.messageId;
  return id === '' ? undefined : id;
}

function chunkText(u: Chunk): string {
  return u.content.type === 'text' ? u.content.text : `[${u.content.type}]`;
}

/**
 * Transcript holds the cards of one conversation. apply() and the
 * permission methods return the ids of the cards they added or changed,
 * for the view to redraw just those.
 */
export class Transcript {
  private cardList: Card[] = [];
  private readonly byId = new Map<string, Card>();
  private readonly tools = new Map<string, string>();
  /** Updates with an event id already seen (as JSON): a replay repeats them. */
  private readonly seen = new Set<string>();
  private next = 0;
  private conversation: string | undefined;

  get cards(): readonly Card[] {
    return this.cardList;
  }

  get conversationId(): string | undefined {
    return this.conversation;
  }

  card(id: string): Card | undefined {
    return this.byId.get(id);
  }

  /** Starts over, for another conversation. Open permission questions stay. */
  reset(conversationId: string | undefined): void {
    const open = this.cardList.filter((c) => c.kind === 'permission' && c.answer === undefined);
    this.cardList = [];
    this.byId.clear();
    this.tools.clear();
    this.seen.clear();
    this.conversation = conversationId;
    for (const c of open) this.push(c);
  }

  /**
   * Follows the conversation id of the bridge's status: a different one
   * starts over. Returns whether it did.
   */
  follow(conversationId: string | undefined): boolean {
    if (conversationId === undefined || conversationId === '' || conversationId === this.conversation) return false;
    this.reset(conversationId);
    return true;
  }

  /** Applies one openhands/did_update_conversation notification. */
  apply(conversationId: string, u: Update): string[] {
    const reset = conversationId !== '' && conversationId !== this.conversation;
    if (reset) this.reset(conversationId);
    // The bridge replays a conversation's events when it attaches again:
    // an update with an event's id that was seen already changes nothing.
    if (messageIdOf(u) !== undefined) {
      const key = JSON.stringify(u);
      if (this.seen.has(key)) return reset ? ['*'] : [];
      this.seen.add(key);
    }
    const changed = this.reduce(u);
    return reset ? ['*'] : changed;
  }

  private reduce(u: Update): string[] {
    switch (u.sessionUpdate) {
      case 'user_message_chunk':
        return this.chunk('user', u);
      case 'agent_message_chunk':
        return this.chunk(u._meta?.ohBridge.kind === 'error' ? 'error' : 'agent', u);
      case 'agent_thought_chunk':
        return this.chunk('thought', u);
      case 'tool_call':
        return this.toolCall(u, true);
      case 'tool_call_update':
        return this.toolCall(u, false);
      case 'plan':
        return this.plan(u);
    }
  }

  private chunk(kind: 'user' | 'agent' | 'thought' | 'error', u: Chunk): string[] {
    const text = chunkText(u);
    const messageId = messageIdOf(u);
    const last = this.cardList[this.cardList.length - 1];
    if (last !== undefined && last.kind === kind && messageId !== undefined && 'messageId' in last && last.messageId === messageId) {
      last.text += text;
      return [last.id];
    }
    const card: Card = { id: this.newId(), kind, text, ...(messageId === undefined ? {} : { messageId }) };
    this.push(card);
    return [card.id];
  }

  private toolCall(u: ToolCall, create: boolean): string[] {
    const known = this.tools.get(u.toolCallId);
    let card = known === undefined ? undefined : this.byId.get(known);
    const tool = u._meta?.ohBridge.tool;
    if (card === undefined || card.kind !== 'tool') {
      // An update for a call never announced makes its card too.
      card = {
        id: this.newId(),
        kind: 'tool',
        toolCallId: u.toolCallId,
        title: u.title ?? u.toolCallId,
        toolKind: u.kind ?? 'other',
        status: 'pending',
        locations: [],
        content: [],
      };
      this.tools.set(u.toolCallId, card.id);
      this.push(card);
    } else if (create) {
      // A replayed tool_call: it starts the call over, its updates follow.
      card.content = [];
      delete card.rawOutput;
    }
    if (u.title !== undefined) card.title = u.title;
    if (u.kind !== undefined) card.toolKind = u.kind;
    if (u.status !== undefined && isToolStatus(u.status)) card.status = u.status;
    if (u.rawInput !== undefined && u.rawInput !== null) card.rawInput = u.rawInput;
    if (u.rawOutput !== undefined && u.rawOutput !== null) card.rawOutput = u.rawOutput;
    if (u.content !== undefined) card.content = u.content;
    if (u.locations !== undefined) card.locations = u.locations;
    if (tool !== undefined && tool !== '') card.tool = tool;
    return [card.id];
  }

  private plan(u: Plan): string[] {
    const entries = u.entries ?? [];
    const last = this.cardList[this.cardList.length - 1];
    if (last?.kind === 'plan') {
      last.entries = entries;
      return [last.id];
    }
    const previous = [...this.cardList].reverse().find((c) => c.kind === 'plan');
    if (previous !== undefined && JSON.stringify(previous.entries) === JSON.stringify(entries)) return [];
    const card: Card = { id: this.newId(), kind: 'plan', entries };
    this.push(card);
    return [card.id];
  }

  /** Adds an open permission question; its id is the card's. */
  ask(q: { title: string; toolKind: string; agent: string; options: PermissionOptionView[] }): string {
    const card: Card = { id: this.newId(), kind: 'permission', ...q };
    this.push(card);
    return card.id;
  }

  /** Records the answer to a permission question (the first one only). */
  answer(id: string, answer: string): string[] {
    const card = this.byId.get(id);
    if (card?.kind !== 'permission' || card.answer !== undefined) return [];
    card.answer = answer;
    return [id];
  }

  /** The exit code of a finished command: a number, null when unknown, undefined while it runs. */
  static exitCode(card: Card): number | null | undefined {
    if (card.kind !== 'tool') return undefined;
    if (card.rawOutput !== undefined) {
      const out = card.rawOutput;
      const code = typeof out === 'object' && out !== null && 'exitCode' in out ? out.exitCode : undefined;
      return typeof code === 'number' ? code : null;
    }
    return card.status === 'completed' || card.status === 'failed' ? null : undefined;
  }

  private push(card: Card): void {
    this.cardList.push(card);
    this.byId.set(card.id, card);
  }

  private newId(): string {
    return `c${++this.next}`;
  }
}
