// The conversation view's model: ACP session updates (the bridge's
// openhands/did_update_conversation) reduced into cards — messages,
// thoughts, errors, tool calls, plans — and the permission questions,
// each on the card of the tool call it asks about. Replays of a
// conversation's events rebuild the same cards; a new conversation id
// starts over. Pure: no vscode, no DOM.
import { toolCards, type CardKind, type Chunk, type FileEditorArgs, type Location, type OptionKind, type Plan, type PlanEntry, type ToolCall, type ToolCallContent, type Update } from './protocol.gen';

export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

const statuses: readonly string[] = ['pending', 'in_progress', 'completed', 'failed'] satisfies ToolStatus[];

function isToolStatus(s: string): s is ToolStatus {
  return statuses.includes(s);
}

export interface PermissionOptionView {
  optionId: string;
  name: string;
  kind: OptionKind;
}

/** How a question was answered: an option's kind, or dismissed (the modal closed, the request went away). */
export type Answer = OptionKind | 'dismissed';

/**
 * A permission question, on the card of the tool call it asks about.
 * While answer is undefined it waits for the person.
 */
export interface Question {
  /** The question's own id: the view answers it by this. */
  id: string;
  /** Who asks ("OpenHands", an MCP client's name and version). */
  agent: string;
  /** What the agent wants to do, as the request words it: "run `ls`". */
  title: string;
  options: PermissionOptionView[];
  answer?: Answer;
}

/** What session/request_permission says about the call, for Transcript.ask. */
export interface QuestionRequest {
  toolCallId: string;
  title: string;
  toolKind: string;
  agent: string;
  options: PermissionOptionView[];
  rawInput?: unknown;
}

/**
 * An answered question, kept across window reloads: the conversation's
 * events replay its calls, but not the person's answers to the bridge.
 */
export interface KeptAnswer {
  agent: string;
  title: string;
  answer: Answer;
}

/** Where a Transcript finds a conversation's kept answers, by tool call id. */
export type AnswerStore = (conversationId: string) => Readonly<Record<string, KeptAnswer>> | undefined;

export type Card =
  | { id: string; kind: 'user' | 'agent' | 'thought' | 'error'; text: string; messageId?: string }
  | {
      id: string;
      kind: 'tool';
      toolCallId: string;
      title: string;
      toolKind: string;
      status: ToolStatus;
      /** The bridge's tool: terminal, file_editor, task_tracker, … (cardKindOf says how it is shown) */
      tool?: string;
      rawInput?: unknown;
      rawOutput?: unknown;
      locations: Location[];
      content: ToolCallContent[];
      /** The last permission question about this call. */
      question?: Question;
      /** Made by a question: no update has named the call yet. */
      askedOnly?: boolean;
    }
  | { id: string; kind: 'plan'; entries: PlanEntry[] };

export type ToolCard = Extract<Card, { kind: 'tool' }>;

/**
 * How a tool's calls are shown, as its declaration in the bridge says
 * (protocol.gen.ts's toolCards): undefined for a tool the bridge does not
 * declare (finish, think, an agent's own).
 */
export function cardKindOf(tool: string | undefined): CardKind | undefined {
  return tool !== undefined && Object.hasOwn(toolCards, tool) ? toolCards[tool as keyof typeof toolCards] : undefined;
}

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
  /** Question id → the id of the card it is on. */
  private readonly questions = new Map<string, string>();
  /** Updates with an event id already seen (a hash of their JSON): a replay repeats them. */
  private readonly seen = new Set<string>();
  private next = 0;
  private nextQuestion = 0;
  private conversation: string | undefined;
  /** The kept answers of the conversation followed, read once from the store. */
  private kept: Readonly<Record<string, KeptAnswer>> | undefined;

  /** store: the answers kept from earlier runs, shown on their calls' cards as these replay. */
  constructor(private readonly store?: AnswerStore) {}

  get cards(): readonly Card[] {
    return this.cardList;
  }

  get conversationId(): string | undefined {
    return this.conversation;
  }

  card(id: string): Card | undefined {
    return this.byId.get(id);
  }

  /** The id of the card before this one, null for the first: where the view puts it. */
  before(id: string): string | null {
    const card = this.byId.get(id);
    const i = card === undefined ? -1 : this.cardList.lastIndexOf(card);
    return i > 0 ? (this.cardList[i - 1]?.id ?? null) : null;
  }

  /** The card a question is on. */
  questionCard(questionId: string): ToolCard | undefined {
    const card = this.byId.get(this.questions.get(questionId) ?? '');
    return card?.kind === 'tool' ? card : undefined;
  }

  /** The cards whose question waits for an answer. */
  get openQuestions(): ToolCard[] {
    return this.cardList.filter((c): c is ToolCard => c.kind === 'tool' && c.question !== undefined && c.question.answer === undefined);
  }

  /** Starts over, for another conversation. Cards with an open question stay. */
  reset(conversationId: string | undefined): void {
    const open = this.openQuestions;
    this.cardList = [];
    this.byId.clear();
    this.tools.clear();
    this.questions.clear();
    this.seen.clear();
    this.conversation = conversationId;
    this.kept = undefined;
    for (const c of open) {
      this.push(c);
      this.tools.set(c.toolCallId, c.id);
      if (c.question !== undefined) this.questions.set(c.question.id, c.id);
    }
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
      const key = fingerprint(JSON.stringify(u));
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
    let card = known === undefined ? this.askedAbout(u) : this.byId.get(known);
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
    } else if (card.askedOnly === true) {
      // The question came first: the card moves to where the call is in
      // the conversation, and answers to the conversation's id too.
      delete card.askedOnly;
      this.tools.set(u.toolCallId, card.id);
      card.toolCallId = u.toolCallId;
      this.cardList.splice(this.cardList.indexOf(card), 1);
      this.cardList.push(card);
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
    if (card.question === undefined) this.restoreAnswer(card);
    return [card.id];
  }

  /** Puts back the answer the person gave about this call in an earlier run, if one was kept. */
  private restoreAnswer(card: ToolCard): void {
    if (this.conversation === undefined || this.store === undefined) return;
    this.kept ??= this.store(this.conversation) ?? {};
    const k = Object.prototype.hasOwnProperty.call(this.kept, card.toolCallId) ? this.kept[card.toolCallId] : undefined;
    if (k === undefined) return;
    card.question = { id: `q${++this.nextQuestion}`, agent: k.agent, title: k.title, options: [], answer: k.answer };
  }

  /**
   * The answered questions of this conversation, by their call's id, to
   * keep: all but those still on a card no update named (their id is the
   * bridge's own, which a replay does not repeat).
   */
  answers(): Record<string, KeptAnswer> {
    const out: Record<string, KeptAnswer> = {};
    for (const c of this.cardList) {
      const q = c.kind === 'tool' && c.askedOnly !== true ? c.question : undefined;
      if (c.kind === 'tool' && q?.answer !== undefined) out[c.toolCallId] = { agent: q.agent, title: q.title, answer: q.answer };
    }
    return out;
  }

  /**
   * The card a question made for a call no update had named, when this
   * update announces a call with the same arguments. The bridge names the
   * call in its question by the conversation's id once the agent-server's
   * event for it has come; a question that comes first (a conversation's
   * first call, before its events) names it by the bridge's own id.
   */
  private askedAbout(u: ToolCall): ToolCard | undefined {
    if (u.rawInput === undefined || u.rawInput === null) return undefined;
    const key = canonicalJson(u.rawInput);
    return this.cardList.find((c): c is ToolCard => c.kind === 'tool' && c.askedOnly === true && c.rawInput !== undefined && canonicalJson(c.rawInput) === key);
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

  /**
   * Puts a permission question on the card of the call it names, making
   * the card when no update named the call yet. Returns the question's id
   * and the card's.
   */
  ask(q: QuestionRequest): { questionId: string; cardId: string } {
    const known = this.byId.get(this.tools.get(q.toolCallId) ?? '');
    let card: ToolCard;
    if (known?.kind === 'tool') {
      card = known;
      if (card.rawInput === undefined && q.rawInput !== undefined && q.rawInput !== null) card.rawInput = q.rawInput;
    } else {
      card = {
        id: this.newId(),
        kind: 'tool',
        toolCallId: q.toolCallId,
        title: capitalize(q.title),
        toolKind: q.toolKind,
        status: 'pending',
        locations: [],
        content: [],
        askedOnly: true,
        ...(q.rawInput === undefined || q.rawInput === null ? {} : { rawInput: q.rawInput }),
      };
      this.tools.set(q.toolCallId, card.id);
      this.push(card);
    }
    if (card.question !== undefined) this.questions.delete(card.question.id);
    const questionId = `q${++this.nextQuestion}`;
    card.question = { id: questionId, agent: q.agent, title: q.title, options: q.options };
    this.questions.set(questionId, card.id);
    return { questionId, cardId: card.id };
  }

  /** Records the answer to a permission question (the first one only); returns the card to redraw. */
  answer(questionId: string, answer: Answer): string[] {
    const card = this.questionCard(questionId);
    const q = card?.question;
    if (card === undefined || q === undefined || q.id !== questionId || q.answer !== undefined) return [];
    q.answer = answer;
    return [card.id];
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

/**
 * A short key for a long text: its length and a 53-bit hash (cyrb53), so
 * the set of seen updates does not keep their JSON, which holds whole
 * outputs.
 */
export function fingerprint(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${text.length}:${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}`;
}

/** JSON with the keys of every object sorted: the same arguments give the same text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(Object.getOwnPropertyDescriptor(v, k)?.value)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export type DiffContent = Extract<ToolCallContent, { type: 'diff' }>;

/** A string field of a call's arguments. */
export function rawField(raw: unknown, key: keyof FileEditorArgs | (string & {})): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const v: unknown = Object.getOwnPropertyDescriptor(raw, key)?.value;
  return typeof v === 'string' ? v : undefined;
}

/**
 * The change an edit's arguments ask for (file_editor's create,
 * str_replace, insert), as a diff of the snippet: what the card shows
 * before the edit runs.
 */
export function proposedDiff(raw: unknown): DiffContent | undefined {
  const path = rawField(raw, 'path');
  if (path === undefined || path === '') return undefined;
  const newStr = rawField(raw, 'new_str') ?? '';
  switch (rawField(raw, 'command')) {
    case 'create':
      return { type: 'diff', path, oldText: null, newText: rawField(raw, 'file_text') ?? '' };
    case 'str_replace': {
      const old = rawField(raw, 'old_str');
      return old === undefined ? undefined : { type: 'diff', path, oldText: old, newText: newStr };
    }
    case 'insert':
      return { type: 'diff', path, oldText: '', newText: newStr };
    default:
      return undefined;
  }
}

/**
 * The diffs an edit's card shows, each with its index in the card's
 * content: the diffs the call's updates carry, else the one its arguments
 * propose (index -1).
 */
export function editDiffs(card: ToolCard): { diff: DiffContent; index: number }[] {
  const diffs = card.content.flatMap((c, index) => (c.type === 'diff' ? [{ diff: c, index }] : []));
  if (diffs.length > 0) return diffs;
  const proposed = card.toolKind === 'edit' || cardKindOf(card.tool) === 'file' ? proposedDiff(card.rawInput) : undefined;
  return proposed === undefined ? [] : [{ diff: proposed, index: -1 }];
}

/** The text a tool call's updates carry (a command's output), all of it. */
export function outputText(card: ToolCard): string {
  return card.content.flatMap((c) => (c.type === 'content' && c.content !== null ? [c.content.text] : [])).join('\n');
}
