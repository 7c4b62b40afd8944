// Unit tests of the permission question on a tool call's card: which card
// it goes on (by the tool call id the request names, or a card of its
// own), what the card shows while it waits (the command, or the diff the
// edit proposes, the buttons and their keys) and after (the answer), and
// the words of options and answers.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { outputLimit, renderCard } from '../src/cards';
import { answerWords, kindNoun, optionKeys, optionLabel } from '../src/permissions';
import { Transcript, editDiffs, fingerprint, proposedDiff, type Card, type PermissionOptionView, type QuestionRequest } from '../src/transcript';
import type { ContentBlock, OptionKind, Update } from '../src/protocol.gen';

const text = (t: string): ContentBlock => ({ type: 'text', text: t });

/** The options the bridge offers, named as the extension names them. */
function options(kind: string): PermissionOptionView[] {
  const kinds: OptionKind[] = ['allow_once', 'allow_always', 'reject_once'];
  return kinds.map((k) => ({ optionId: `id-${k}`, name: optionLabel(k, kind), kind: k }));
}

function request(over: Partial<QuestionRequest> & { toolCallId: string }): QuestionRequest {
  return { title: 'run `ls`', toolKind: 'execute', agent: 'OpenHands', options: options(over.toolKind ?? 'execute'), ...over };
}

const command = (id: string, cmd: string): Update => ({
  sessionUpdate: 'tool_call', toolCallId: id, title: `Run \`${cmd}\``, kind: 'execute', status: 'pending', rawInput: { command: cmd }, _meta: { ohBridge: { tool: 'terminal' } },
});

function html(t: Transcript, id: string): string {
  const card = t.card(id);
  assert.ok(card !== undefined, `card ${id}`);
  return renderCard(card);
}

void test('question: it goes on the card of the call it names, with buttons, keys and their words', () => {
  const t = new Transcript();
  t.apply('c', { sessionUpdate: 'user_message_chunk', content: text('List the files.') });
  t.apply('c', command('call-1', 'ls -la'));
  const before = t.cards.length;
  const q = t.ask(request({ toolCallId: 'call-1', title: 'run `ls -la`' }));
  assert.equal(t.cards.length, before, 'no card of its own');
  assert.equal(q.cardId, t.cards[1]?.id);
  const h = html(t, q.cardId);
  assert.match(h, /class="card tool tool-command status-pending asking"/);
  assert.match(h, /<span class="badge ask" aria-label="Status: Needs you">Needs you<\/span>/);
  assert.match(h, /<code class="language-sh">ls -la<\/code>/, 'the command shows above the question');
  assert.doesNotMatch(h, /Waiting for output/, 'it does not run while it waits');
  assert.match(h, new RegExp(`<div class="question open" id="${q.questionId}" data-question="${q.questionId}" role="group" tabindex="-1" aria-labelledby="${q.questionId}-ask" aria-describedby="${q.questionId}-keys">`));
  assert.match(h, /<p class="ask" id="q1-ask"><span class="visually-hidden">Permission question: <\/span>OpenHands wants to run <code>ls -la<\/code><\/p>/);
  const buttons = [...h.matchAll(/<button [^>]*data-action="permission"[^>]*>([^<]*)/g)].map((m) => m[0]);
  assert.equal(buttons.length, 3);
  assert.match(buttons[0] ?? '', /class="primary" data-action="permission" data-question="q1" data-option="allow_once" data-key="y" aria-keyshortcuts="Y">Allow once/);
  assert.match(buttons[1] ?? '', /data-option="allow_always" data-key="a" aria-keyshortcuts="A">Always allow commands/);
  assert.match(buttons[2] ?? '', /class="secondary" data-action="permission" data-question="q1" data-option="reject_once" data-key="n" aria-keyshortcuts="N">Reject/);
  assert.match(h, /<p class="keys muted" id="q1-keys">Keys: <kbd>Y<\/kbd> allow once · <kbd>A<\/kbd> always allow commands · <kbd>N<\/kbd> reject<\/p>/);
  // The question is the card's last part: the person reads what it is about first.
  assert.ok(h.indexOf('language-sh') < h.indexOf('class="question'));
});

void test('question: the card records the answer, in words, and offers no more buttons', () => {
  const table: { kind: string; answer: OptionKind | 'dismissed'; words: string; tone: string; badge: string }[] = [
    { kind: 'execute', answer: 'allow_once', words: 'You allowed it once', tone: 'allowed', badge: 'Allowed' },
    { kind: 'execute', answer: 'allow_always', words: 'You allowed it, and always for commands', tone: 'allowed', badge: 'Allowed' },
    { kind: 'edit', answer: 'allow_always', words: 'You allowed it, and always for edits', tone: 'allowed', badge: 'Allowed' },
    { kind: 'execute', answer: 'reject_once', words: 'You rejected it', tone: 'refused', badge: 'Not run' },
    { kind: 'execute', answer: 'dismissed', words: 'Dismissed: not allowed', tone: 'refused', badge: 'Not run' },
  ];
  for (const row of table) {
    const t = new Transcript();
    const q = t.ask(request({ toolCallId: 'mcp-1', toolKind: row.kind }));
    assert.deepEqual(t.answer(q.questionId, row.answer), [q.cardId], row.words);
    assert.deepEqual(t.answer(q.questionId, 'allow_once'), [], 'the first answer wins');
    const h = html(t, q.cardId);
    assert.doesNotMatch(h, /<button[^>]*data-action="permission"/, row.words);
    assert.doesNotMatch(h, / asking"/, row.words);
    assert.match(h, new RegExp(`<div class="question answered ${row.tone}" id="q1" data-question="q1" role="note" aria-label="Permission">`), row.words);
    assert.match(h, new RegExp(`<span class="answer">${row.words}</span>`), row.words);
    assert.match(h, /· OpenHands wants to run <code>ls<\/code>/, row.words);
    // A call only asked about (an MCP agent's) has no updates: its badge says what came of it.
    assert.match(h, new RegExp(`aria-label="Status: ${row.badge}"`), row.words);
  }
  assert.deepEqual(new Transcript().answer('q9', 'allow_once'), [], 'an unknown question changes nothing');
});

void test('question: with no card for its call it makes one, which the call\'s updates fill and move into place', () => {
  const t = new Transcript();
  t.follow('conv');
  const q = t.ask(request({ toolCallId: 'call-7', title: 'run `make test`', rawInput: { command: 'make test' } }));
  const made = t.card(q.cardId);
  assert.ok(made?.kind === 'tool' && made.askedOnly === true);
  assert.equal(made.title, 'Run `make test`');
  assert.match(renderCard(made), /<code class="language-sh">make test<\/code>/, 'the command, from the request\'s arguments');
  t.apply('conv', { sessionUpdate: 'user_message_chunk', content: text('Run the tests.') });
  assert.deepEqual(t.cards.map((c) => c.kind), ['tool', 'user']);
  // The conversation names the call: the same card, moved after the message.
  assert.deepEqual(t.apply('conv', command('call-7', 'make test')), [q.cardId]);
  assert.deepEqual(t.cards.map((c) => c.id), [t.cards[0]?.id, q.cardId]);
  assert.equal(t.cards[1]?.kind, 'tool');
  assert.equal(t.before(q.cardId), t.cards[0]?.id, 'the view puts it after the message');
  assert.equal(t.before(t.cards[0]?.id ?? ''), null);
  t.answer(q.questionId, 'allow_once');
  t.apply('conv', { sessionUpdate: 'tool_call_update', toolCallId: 'call-7', status: 'in_progress' });
  t.apply('conv', { sessionUpdate: 'tool_call_update', toolCallId: 'call-7', status: 'completed', content: [{ type: 'content', content: text('ok\n') }], rawOutput: { exitCode: 0 } });
  const h = html(t, q.cardId);
  assert.match(h, />Exit 0</);
  assert.match(h, /You allowed it once/);
  assert.equal(t.cards.length, 2, 'one card for the call');
});

void test('question: a question that names the call by another id joins the call\'s card by its arguments', () => {
  const t = new Transcript();
  // The bridge asks before the agent-server's event for the call came: it
  // names the call by its own id.
  const q = t.ask(request({ toolCallId: 'agent-1-1', title: 'run `echo hi`', rawInput: { command: 'echo hi', timeout: 5 } }));
  t.apply('conv', { sessionUpdate: 'user_message_chunk', content: text('Say hi.') });
  t.apply('conv', { sessionUpdate: 'tool_call', toolCallId: 'toolu_1', title: 'Run `echo hi`', kind: 'execute', status: 'pending', rawInput: { timeout: 5, command: 'echo hi' } });
  assert.deepEqual(t.cards.map((c) => c.kind), ['user', 'tool'], 'one card for the call, after the message');
  const card = t.cards[1];
  assert.ok(card?.kind === 'tool' && card.id === q.cardId && card.toolCallId === 'toolu_1' && card.askedOnly === undefined);
  t.apply('conv', { sessionUpdate: 'tool_call_update', toolCallId: 'toolu_1', status: 'completed', content: [{ type: 'content', content: text('hi\n') }], rawOutput: { exitCode: 0 } });
  assert.equal(t.cards.length, 2);
  assert.match(html(t, q.cardId), />Exit 0</);
  // Other arguments, or a card an update already named, are another call.
  const other = t.ask(request({ toolCallId: 'agent-1-2', rawInput: { command: 'ls' } }));
  t.apply('conv', { sessionUpdate: 'tool_call', toolCallId: 'toolu_2', title: 'Run `pwd`', kind: 'execute', status: 'pending', rawInput: { command: 'pwd' } });
  t.apply('conv', { sessionUpdate: 'tool_call', toolCallId: 'toolu_3', title: 'Run `echo hi`', kind: 'execute', status: 'pending', rawInput: { command: 'echo hi', timeout: 5 } });
  assert.equal(t.cards.length, 5);
  assert.equal(t.card(other.cardId)?.kind, 'tool');
  assert.notEqual(t.cards[4]?.id, q.cardId);
});

void test('question: a card with an open question outlives a new conversation, and the call\'s updates still find it', () => {
  const t = new Transcript();
  t.apply('old', { sessionUpdate: 'user_message_chunk', content: text('Old.') });
  const q = t.ask(request({ toolCallId: 'call-1' }));
  t.apply('new', { sessionUpdate: 'user_message_chunk', content: text('New.') });
  t.apply('new', command('call-1', 'ls'));
  assert.deepEqual(t.cards.map((c) => c.kind), ['user', 'tool']);
  assert.equal(t.cards[1]?.id, q.cardId);
  assert.equal(t.openQuestions.length, 1);
  assert.equal(t.questionCard(q.questionId)?.id, q.cardId);
  t.answer(q.questionId, 'reject_once');
  assert.equal(t.openQuestions.length, 0);
});

void test('question: a second question on the same call replaces the first', () => {
  const t = new Transcript();
  t.apply('c', command('call-1', 'ls'));
  const first = t.ask(request({ toolCallId: 'call-1' }));
  t.answer(first.questionId, 'allow_once');
  const second = t.ask(request({ toolCallId: 'call-1', title: 'reset the terminal and run `ls`' }));
  assert.equal(second.cardId, first.cardId);
  assert.notEqual(second.questionId, first.questionId);
  assert.deepEqual(t.answer(first.questionId, 'reject_once'), [], 'the old question is gone');
  assert.match(html(t, second.cardId), /wants to reset the terminal and run <code>ls<\/code>/);
  assert.match(html(t, second.cardId), /data-question="q2"/);
});

void test('question: an edit\'s card shows the diff it proposes before it runs, then the edit\'s own', () => {
  const t = new Transcript();
  const rawInput = { command: 'str_replace', path: '/w/calc.py', old_str: 'return a - b\n', new_str: 'return a + b\n' };
  t.apply('c', { sessionUpdate: 'tool_call', toolCallId: 'e1', title: 'Str_replace /w/calc.py', kind: 'edit', status: 'pending', rawInput, locations: [{ path: '/w/calc.py' }], _meta: { ohBridge: { tool: 'file_editor' } } });
  const q = t.ask(request({ toolCallId: 'e1', title: 'str_replace /w/calc.py', toolKind: 'edit', rawInput }));
  let h = html(t, q.cardId);
  assert.match(h, /class="card tool tool-edit status-pending asking"/);
  assert.match(h, /<div class="diff proposed"><div class="diff-head"><span class="path" title="\/w\/calc.py">\/w\/calc.py<\/span> <span class="badge proposed"/);
  assert.match(h, /<span class="hunk">@@<\/span>\n<span class="del">-return a - b<\/span>\n<span class="ins">\+return a \+ b<\/span>/, 'a snippet: no line numbers');
  assert.match(h, /data-action="openDiff" data-card="c1" data-index="-1"/);
  assert.doesNotMatch(h, /data-action="revert"/, 'nothing to revert before it runs');
  assert.match(h, /Always allow edits/);
  assert.ok(h.indexOf('class="diff proposed"') < h.indexOf('class="question open"'), 'the diff comes before the question');
  t.answer(q.questionId, 'allow_once');
  t.apply('c', { sessionUpdate: 'tool_call_update', toolCallId: 'e1', status: 'completed', content: [
    { type: 'diff', path: '/w/calc.py', oldText: 'def add(a, b):\n    return a - b\n', newText: 'def add(a, b):\n    return a + b\n' },
    { type: 'content', content: text('The file /w/calc.py has been edited.') }] });
  h = html(t, q.cardId);
  assert.doesNotMatch(h, /proposed/);
  assert.match(h, /<span class="hunk">@@ -1 \+1 @@<\/span>/);
  assert.match(h, /data-action="revert" data-card="c1" data-index="0"/);
  assert.match(h, /You allowed it once/);
});

void test('question: the proposed diff of each file_editor command, from its arguments', () => {
  assert.deepEqual(proposedDiff({ command: 'create', path: '/w/new.txt', file_text: 'hi\n' }), { type: 'diff', path: '/w/new.txt', oldText: null, newText: 'hi\n' });
  assert.deepEqual(proposedDiff({ command: 'insert', path: '/w/a', insert_line: 3, new_str: 'x\n' }), { type: 'diff', path: '/w/a', oldText: '', newText: 'x\n' });
  assert.deepEqual(proposedDiff({ command: 'str_replace', path: '/w/a', old_str: 'x' }), { type: 'diff', path: '/w/a', oldText: 'x', newText: '' });
  assert.equal(proposedDiff({ command: 'view', path: '/w/a' }), undefined);
  assert.equal(proposedDiff({ command: 'str_replace', path: '/w/a' }), undefined, 'no old_str');
  assert.equal(proposedDiff({ command: 'create' }), undefined, 'no path');
  assert.equal(proposedDiff('create'), undefined);
  assert.equal(proposedDiff(null), undefined);
  // A question with no card: the edit's card is made from the request alone.
  const t = new Transcript();
  const q = t.ask(request({ toolCallId: 'mcp-2', title: 'create /w/new.txt', toolKind: 'edit', rawInput: { command: 'create', path: '/w/new.txt', file_text: 'one\ntwo\n' } }));
  const card = t.card(q.cardId);
  assert.ok(card?.kind === 'tool');
  assert.deepEqual(editDiffs(card).map((d) => d.index), [-1]);
  const h = renderCard(card);
  assert.match(h, /<span class="badge">new file<\/span> <span class="badge proposed"/);
  assert.match(h, /aria-label="2 lines added">\+2</);
});

void test('question: what the agent and the request say is escaped', () => {
  const t = new Transcript();
  const q = t.ask(request({ toolCallId: '<x>', agent: '<img src=x onerror=alert(1)>', title: 'run `</code><script>`', rawInput: { command: '<b>' } }));
  const h = html(t, q.cardId);
  assert.doesNotMatch(h, /<(img|script|b)[\s>]/, h);
  assert.match(h, /&lt;img src=x onerror=alert\(1\)&gt; wants to run <code>&lt;\/code&gt;&lt;script&gt;<\/code>/);
  t.answer(q.questionId, 'reject_once');
  assert.doesNotMatch(html(t, q.cardId), /<(img|script|b)[\s>]/);
});

void test('permissions: the words of options and answers, by kind, and a key for each option', () => {
  const nouns: [string, string][] = [['execute', 'commands'], ['edit', 'edits'], ['read', 'reads'], ['delete', 'deletions'], ['fetch', 'fetches'], ['think', 'think actions'], ['other', 'other actions'], ['', 'other actions']];
  for (const [kind, noun] of nouns) assert.equal(kindNoun(kind), noun, kind);
  assert.deepEqual((['allow_once', 'allow_always', 'reject_once', 'reject_always'] as const).map((k) => optionLabel(k, 'execute')),
    ['Allow once', 'Always allow commands', 'Reject', 'Always reject commands']);
  assert.equal(answerWords('reject_always', 'edit'), 'You rejected it, and always for edits');
  const keys = Object.values(optionKeys);
  assert.equal(new Set(keys).size, keys.length, 'one key for one option');
  for (const k of keys) assert.match(k, /^[a-z]$/);
});

void test('cards: a long output shows its end and offers all of it in an editor', () => {
  const t = new Transcript();
  t.apply('c', command('big', 'cat big.log'));
  const big = 'x'.repeat(outputLimit * 3);
  t.apply('c', { sessionUpdate: 'tool_call_update', toolCallId: 'big', status: 'completed', content: [{ type: 'content', content: text(big) }], rawOutput: { exitCode: 0 } });
  const h = html(t, t.cards[0]?.id ?? '');
  assert.ok(h.length < outputLimit + 2000, `the card holds the end only (${h.length})`);
  assert.ok(h.includes(`<button type="button" class="link show-all" data-action="showOutput" data-card="c1">Show all ${big.length.toLocaleString('en-US')} characters in an editor</button>`), h.slice(-300));
  t.apply('c', command('small', 'echo hi'));
  t.apply('c', { sessionUpdate: 'tool_call_update', toolCallId: 'small', content: [{ type: 'content', content: text('hi\n') }] });
  assert.doesNotMatch(html(t, t.cards[1]?.id ?? ''), /show-all/);
});

void test('transcript: replays are told apart by a fingerprint of the update, not its text', () => {
  assert.equal(fingerprint('a'.repeat(1000)), fingerprint('a'.repeat(1000)));
  assert.notEqual(fingerprint('ab'), fingerprint('ba'));
  assert.ok(fingerprint('x'.repeat(1_000_000)).length < 24);
  const t = new Transcript();
  const u: Update = { sessionUpdate: 'tool_call_update', toolCallId: 'c1', content: [{ type: 'content', content: text('y'.repeat(100_000)) }], _meta: { ohBridge: { messageId: 'e1' } } };
  t.apply('c', command('c1', 'yes'));
  assert.deepEqual(t.apply('c', u), [t.cards[0]?.id]);
  assert.deepEqual(t.apply('c', u), [], 'the same update again changes nothing');
  const cards: readonly Card[] = t.cards;
  assert.equal(cards.length, 1);
});

void test('question: answers are kept by call id, and a replay after a reload shows them on their cards', () => {
  const t = new Transcript();
  t.apply('c', command('call-1', 'ls'));
  const first = t.ask(request({ toolCallId: 'call-1' }));
  t.answer(first.questionId, 'allow_once');
  // A question about a call no update named yet (the bridge's own id) is
  // kept once the call's update names it.
  const early = t.ask(request({ toolCallId: 'agent-1-2', title: 'run `rm x`', rawInput: { command: 'rm x' } }));
  t.answer(early.questionId, 'reject_once');
  assert.deepEqual(Object.keys(t.answers()), ['call-1'], 'the early one waits for its id');
  t.apply('c', command('call-2', 'rm x'));
  const kept = t.answers();
  assert.deepEqual(kept, {
    'call-1': { agent: 'OpenHands', title: 'run `ls`', answer: 'allow_once' },
    'call-2': { agent: 'OpenHands', title: 'run `rm x`', answer: 'reject_once' },
  });

  // After the reload: a new transcript, the same conversation replayed.
  const asked: string[] = [];
  const again = new Transcript((id) => { asked.push(id); return id === 'c' ? kept : undefined; });
  again.apply('c', command('call-1', 'ls'));
  again.apply('c', command('call-2', 'rm x'));
  again.apply('c', command('call-3', 'pwd'));
  const [one, two, three] = again.cards.map((c) => renderCard(c));
  assert.match(one ?? '', /class="question answered allowed"[^>]*>.*You allowed it once/);
  assert.match(two ?? '', /class="question answered refused"[^>]*>.*You rejected it/);
  assert.doesNotMatch(three ?? '', /question/, 'a call never asked about has no answer');
  assert.deepEqual(asked, ['c'], 'the store is read once per conversation');
  // Another conversation reads its own.
  again.apply('d', command('call-1', 'ls'));
  assert.doesNotMatch(renderCard(again.cards[0]), /question/);
  assert.deepEqual(asked, ['c', 'd']);
});
