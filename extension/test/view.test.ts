// Unit tests of the conversation view's pure parts: the Markdown renderer,
// edit diffs, the reduction of the bridge's session updates into cards,
// and the cards' HTML, fed updates shaped like the bridge's.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { escapeHtml, inline, renderMarkdown } from '../src/markdown';
import { diffSummary, planRevert, unifiedText } from '../src/diff';
import { Transcript, type Card } from '../src/transcript';
import { clipOutput, headerView, renderCard } from '../src/cards';
import { disconnected } from '../src/status';
import type { ContentBlock, Meta, MetaFields, Update } from '../src/protocol.gen';

const meta = (messageId: string, extra: MetaFields = {}): { _meta: Meta } => ({ _meta: { ohBridge: { messageId, ...extra } } });
const text = (t: string): ContentBlock => ({ type: 'text', text: t });

void test('markdown: blocks and inline marks', () => {
  const table: [string, string, string][] = [
    ['paragraph lines join with <br>', 'one\ntwo', '<p>one<br>\ntwo</p>'],
    ['heading', '## Plan', '<h2>Plan</h2>'],
    ['emphasis', '**bold** and *it* and _it_ and ~~no~~', '<p><strong>bold</strong> and <em>it</em> and <em>it</em> and <del>no</del></p>'],
    ['snake_case stays', 'a snake_case_name', '<p>a snake_case_name</p>'],
    ['code span is literal', 'run `a *b* <c>`', '<p>run <code>a *b* &lt;c&gt;</code></p>'],
    ['bullets', '- a\n- b', '<ul><li>a</li><li>b</li></ul>'],
    ['ordered from 3', '3. c\n4. d', '<ol start="3"><li>c</li><li>d</li></ol>'],
    ['nested list', '- a\n  - a1\n- b', '<ul><li>a\n<ul><li>a1</li></ul></li><li>b</li></ul>'],
    ['quote', '> note\n> more', '<blockquote><p>note<br>\nmore</p></blockquote>'],
    ['rule', '---', '<hr>'],
    ['link', '[docs](https://x.org/a?b=1&c=2)', '<p><a href="https://x.org/a?b=1&amp;c=2">docs</a></p>'],
    ['image is its alt text', '![a cat](https://x.org/cat.png)', '<p>a cat</p>'],
  ];
  for (const [name, input, want] of table) assert.equal(renderMarkdown(input), want, name);
});

void test('markdown: nothing from the input becomes markup', () => {
  const attacks = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '[x](javascript:alert(1))',
    '[x](data:text/html,<b>)',
    '"><svg onload=alert(1)>',
    '```\n</code></pre><script>x</script>\n```',
    '| <b>h</b> |\n|---|\n| <i>c</i> |',
    '`` ` `` <u>',
  ];
  for (const a of attacks) {
    const html = renderMarkdown(a);
    assert.doesNotMatch(html, /<(script|img|svg|b|i|u)[\s>]/, `${a} → ${html}`);
    assert.doesNotMatch(html, /href="(javascript|data):/i, `${a} → ${html}`);
  }
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  assert.equal(inline('[`code` label](https://x.org)'), '<a href="https://x.org"><code>code</code> label</a>');
});

void test('markdown: fenced code gets a Copy button, its text escaped and kept as is', () => {
  const html = renderMarkdown('Try:\n```python\nif a < b:\n    print("**x**")\n```\nthen');
  assert.match(html, /<p>Try:<\/p>/);
  assert.match(html, /<button type="button" class="copy" data-action="copy" aria-label="Copy code"/);
  assert.match(html, /<code class="language-python">if a &lt; b:\n {4}print\(&quot;\*\*x\*\*&quot;\)<\/code>/);
  assert.match(html, /<p>then<\/p>$/);
  // An unclosed fence runs to the end.
  assert.match(renderMarkdown('```\nopen'), /<code>open<\/code>/);
});

void test('markdown: tables align with classes (the CSP forbids style attributes)', () => {
  const html = renderMarkdown('| a | b |\n|:--|--:|\n| 1 | `x\\|y` |');
  assert.equal(html, '<table><thead><tr><th class="align-left">a</th><th class="align-right">b</th></tr></thead>' +
    '<tbody><tr><td class="align-left">1</td><td class="align-right"><code>x|y</code></td></tr></tbody></table>');
  assert.doesNotMatch(html, /style=/);
});

void test('diff: counts, hunks with context, and far-apart changes in separate hunks', () => {
  const old = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const edited = old.replace('line 2\n', 'line two\n').replace('line 18\n', '').replace('line 20\n', 'line 20\nline 21\n');
  const s = diffSummary(old, edited);
  assert.equal(s.added, 2);
  assert.equal(s.removed, 2);
  assert.equal(s.hunks.length, 2);
  assert.equal(unifiedText(s), [
    '@@ -1,5 +1,5 @@', ' line 1', '-line 2', '+line two', ' line 3', ' line 4', ' line 5',
    '@@ -15,6 +15,6 @@', ' line 15', ' line 16', ' line 17', '-line 18', ' line 19', ' line 20', '+line 21',
  ].join('\n'));
  const created = diffSummary(null, 'a\nb\n');
  assert.deepEqual([created.added, created.removed, created.hunks.length], [2, 0, 1]);
  assert.deepEqual(diffSummary('same\n', 'same\n').hunks, []);
});

void test('diff: a revert puts the old text back, asking when the file changed since', () => {
  assert.deepEqual(planRevert('new', 'old', 'new'), { kind: 'revert', text: 'old' });
  const changed = planRevert('new, then the user typed', 'old', 'new');
  assert.ok(changed.kind === 'ask' && changed.text === 'old' && changed.reason.includes('changed since'), JSON.stringify(changed));
  assert.equal(planRevert(undefined, 'old', 'new').kind, 'ask');
  assert.deepEqual(planRevert('created', null, 'created'), { kind: 'delete' });
  assert.equal(planRevert('created, then edited', null, 'created').kind, 'askDelete');
});

/** A conversation as the bridge sends it: a task, thoughts, a command with live output, an edit, a plan, an answer. */
function recorded(): { conversationId: string; update: Update }[] {
  const c = 'conv-1';
  const u = (update: Update): { conversationId: string; update: Update } => ({ conversationId: c, update });
  return [
    u({ sessionUpdate: 'user_message_chunk', content: text('Fix the failing test.'), ...meta('e1') }),
    u({ sessionUpdate: 'agent_thought_chunk', content: text('Run the tests first.'), ...meta('e2') }),
    u({ sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Run `pytest -q`', kind: 'execute', status: 'pending', rawInput: { command: 'pytest -q' }, locations: [], _meta: { ohBridge: { tool: 'terminal', terminalId: 'agent-1', messageId: 'e2' } } }),
    u({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'in_progress' }),
    u({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', content: [{ type: 'content', content: text('F.\n') }] }),
    u({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', content: [{ type: 'content', content: text('F.\n1 failed, 1 passed\n') }] }),
    u({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'failed', rawOutput: { exitCode: 1 } }),
    u({ sessionUpdate: 'plan', entries: [{ content: 'Find the bug', priority: 'high', status: 'completed' }, { content: 'Fix it', priority: 'medium', status: 'in_progress' }], ...meta('e5') }),
    u({ sessionUpdate: 'tool_call', toolCallId: 'call-2', title: 'Edit /w/calc.py', kind: 'edit', status: 'in_progress', rawInput: { command: 'str_replace', path: '/w/calc.py' }, locations: [{ path: '/w/calc.py' }], _meta: { ohBridge: { tool: 'file_editor' } } }),
    u({ sessionUpdate: 'tool_call_update', toolCallId: 'call-2', status: 'completed', content: [{ type: 'diff', path: '/w/calc.py', oldText: 'return a - b\n', newText: 'return a + b\n' }, { type: 'content', content: text('The file /w/calc.py has been edited.') }] }),
    u({ sessionUpdate: 'plan', entries: [{ content: 'Find the bug', priority: 'high', status: 'completed' }, { content: 'Fix it', priority: 'medium', status: 'completed' }], ...meta('e8') }),
    u({ sessionUpdate: 'agent_message_chunk', content: text('Fixed: `add` used `-`.'), ...meta('e9') }),
  ];
}

function replay(t: Transcript, updates: ReturnType<typeof recorded>): string[][] {
  return updates.map((x) => t.apply(x.conversationId, x.update));
}

void test('transcript: a conversation reduces to messages, a thought, a command, an edit and a plan', () => {
  const t = new Transcript();
  const changes = replay(t, recorded());
  assert.deepEqual(changes[0], ['*'], 'the first update of a conversation redraws everything');
  assert.deepEqual(t.cards.map((c) => c.kind), ['user', 'thought', 'tool', 'plan', 'tool', 'plan', 'agent']);
  const [, , command, , edit] = t.cards as Card[];
  assert.ok(command?.kind === 'tool' && edit?.kind === 'tool');
  assert.equal(command.status, 'failed');
  assert.equal(command.tool, 'terminal');
  assert.deepEqual(command.content, [{ type: 'content', content: text('F.\n1 failed, 1 passed\n') }], 'content replaces, not appends');
  assert.equal(Transcript.exitCode(command), 1);
  assert.equal(edit.content[0]?.type, 'diff');
  assert.deepEqual(changes[4], [command.id], 'live output redraws only its card');
});

void test('transcript: chunks join only with the same message id; replays add nothing', () => {
  const t = new Transcript();
  t.apply('c', { sessionUpdate: 'agent_message_chunk', content: text('Hello, '), ...meta('m1') });
  t.apply('c', { sessionUpdate: 'agent_message_chunk', content: text('world.'), ...meta('m1') });
  t.apply('c', { sessionUpdate: 'agent_message_chunk', content: text('Next.'), ...meta('m2') });
  t.apply('c', { sessionUpdate: 'agent_message_chunk', content: text('No id.') });
  t.apply('c', { sessionUpdate: 'agent_message_chunk', content: text('No id.') });
  t.apply('c', { sessionUpdate: 'agent_thought_chunk', content: text('Hmm.'), ...meta('m2') });
  t.apply('c', { sessionUpdate: 'agent_message_chunk', content: text('Failed.'), ...meta('m3', { kind: 'error' }) });
  const texts = (): string[] => t.cards.map((c) => `${c.kind}:${'text' in c ? c.text : ''}`);
  const want = ['agent:Hello, world.', 'agent:Next.', 'agent:No id.', 'agent:No id.', 'thought:Hmm.', 'error:Failed.'];
  assert.deepEqual(texts(), want);
  t.apply('c', { sessionUpdate: 'user_message_chunk', content: text('a'), ...meta('u1') });
  t.apply('c', { sessionUpdate: 'user_message_chunk', content: text('b'), ...meta('u1') });
  assert.equal(texts().at(-1), 'user:ab');

  // The bridge replays every event after a reconnect: nothing doubles.
  const r = new Transcript();
  replay(r, recorded());
  const before = JSON.stringify(r.cards);
  const again = replay(r, recorded());
  assert.equal(JSON.stringify(r.cards), before);
  assert.ok(!again.some((ids) => ids.includes('*')));
});

void test('transcript: another conversation starts over; a card with an open question stays', () => {
  const t = new Transcript();
  replay(t, recorded());
  const q = t.ask({ toolCallId: 'ask-1', title: 'run `ls`', toolKind: 'execute', agent: 'OpenHands', options: [{ optionId: 'a', name: 'Allow once', kind: 'allow_once' }] });
  assert.equal(t.follow('conv-1'), false, 'the same conversation');
  assert.equal(t.follow(undefined), false);
  assert.deepEqual(t.apply('conv-2', { sessionUpdate: 'user_message_chunk', content: text('New task.'), ...meta('x1') }), ['*']);
  assert.deepEqual(t.cards.map((c) => c.kind), ['tool', 'user']);
  assert.equal(t.conversationId, 'conv-2');
  assert.deepEqual(t.answer(q.questionId, 'allow_once'), [q.cardId]);
  assert.deepEqual(t.answer(q.questionId, 'reject_once'), [], 'the first answer wins');
  const card = t.card(q.cardId);
  assert.ok(card?.kind === 'tool' && card.question?.answer === 'allow_once');
  assert.equal(t.follow('conv-3'), true);
  assert.deepEqual(t.cards, [], 'an answered question goes with its conversation');
});

void test('transcript: an interrupted command has no exit code; an update may come first', () => {
  const t = new Transcript();
  t.apply('c', { sessionUpdate: 'tool_call', toolCallId: 'sleep', title: 'Run `sleep 30; echo never`', kind: 'execute', status: 'in_progress', rawInput: { command: 'sleep 30; echo never' } });
  t.apply('c', { sessionUpdate: 'tool_call_update', toolCallId: 'sleep', status: 'failed', rawOutput: { exitCode: null } });
  const card = t.cards[0];
  assert.ok(card?.kind === 'tool');
  assert.equal(Transcript.exitCode(card), null);
  assert.match(renderCard(card), /class="badge bad" aria-label="Status: Stopped">Stopped</);
  t.apply('c', { sessionUpdate: 'tool_call_update', toolCallId: 'late', status: 'completed', content: [{ type: 'content', content: text('ok') }] });
  const late = t.cards[1];
  assert.ok(late?.kind === 'tool' && late.title === 'late' && late.status === 'completed');
});

void test('cards: commands show output and exit code, edits their diff and buttons, all escaped', () => {
  const t = new Transcript();
  replay(t, recorded());
  const html = t.cards.map(renderCard);
  const [user, thought, command, plan, edit, , agent] = html;
  assert.match(user ?? '', /class="card message user"[^>]*aria-label="You"/);
  assert.match(thought ?? '', /<details><summary>Thought<\/summary>/);
  assert.match(command ?? '', /Run <code>pytest -q<\/code>/);
  assert.match(command ?? '', /<code class="language-sh">pytest -q<\/code>/);
  assert.match(command ?? '', /<pre class="output" aria-label="Output">F\.\n1 failed, 1 passed\n<\/pre>/);
  assert.match(command ?? '', />Exit 1</);
  assert.match(plan ?? '', /1\/2 done/);
  assert.match(edit ?? '', /\+1<\/span> <span class="removed"[^>]*>−1/);
  assert.match(edit ?? '', /<span class="del">-return a - b<\/span>\n<span class="ins">\+return a \+ b<\/span>/);
  assert.match(edit ?? '', /data-action="openDiff" data-card="c5" data-index="0"/);
  assert.match(edit ?? '', /data-action="revert" data-card="c5" data-index="0"/);
  assert.match(agent ?? '', /Fixed: <code>add<\/code> used <code>-<\/code>\./);

  const evil = new Transcript();
  evil.apply('c', { sessionUpdate: 'tool_call', toolCallId: 'x', title: '<img src=x onerror=alert(1)>', kind: 'execute', status: 'in_progress', rawInput: { command: '</code><script>' } });
  evil.apply('c', { sessionUpdate: 'tool_call_update', toolCallId: 'x', content: [{ type: 'content', content: text('<b>out</b>') }] });
  const h = renderCard(evil.cards[0]);
  assert.doesNotMatch(h, /<(img|script|b)[\s>]/, h);
  assert.match(h, /Waiting|&lt;b&gt;out/);
});

void test('cards: a long output shows its end', () => {
  const long = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
  const clipped = clipOutput(long, 1000);
  assert.ok(clipped.length < 1100);
  assert.match(clipped, /^… \(\d+ earlier characters not shown\)\nline \d+\n/);
  assert.ok(clipped.endsWith('line 4999'));
  assert.equal(clipOutput('short'), 'short');
});

void test('header: the connection and which controls apply', () => {
  const v = (executionStatus?: string): ReturnType<typeof headerView> => headerView({ ...disconnected, state: 'connected', conversationId: 'abc', ...(executionStatus === undefined ? {} : { executionStatus }) });
  assert.deepEqual([v('running').label, v('running').canStop, v('running').canPause, v('running').canResume], ['Connected · Agent working', true, true, false]);
  assert.deepEqual([v('paused').label, v('paused').canStop, v('paused').canResume], ['Connected · Paused', false, true]);
  assert.deepEqual([v('finished').label, v('finished').tone], ['Connected · Done', 'ok']);
  assert.equal(v('stuck').tone, 'bad');
  const off = headerView(disconnected, 'conv-123');
  assert.deepEqual([off.label, off.connected, off.canStop, off.reopen], ['Not connected', false, false, 'conv-123']);
  const failed = headerView({ ...disconnected, state: 'failed', error: 'cannot reach http://x' });
  assert.deepEqual([failed.label, failed.error], ['Connection failed', 'cannot reach http://x']);
  // Through a relay: which window the agent reaches, while connected only.
  const via = 'the relay at https://cloud/s/abc/relay, as window "app — VS Code"';
  assert.equal(headerView({ ...disconnected, state: 'connected', conversationId: 'abc', executionStatus: 'running', via }).via, via);
  assert.equal(headerView({ ...disconnected, state: 'reconnecting', via }).via, via);
  assert.equal(headerView({ ...disconnected, state: 'failed', via }).via, undefined);
  assert.equal(v('running').via, undefined, 'a local conversation names no relay');
  const down = 'the link to the relay at https://cloud/s/abc/relay is down (EOF): the bridge dials it again, and the agent\'s calls wait for it';
  const h = headerView({ ...disconnected, state: 'connected', conversationId: 'abc', executionStatus: 'running', via, viaDown: down });
  assert.deepEqual([h.via, h.viaDown], [via, down]);
  assert.equal(headerView({ ...disconnected, state: 'connected', conversationId: 'abc', viaDown: down }).viaDown, undefined, 'no relay, no relay link');
});
