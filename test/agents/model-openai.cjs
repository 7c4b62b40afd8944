// A scripted model that speaks the OpenAI Responses API (POST /v1/responses
// with stream: true, answered as server-sent events), on 127.0.0.1, for
// agents such as Codex that are pointed at it with a custom model provider.
// The test plays the model: each request waits in a queue until the test
// takes it with next() and answers it with reply(), so a script reads as a
// conversation and waits on requests, never on time. node:http only.
//
//   const model = await start();
//   // point the agent at model.url (the base URL, ending in /v1)
//   const req = await model.next(60000);   // the agent's next request
//   req.body.tools, req.body.input ...
//   req.reply([functionCall('terminal', { command: 'ls' }, { namespace })]);
//   req.reply([message('Done.')]);
//   await model.close();
'use strict';
const http = require('node:http');

let ids = 0;
const id = (prefix) => `${prefix}_${Date.now().toString(36)}${(++ids).toString(36)}`;

// functionCall is an output item calling a function tool. A tool that the
// request offers inside a namespace (tools[i].type === 'namespace') is
// called with its own name and the namespace's.
function functionCall(name, args, { namespace, callId } = {}) {
  const item = { type: 'function_call', id: id('fc'), status: 'completed', call_id: callId || id('call'), name };
  if (namespace) item.namespace = namespace;
  item.arguments = typeof args === 'string' ? args : JSON.stringify(args);
  return item;
}

// message is an assistant message output item with text.
function message(text) {
  return { type: 'message', id: id('msg'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

// events are the server-sent events of one streamed response with these
// output items, in the order the Responses API sends them.
function events(items, model) {
  const respId = id('resp');
  const base = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] };
  const out = [];
  let seq = 0;
  const ev = (o) => out.push({ ...o, sequence_number: seq++ });
  ev({ type: 'response.created', response: base });
  ev({ type: 'response.in_progress', response: base });
  items.forEach((item, i) => {
    if (item.type === 'message') {
      const text = item.content.map((c) => c.text).join('');
      ev({ type: 'response.output_item.added', output_index: i, item: { ...item, status: 'in_progress', content: [] } });
      ev({ type: 'response.content_part.added', item_id: item.id, output_index: i, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      ev({ type: 'response.output_text.delta', item_id: item.id, output_index: i, content_index: 0, delta: text });
      ev({ type: 'response.output_text.done', item_id: item.id, output_index: i, content_index: 0, text });
      ev({ type: 'response.content_part.done', item_id: item.id, output_index: i, content_index: 0, part: item.content[0] });
    } else if (item.type === 'function_call') {
      ev({ type: 'response.output_item.added', output_index: i, item: { ...item, status: 'in_progress', arguments: '' } });
      ev({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: i, delta: item.arguments });
      ev({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: i, arguments: item.arguments });
    } else {
      ev({ type: 'response.output_item.added', output_index: i, item });
    }
    ev({ type: 'response.output_item.done', output_index: i, item });
  });
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
  ev({ type: 'response.completed', response: { ...base, status: 'completed', output: items, usage } });
  return out.map((o) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`).join('');
}

// start listens on 127.0.0.1 (a free port). Every request is kept in
// `log` ({ method, path, headers, body }); POST …/responses requests wait
// in a queue for next(); anything else is answered 404 (and is in log,
// for the test to see what else the agent asked for).
function start() {
  const log = [];
  const queue = [];
  const waiters = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      let body = raw;
      try { body = raw ? JSON.parse(raw) : undefined; } catch { /* kept as text */ }
      const entry = { method: req.method, path: req.url, headers: req.headers, body };
      log.push(entry);
      if (req.method !== 'POST' || !/\/responses$/.test(req.url.split('?')[0])) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `the scripted model has no ${req.method} ${req.url}`, type: 'not_found' } }));
        return;
      }
      let answered = false;
      entry.closed = false;
      res.on('close', () => { entry.closed = true; });
      entry.reply = (items) => {
        if (answered) throw new Error('request answered twice');
        answered = true;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(events(items, (body && body.model) || 'scripted'));
      };
      // fail answers with an HTTP error the API would send.
      entry.fail = (status, message) => {
        answered = true;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
      };
      const w = waiters.shift();
      if (w) w.resolve(entry); else queue.push(entry);
    });
  });
  const model = {
    log,
    // next is the next POST …/responses not yet taken, once it arrives;
    // it rejects after timeout ms.
    next(timeout = 60000) {
      if (queue.length) return Promise.resolve(queue.shift());
      return new Promise((resolve, reject) => {
        const w = { resolve: (e) => { clearTimeout(w.timer); resolve(e); } };
        w.timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no request to the model within ${timeout} ms`));
        }, timeout);
        waiters.push(w);
      });
    },
    // pending is how many requests wait to be taken.
    pending: () => queue.length,
    close() {
      for (const e of queue) e.fail(503, 'the scripted model is closing');
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      model.port = server.address().port;
      model.url = `http://127.0.0.1:${model.port}/v1`;
      resolve(model);
    });
  });
}

// Helpers to read a Responses request.

// outputsOf are the function_call_output items of a request's input,
// by call_id.
function outputsOf(body) {
  const m = new Map();
  for (const it of (body && body.input) || []) {
    if (it.type === 'function_call_output') m.set(it.call_id, it);
  }
  return m;
}

// outputText is the text of a function_call_output's output: a string,
// or a list of content items whose texts are joined.
function outputText(item) {
  if (!item) return undefined;
  const o = item.output;
  if (typeof o === 'string') return o;
  if (Array.isArray(o)) return o.map((c) => (typeof c === 'string' ? c : c.text || '')).join('');
  if (o && typeof o === 'object' && typeof o.content === 'string') return o.content;
  return JSON.stringify(o);
}

// findTool finds a function tool by name in a request's tools, inside a
// namespace or not: { namespace, name, tool } or undefined.
function findTool(body, pred) {
  for (const t of (body && body.tools) || []) {
    if (t.type === 'namespace') {
      for (const u of t.tools || []) if (pred(u.name, t.name)) return { namespace: t.name, name: u.name, tool: u };
    } else if (t.name && pred(t.name, undefined)) {
      return { namespace: undefined, name: t.name, tool: t };
    }
  }
  return undefined;
}

// toolNames lists a request's tools as the model sees them: namespace/name.
function toolNames(body) {
  const names = [];
  for (const t of (body && body.tools) || []) {
    if (t.type === 'namespace') for (const u of t.tools || []) names.push(`${t.name}/${u.name}`);
    else names.push(t.name || t.type);
  }
  return names;
}

module.exports = { start, functionCall, message, events, outputsOf, outputText, findTool, toolNames };
