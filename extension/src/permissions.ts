// Whether an agent's action needs the user's permission, by the
// openhands.permissions.mode setting and what the user already allowed.
import type { PermissionOption } from './protocol.gen';

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
