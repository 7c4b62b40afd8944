// The conversation view's model: ACP session updates (the bridge's
// openhands/did_update_conversation) reduced into cards — messages,
// thoughts, errors, tool calls, plans — plus the permission questions
// asked inline. Replays of a conversation's events rebuild the same
// cards; a new conversation id starts over. Pure: no vscode, no DOM.

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** ACP ToolCallContent, as the bridge sends it. */
export type ToolContent =
  | { type: 'content'; content: { type: string; text?: string } }
  | { type: 'diff'; path: string; oldText: string | null; newText: string }
  | { type: 'terminal'; terminalId: string };

export interface Location {
  path: string;
  line?: number | null;
}

export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

export interface PlanEntry {
  content: string;
  priority: 'high' | 'medium' | 'low';
  status: 'pending' | 'in_progress' | 'completed';
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
      content: ToolContent[];
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

/** The message id an update carries: ACP's messageId, else the bridge's _meta.ohBridge.messageId. */
function messageIdOf(u: Json): string | undefined {
  return str(u.messageId) ?? str(obj(obj(u._meta).ohBridge).messageId);
}

function chunkText(u: Json): string {
  const c = obj(u.content);
  if (c.type === 'text') return str(c.text) ?? '';
  if (c.type === 'resource_link') return str(c.uri) ?? '';
  return typeof c.type === 'string' ? `[${c.type}]` : '';
}

function toolContent(v: unknown): ToolContent[] {
  if (!Array.isArray(v)) return [];
  const out: ToolContent[] = [];
  for (const item of v) {
    const c = obj(item);
    if (c.type === 'content') out.push({ type: 'content', content: { type: str(obj(c.content).type) ?? 'text', ...textField(obj(c.content).text) } });
    else if (c.type === 'diff' && typeof c.path === 'string' && typeof c.newText === 'string') {
      out.push({ type: 'diff', path: c.path, oldText: typeof c.oldText === 'string' ? c.oldText : null, newText: c.newText });
    } else if (c.type === 'terminal' && typeof c.terminalId === 'string') out.push({ type: 'terminal', terminalId: c.terminalId });
  }
  return out;
}

const textField = (t: unknown): { text?: string } => (typeof t === 'string' ? { text: t } : {});

function locations(v: unknown): Location[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((l) => {
    const o = obj(l);
    return typeof o.path === 'string' ? [{ path: o.path, ...(typeof o.line === 'number' ? { line: o.line } : {}) }] : [];
  });
}

const statuses: ReadonlySet<string> = new Set(['pending', 'in_progress', 'completed', 'failed']);

function planEntries(v: unknown): PlanEntry[] {
  if (!Array.isArray(v)) return [];
  return v.map((e) => {
    const o = obj(e);
    return {
      content: str(o.content) ?? '',
      priority: o.priority === 'high' || o.priority === 'low' ? o.priority : 'medium',
      status: o.status === 'in_progress' || o.status === 'completed' ? o.status : 'pending',
    };
  });
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
  apply(conversationId: string, update: unknown): string[] {
    const reset = conversationId !== '' && conversationId !== this.conversation;
    if (reset) this.reset(conversationId);
    const u = obj(update);
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

  private reduce(u: Json): string[] {
    switch (u.sessionUpdate) {
      case 'user_message_chunk':
        return this.chunk('user', u);
      case 'agent_message_chunk':
        return this.chunk(obj(obj(u._meta).ohBridge).kind === 'error' ? 'error' : 'agent', u);
      case 'agent_thought_chunk':
        return this.chunk('thought', u);
      case 'tool_call':
        return this.toolCall(u, true);
      case 'tool_call_update':
        return this.toolCall(u, false);
      case 'plan':
        return this.plan(u);
      default:
        return [];
    }
  }

  private chunk(kind: 'user' | 'agent' | 'thought' | 'error', u: Json): string[] {
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

  private toolCall(u: Json, create: boolean): string[] {
    const toolCallId = str(u.toolCallId);
    if (toolCallId === undefined) return [];
    const known = this.tools.get(toolCallId);
    let card = known === undefined ? undefined : this.byId.get(known);
    if (card === undefined || card.kind !== 'tool') {
      // An update for a call never announced makes its card too.
      const meta = obj(obj(u._meta).ohBridge);
      card = {
        id: this.newId(),
        kind: 'tool',
        toolCallId,
        title: str(u.title) ?? toolCallId,
        toolKind: str(u.kind) ?? 'other',
        status: 'pending',
        ...(typeof meta.tool === 'string' ? { tool: meta.tool } : {}),
        locations: [],
        content: [],
      };
      this.tools.set(toolCallId, card.id);
      this.push(card);
    } else if (create) {
      // A replayed tool_call: it starts the call over, its updates follow.
      card.content = [];
      delete card.rawOutput;
    }
    if (typeof u.title === 'string') card.title = u.title;
    if (typeof u.kind === 'string') card.toolKind = u.kind;
    if (typeof u.status === 'string' && statuses.has(u.status)) card.status = u.status as ToolStatus;
    if ('rawInput' in u && u.rawInput !== null) card.rawInput = u.rawInput;
    if ('rawOutput' in u && u.rawOutput !== null) card.rawOutput = u.rawOutput;
    if (Array.isArray(u.content)) card.content = toolContent(u.content);
    if (Array.isArray(u.locations)) card.locations = locations(u.locations);
    const tool = obj(obj(u._meta).ohBridge).tool;
    if (typeof tool === 'string') card.tool = tool;
    return [card.id];
  }

  private plan(u: Json): string[] {
    const entries = planEntries(u.entries);
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
      const code = obj(card.rawOutput).exitCode;
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
