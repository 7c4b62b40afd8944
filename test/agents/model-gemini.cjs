// A scripted Gemini API on 127.0.0.1 for driving the real Gemini CLI
// without the internet. It speaks what the CLI's bundled @google/genai
// sends with an API key and GOOGLE_GEMINI_BASE_URL:
//   POST /v1beta/models/<model>:streamGenerateContent?alt=sse  (SSE, "data: <json>\n\n")
//   POST /v1beta/models/<model>:generateContent                (JSON)
//   POST /v1beta/models/<model>:countTokens                    (JSON)
// Every request is kept (requests), and each generate request is answered
// by the test's answer(req), which returns a GenerateContentResponse, or
// a candidate's parts, made with call() and text() below.
// No npm dependencies: node:http only.
'use strict';
const http = require('node:http');

// text is a part with the model's text.
const text = (t) => ({ text: t });
// call is a part calling function name with args.
const call = (name, args) => ({ functionCall: { name, args } });

// response wraps parts as the API's GenerateContentResponse.
function response(parts, finishReason = 'STOP') {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: 'scripted',
  };
}

// start listens on 127.0.0.1 (a free port) and answers with answer(req),
// where req is { method, path, model, action, headers, body, n } (n counts
// the generate requests from 0). It resolves to the server's handle:
// url (the base URL for GOOGLE_GEMINI_BASE_URL), requests, errors (what
// answer threw), waitFor(pred, ms) for a request that matches, close().
function start(answer) {
  const requests = [];
  const errors = [];
  const waiters = [];
  let generated = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { raw += d; });
    req.on('end', async () => {
      const url = new URL(req.url, 'http://127.0.0.1');
      const m = /^\/[^/]+\/models\/([^:/]+):([A-Za-z]+)$/.exec(url.pathname);
      let body;
      try { body = raw ? JSON.parse(raw) : undefined; } catch { body = raw; }
      const r = { method: req.method, path: url.pathname, query: url.search, model: m && m[1], action: m && m[2], headers: req.headers, body };
      requests.push(r);
      for (const w of waiters.slice()) {
        if (w.pred(r)) { waiters.splice(waiters.indexOf(w), 1); clearTimeout(w.timer); w.resolve(r); }
      }
      const json = (status, obj) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      if (req.method !== 'POST' || !m) {
        json(404, { error: { code: 404, message: `scripted model: no ${req.method} ${url.pathname}`, status: 'NOT_FOUND' } });
        return;
      }
      if (m[2] === 'countTokens') {
        json(200, { totalTokens: Math.ceil(raw.length / 4) });
        return;
      }
      if (m[2] !== 'generateContent' && m[2] !== 'streamGenerateContent') {
        json(404, { error: { code: 404, message: `scripted model: no action ${m[2]}`, status: 'NOT_FOUND' } });
        return;
      }
      r.n = generated++;
      let out;
      try {
        out = await answer(r);
        if (Array.isArray(out)) out = response(out);
      } catch (err) {
        errors.push(err);
        json(500, { error: { code: 500, message: `scripted model: ${err.message}`, status: 'INTERNAL' } });
        return;
      }
      r.answered = out;
      if (m[2] === 'generateContent') {
        json(200, out);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(`data: ${JSON.stringify(out)}\r\n\r\n`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        errors,
        // waitFor resolves with the first request (kept or coming) that
        // matches pred, or rejects after ms.
        waitFor(pred, ms = 60000) {
          const seen = requests.find(pred);
          if (seen) return Promise.resolve(seen);
          return new Promise((res, rej) => {
            const w = { pred, resolve: res };
            w.timer = setTimeout(() => { waiters.splice(waiters.indexOf(w), 1); rej(new Error('no such request to the model')); }, ms);
            waiters.push(w);
          });
        },
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
      });
    });
  });
}

module.exports = { start, call, text, response };
