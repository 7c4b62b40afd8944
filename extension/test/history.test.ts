// Unit tests of the earlier conversations' list (history.ts): what each
// conversation shows, the open one marked, every server string escaped.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ago, conversationName, renderHistory } from '../src/history';

const now = Date.parse('2026-11-24T12:00:00');

void test('history: when a conversation last changed, in words', () => {
  const table: [string | undefined, string][] = [
    [undefined, ''],
    ['not a time', ''],
    ['2026-11-24T11:59:30', 'just now'],
    ['2026-11-24T11:59:00', '1 minute ago'],
    ['2026-11-24T11:15:00', '45 minutes ago'],
    ['2026-11-24T10:59:00', '1 hour ago'],
    ['2026-11-23T11:00:00', 'yesterday'],
    ['2026-11-20T12:00:00', '4 days ago'],
    ['2026-10-01T12:00:00', '2026-10-01'],
  ];
  for (const [iso, want] of table) assert.equal(ago(iso, now), want, String(iso));
});

void test('history: each conversation is a button named by its title, the open one marked', () => {
  const html = renderHistory({
    conversations: [
      { conversationId: 'aaaaaaaa-1111', title: 'Fix <the> build', updatedAt: '2026-11-24T11:00:00', workingDir: '/w' },
      { conversationId: 'bbbbbbbb-2222', updatedAt: '2026-11-23T11:00:00', workingDir: '/w' },
    ],
    current: 'bbbbbbbb-2222',
  }, now);
  assert.match(html, /data-action="openConversation" data-id="aaaaaaaa-1111"[^>]*><span class="history-title">Fix &lt;the&gt; build<\/span><span class="history-when">1 hour ago</);
  assert.match(html, /class="history-item open"[^>]*data-id="bbbbbbbb-2222" aria-current="true"[^>]*><span class="history-title">Untitled conversation bbbbbbbb<\/span><span class="history-when">open now</);
  assert.doesNotMatch(html, /<the>/);
  assert.doesNotMatch(html, /history-more/);
  assert.equal(conversationName({ conversationId: 'cccccccc-3', title: '  ', workingDir: '/w' }), 'Untitled conversation cccccccc');
});

void test('history: a next page gives More; none, or a failure, says so', () => {
  assert.match(renderHistory({ conversations: [{ conversationId: 'a', workingDir: '/w' }], next: 'p"2' }, now), /data-action="moreConversations" data-cursor="p&quot;2">More</);
  assert.match(renderHistory({ conversations: [] }, now), /No earlier conversations in this workspace/);
  assert.equal(renderHistory({ conversations: [], error: 'cannot reach <x>' }, now), '<p class="history-error" role="alert">cannot reach &lt;x&gt;</p>');
});
