// A scripted model on 127.0.0.1 that speaks enough of the Anthropic
// Messages API for Claude Code: POST /v1/messages with `stream: true`
// answered as server-sent events (message_start, content_block_start /
// _delta / _stop for text and tool_use blocks, the tool's input as
// input_json_delta, message_delta with the stop_reason, message_stop),
// POST /v1/messages/count_tokens, GET /v1/models. No npm dependencies.
//
// One conversation per server: the requests whose first user message
// holds `marker` (the prompt) are the conversation's turns, and each turn
// is answered by the next step of the script. Any other request (a side
// call Claude Code may make with a small model) is answered with a short
// text and kept in `side`. Everything that arrives is kept in `requests`.
//
// A step is a function (body, turn) returning
//   { text }                          a final answer (stop_reason end_turn),
//   { tool: name, input, text? }      one tool call (stop_reason tool_use),
//   null                              skip this step, try the next one on the same request.
// It may throw: the model then ends the conversation with a text that
// says so, and the error is kept in `errors`.
'use strict';
const http = require('node:http');

let ids = 0;

// toolResults is the tool_result blocks of a request's last user
// message, by tool_use_id, each with its text joined.
function toolResults(body) {
  const out = {};
  const last = [...(body.messages || [])].reverse().find((m) => m.role === 'user');
  if (!last || !Array.isArray(last.content)) return out;
  for (const b of last.content) {
    if (b.type !== 'tool_result') continue;
    const text = typeof b.content === 'string' ? b.content
      : (b.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
    out[b.tool_use_id] = { text, isError: b.is_error === true, block: b };
  }
  return out;
}

// offered is the tool names in a request's `tools` list.
function offered(body) {
  return (body.tools || []).map((t) => t.name).filter(Boolean);
}

// allText is every text a request carries (system, messages), to find
// what a tool answered at any point of the conversation.
function allText(body) {
  const parts = [];
  const walk = (v) => {
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (typeof v.text === 'string') parts.push(v.text);
      if (v.content !== undefined) walk(v.content);
    }
  };
  walk(body.system);
  walk(body.messages);
  return parts.join('\n');
}

function firstUserText(body) {
  const first = (body.messages || []).find((m) => m.role === 'user');
  if (!first) return '';
  return typeof first.content === 'string' ? first.content
    : first.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// sse writes one answer as the Messages API streams it.
function sse(res, model, reply) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const id = `msg_scripted_${++ids}`;
  ev('message_start', {
    message: {
      id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
  ev('ping', {});
  let index = 0;
  if (reply.text !== undefined) {
    ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
    // In two pieces, as a model streams.
    const cut = Math.ceil(reply.text.length / 2);
    for (const piece of [reply.text.slice(0, cut), reply.text.slice(cut)]) {
      if (piece) ev('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    ev('content_block_stop', { index });
    index++;
  }
  if (reply.tool) {
    ev('content_block_start', { index, content_block: { type: 'tool_use', id: reply.id, name: reply.tool, input: {} } });
    const json = JSON.stringify(reply.input);
    for (let i = 0; i < json.length; i += 16) {
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 16) } });
    }
    ev('content_block_stop', { index });
  }
  ev('message_delta', { delta: { stop_reason: reply.tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } });
  ev('message_stop', {});
  res.end();
}

// start listens on 127.0.0.1 at a free port. opts: { marker, steps, log }.
function start({ marker, steps, log = () => {} }) {
  const m = {
    requests: [], // every request: { method, url, headers, body }
    turns: [], // the conversation's requests (parsed bodies), in order
    replies: [], // what the model answered to each turn
    side: [], // other /v1/messages requests
    errors: [], // script errors and unexpected requests
    waiters: [],
  };
  let step = 0;
  const notify = () => {
    m.waiters = m.waiters.filter((w) => (w.pred() ? (w.resolve(), false) : true));
  };
  // until resolves when pred() holds, checked at each request.
  m.until = (pred, ms = 60000) => new Promise((resolve, reject) => {
    if (pred()) { resolve(); return; }
    const w = { pred, resolve: () => { clearTimeout(w.t); resolve(); } };
    w.t = setTimeout(() => { m.waiters = m.waiters.filter((x) => x !== w); reject(new Error('model: timed out waiting')); }, ms);
    m.waiters.push(w);
  });

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try { body = raw ? JSON.parse(raw) : null; } catch { /* not JSON */ }
      const path = req.url.split('?')[0];
      m.requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      log(`${req.method} ${req.url}`);
      const json = (code, v) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(v)); };
      try {
        if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
          json(200, { input_tokens: Math.ceil(raw.length / 4) });
        } else if (req.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
          const model = { type: 'model', id: path.slice('/v1/models/'.length) || 'claude-scripted', display_name: 'Scripted', created_at: '2025-01-01T00:00:00Z' };
          json(200, path === '/v1/models' ? { data: [model], has_more: false, first_id: model.id, last_id: model.id } : model);
        } else if (req.method === 'POST' && path === '/v1/messages' && body) {
          if (!firstUserText(body).includes(marker)) {
            m.side.push(body);
            const reply = { text: 'ok' };
            if (body.stream) sse(res, body.model, reply);
            else json(200, { id: `msg_side_${++ids}`, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } });
          } else {
            const turn = m.turns.length;
            m.turns.push(body);
            let reply;
            try {
              while (reply === undefined) {
                if (step >= steps.length) throw new Error(`turn ${turn}: the script has no step left`);
                const r = steps[step++](body, turn);
                if (r !== null) reply = r;
              }
            } catch (err) {
              m.errors.push(err.message);
              reply = { text: `scripted model error: ${err.message}` };
            }
            if (reply.tool) reply.id = `toolu_scripted_${++ids}`;
            m.replies.push(reply);
            if (!body.stream) throw new Error('a conversation request without stream: true');
            sse(res, body.model, reply);
          }
        } else {
          m.errors.push(`unexpected request ${req.method} ${req.url}`);
          json(404, { type: 'error', error: { type: 'not_found_error', message: `scripted model: no ${req.method} ${path}` } });
        }
      } catch (err) {
        m.errors.push(err.message);
        if (!res.headersSent) json(500, { type: 'error', error: { type: 'api_error', message: err.message } });
        else res.end();
      }
      notify();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      m.port = server.address().port;
      m.url = `http://127.0.0.1:${m.port}`;
      m.close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
      resolve(m);
    });
  });
}

module.exports = { start, toolResults, offered, allText };
