// Whether an agent's action needs the user's permission, by the
// openhands.permissions.mode setting and what the user already allowed;
// and the words and keys of the question and its answer.
import type { OptionKind, PermissionOption } from './protocol.gen';

export type PermissionMode = 'ask' | 'allowReads' | 'allowAll';

/** Tool kinds, as ACP names them. */
export type ToolKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'switch_mode' | 'other';

const readOnlyKinds: ReadonlySet<string> = new Set(['read', 'search', 'think']);

export type Decision = 'allow' | 'ask';

/**
 * decide returns "allow" when no question is needed. alwaysAllowed holds
 * the kinds the user answered "allow always" for in this session.
 */
export function decide(mode: PermissionMode, kind: string, alwaysAllowed: ReadonlySet<string>): Decision {
  if (mode === 'allowAll') return 'allow';
  if (mode === 'allowReads' && readOnlyKinds.has(kind)) return 'allow';
  if (alwaysAllowed.has(kind)) return 'allow';
  return 'ask';
}

export type { PermissionOption } from './protocol.gen';

export type PermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

/** The option the user's choice stands for (undefined: dismissed). */
export function outcomeFor(options: readonly PermissionOption[], chosen: PermissionOption['kind'] | undefined): PermissionOutcome {
  const option = chosen === undefined ? undefined : options.find((o) => o.kind === chosen);
  return option === undefined ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: option.optionId };
}

/** The option that allows without asking, for decide() == "allow". */
export function allowOption(options: readonly PermissionOption[]): PermissionOutcome {
  const option = options.find((o) => o.kind === 'allow_once') ?? options.find((o) => o.kind === 'allow_always');
  return option === undefined ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: option.optionId };
}

/** What a kind of action is called in "Always allow …": the plural the person reads. */
export function kindNoun(kind: string): string {
  const nouns: Record<string, string> = {
    execute: 'commands',
    edit: 'edits',
    read: 'reads',
    delete: 'deletions',
    move: 'moves',
    search: 'searches',
    fetch: 'fetches',
  };
  return nouns[kind] ?? `${kind === 'other' || kind === '' ? 'other' : kind} actions`;
}

/** A button's words for an option, for a call of this kind. */
export function optionLabel(option: OptionKind, kind: string): string {
  switch (option) {
    case 'allow_once':
      return 'Allow once';
    case 'allow_always':
      return `Always allow ${kindNoun(kind)}`;
    case 'reject_once':
      return 'Reject';
    case 'reject_always':
      return `Always reject ${kindNoun(kind)}`;
  }
}

/** What the card says once the question is answered. */
export function answerWords(answer: OptionKind | 'dismissed', kind: string): string {
  switch (answer) {
    case 'allow_once':
      return 'You allowed it once';
    case 'allow_always':
      return `You allowed it, and always for ${kindNoun(kind)}`;
    case 'reject_once':
      return 'You rejected it';
    case 'reject_always':
      return `You rejected it, and always for ${kindNoun(kind)}`;
    case 'dismissed':
      return 'Dismissed: not allowed';
  }
}

/** Whether an answer lets the call run. */
export function allows(answer: OptionKind | 'dismissed' | undefined): boolean {
  return answer === 'allow_once' || answer === 'allow_always';
}

/** The key that picks each option while the question has focus (no modifier). */
export const optionKeys: Readonly<Record<OptionKind, string>> = { allow_once: 'y', allow_always: 'a', reject_once: 'n', reject_always: 'x' };
