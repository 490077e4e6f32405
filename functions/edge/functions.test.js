// The CloudFront Functions of template.yaml, run under Node as CloudFront runs them: each
// file's handler, loaded alone into a fresh context, on viewer-request events of the shape
// CloudFront passes (the CloudFront Developer Guide, "CloudFront Functions event
// structure": version 1.0, context, viewer, request with lowercase header names, and
// query strings, headers and cookies as {value} objects, multiValue when repeated).
// Run: node --test functions/edge/ (infra/tests/samtemplate's TestEdgeFunctionsUnderNode does).
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

// load runs a function's file as CloudFront would, after CloudFormation's Fn::Sub has
// written the template's parameters into it (cache-key.js names FrontendUrl and
// ExtraCorsOrigins; the others name none).
function load(file, params) {
  const ctx = {};
  const values = Object.assign({FrontendUrl: 'https://mediacatalog.app', ExtraCorsOrigins: 'https://admin.mediacatalog.app,https://preview.mediacatalog.app'}, params);
  const code = fs.readFileSync(path.join(__dirname, file), 'utf8').replace(/\$\{(\w+)\}/g, (_, name) => {
    assert.ok(name in values, file + ' substitutes ${' + name + '}');
    return values[name];
  });
  vm.runInNewContext(code + '\nthis.handler = handler;', ctx);
  return ctx;
}

// viewerRequest builds the event CloudFront passes to a viewer-request function.
function viewerRequest(method, uri, querystring, headers, cookies) {
  return {
    version: '1.0',
    context: {
      distributionDomainName: 'd111111abcdef8.cloudfront.net',
      distributionId: 'EDFDVBD6EXAMPLE',
      eventType: 'viewer-request',
      requestId: '4TyzHTaYWb1GX1qTfsHhEqV6HUDd_BzoBZnwfnvQc_1oF26ClkoUSEQ=='
    },
    viewer: {ip: '198.51.100.11'},
    request: {
      method: method,
      uri: uri,
      querystring: querystring || {},
      headers: Object.assign({host: {value: 'api.mediacatalog.app'}, accept: {value: 'application/json'}}, headers || {}),
      cookies: cookies || {}
    }
  };
}

// originQuery is the query string CloudFront sends on (and keys the cache by) for a
// returned request: its parameters in the object's order.
function originQuery(request) {
  const parts = [];
  for (const name of Object.keys(request.querystring)) {
    const p = request.querystring[name];
    const values = p.multiValue ? p.multiValue.map((v) => v.value) : [p.value];
    for (const v of values) {
      parts.push(v === '' ? name + '=' : name + '=' + v);
    }
  }
  return parts.join('&');
}

function isResponse(out) {
  return out.statusCode !== undefined;
}

test('cache key: documented parameters only, first value, one order', () => {
  const {handler} = load('cache-key.js');
  const cases = [
    ['/tags', {client: {value: '1'}}, 'client=1'],
    ['/tags', {utm_source: {value: 'x'}, client: {value: '1'}, _: {value: '1700000000'}}, 'client=1'],
    ['/tags', {Client: {value: '1'}}, ''],
    ['/tags', {client: {value: '1', multiValue: [{value: '1'}, {value: '2'}]}}, 'client=1'],
    ['/tags/id/3', {client: {value: '1'}, cb: {value: 'x'}}, ''],
    ['/publishers', {search: {value: 'ko'}, order: {value: 'name-asc'}, client: {value: '2'}, limit: {value: '20'}}, 'client=2&limit=20&order=name-asc&search=ko'],
    ['/publishers', {offset: {value: '0'}, lang: {value: 'en'}, client: {value: '2'}, user_lang: {value: 'en'}}, 'client=2&lang=en&offset=0'],
    ['/publishers', {search: {value: ''}, client: {value: '2'}}, 'client=2&search='],
    ['/publisher/slug/kodansha', {client: {value: '1'}}, ''],
    ['/publisher/random', {client: {value: '1'}, r: {value: '0.42'}}, 'client=1'],
    ['/publisher/publications/1', {user_lang: {value: 'ja'}, search: {value: 'a%20b'}, client: {value: '1'}, lang: {value: 'en'}}, 'client=1&search=a%20b&user_lang=ja'],
    ['/publisher/publications/1', {order: {value: 'added-desc'}, offset: {value: '40'}, limit: {value: '20'}, client: {value: '1'}}, 'client=1&limit=20&offset=40&order=added-desc'],
    // Paths that are no public read route keep nothing (the origin answers 404 alike).
    ['/tags/', {client: {value: '1'}}, ''],
    ['/publisher/publications/', {client: {value: '1'}}, ''],
    ['/publisher/publications/1/x', {client: {value: '1'}}, ''],
    ['/publishersx', {client: {value: '1'}}, '']
  ];
  for (const [uri, qs, want] of cases) {
    const ev = viewerRequest('GET', uri, qs, {origin: {value: 'https://mediacatalog.app'}}, {refreshToken: {value: 't'}});
    const headers = JSON.stringify(ev.request.headers);
    const cookies = JSON.stringify(ev.request.cookies);
    const out = handler(ev);
    assert.ok(!isResponse(out), uri + ': answered at the edge');
    assert.strictEqual(originQuery(out), want, uri + ' ' + JSON.stringify(qs));
    assert.strictEqual(out.uri, uri);
    assert.strictEqual(out.method, 'GET');
    assert.strictEqual(JSON.stringify(out.headers), headers, 'headers untouched');
    assert.strictEqual(JSON.stringify(out.cookies), cookies, 'cookies untouched');
  }
});

test('cache key: every spelling of one request is one key', () => {
  const {handler} = load('cache-key.js');
  const spellings = [
    {client: {value: '1'}, order: {value: 'name-asc'}, limit: {value: '3'}},
    {limit: {value: '3'}, client: {value: '1'}, order: {value: 'name-asc'}},
    {order: {value: 'name-asc'}, fbclid: {value: 'abc'}, limit: {value: '3'}, client: {value: '1'}},
    {order: {value: 'name-asc', multiValue: [{value: 'name-asc'}, {value: 'name-desc'}]}, limit: {value: '3'}, client: {value: '1'}}
  ];
  const keys = new Set(spellings.map((qs) => originQuery(handler(viewerRequest('GET', '/publishers', qs)))));
  assert.deepStrictEqual([...keys], ['client=1&limit=3&order=name-asc']);
});

test('cache key: Origin only when it is a CORS origin, exactly', () => {
  const {handler} = load('cache-key.js');
  const kept = ['https://mediacatalog.app', 'https://admin.mediacatalog.app', 'https://preview.mediacatalog.app'];
  const dropped = ['https://evil.example', 'null', '', 'https://mediacatalog.app/', 'https://MEDIACATALOG.app', 'http://mediacatalog.app',
    'https://mediacatalog.app:443', 'https://mediacatalog.app.evil.example', 'https://evil.mediacatalog.app', ' https://mediacatalog.app',
    'https://mediacatalog.app,https://evil.example', 'https://admin.mediacatalog.app,https://preview.mediacatalog.app'];
  for (const method of ['GET', 'HEAD', 'OPTIONS']) {
    for (const origin of kept) {
      const out = handler(viewerRequest(method, '/tags', {client: {value: '1'}}, {origin: {value: origin}}));
      assert.strictEqual(JSON.stringify(out.headers.origin), JSON.stringify({value: origin}), method + ' ' + origin);
    }
    for (const origin of dropped) {
      const out = handler(viewerRequest(method, '/tags', {client: {value: '1'}}, {origin: {value: origin}}));
      assert.ok(!('origin' in out.headers), method + ' ' + JSON.stringify(origin) + ' reaches the cache key');
      assert.strictEqual(out.headers.host.value, 'api.mediacatalog.app', 'other headers untouched');
    }
  }
  // Two Origin headers are no browser's: neither reaches the key.
  const twice = handler(viewerRequest('GET', '/tags', {}, {origin: {value: kept[0], multiValue: [{value: kept[0]}, {value: 'https://evil.example'}]}}));
  assert.ok(!('origin' in twice.headers));
  // No Origin stays none.
  assert.ok(!('origin' in handler(viewerRequest('GET', '/tags', {})).headers));
  // Without extra origins only the frontend's is kept; an empty Origin matches no empty slot.
  const {handler: frontendOnly} = load('cache-key.js', {ExtraCorsOrigins: ''});
  assert.strictEqual(JSON.stringify(frontendOnly(viewerRequest('GET', '/tags', {}, {origin: {value: kept[0]}})).headers.origin), JSON.stringify({value: kept[0]}));
  for (const origin of [kept[1], '']) {
    assert.ok(!('origin' in frontendOnly(viewerRequest('GET', '/tags', {}, {origin: {value: origin}})).headers), JSON.stringify(origin));
  }
});

test('cache key: every invented Origin is one key, the one without Origin', () => {
  const {handler} = load('cache-key.js');
  const keys = new Set();
  for (let i = 0; i < 50; i++) {
    const out = handler(viewerRequest('GET', '/publishers', {client: {value: '1'}}, {origin: {value: 'https://x' + i + '.example'}}));
    keys.add(JSON.stringify([out.headers.origin || null, originQuery(out)]));
  }
  assert.deepStrictEqual([...keys], [JSON.stringify([null, 'client=1'])]);
});

test('cache key: a request without a query string passes unchanged', () => {
  const {handler} = load('cache-key.js');
  for (const method of ['GET', 'HEAD', 'OPTIONS']) {
    const out = handler(viewerRequest(method, '/tags', {}));
    assert.ok(!isResponse(out));
    assert.strictEqual(out.method, method);
    assert.strictEqual(originQuery(out), '');
  }
});

test('not found: every method and path answers the 404 Response Model at the edge', () => {
  const {handler} = load('not-found.js');
  for (const [method, uri] of [['GET', '/'], ['GET', '/docs'], ['POST', '/user/avatar/change/3'], ['DELETE', '/user/avatar/change/3'], ['GET', '/.env']]) {
    const out = handler(viewerRequest(method, uri, {}));
    assert.strictEqual(out.statusCode, 404, method + ' ' + uri);
    assert.strictEqual(out.headers['cache-control'].value, 'no-store');
    assert.strictEqual(out.headers['content-type'].value, 'application/json');
    assert.deepStrictEqual(JSON.parse(out.body.data), {data: 'Not found', code: 404});
  }
});

test('avatar: the canonical spellings pass, every other is 404', () => {
  const {handler} = load('avatar-canonical.js');
  const pass = ['/user/avatar/3', '/user/avatar/3/high', '/user/avatar/3/scaled', '/user/avatar/1234567890123456789'];
  const refuse = ['/user/avatar/%33', '/user/avatar/3/hig%68', '/user/avatar/03', '/user/avatar/+3', '/user/avatar/3/',
    '/user/avatar/3/HIGH', '/user/avatar/3/medium', '/user/avatar/0', '/user/avatar/3%2Fhigh',
    '/user/avatar/12345678901234567890', '/user/avatar/', '/user/avatar/change/3'];
  for (const uri of pass) {
    const out = handler(viewerRequest('GET', uri, {}));
    assert.ok(!isResponse(out), uri);
    assert.strictEqual(out.uri, uri);
  }
  for (const uri of refuse) {
    const out = handler(viewerRequest('GET', uri, {}));
    assert.strictEqual(out.statusCode, 404, uri);
    assert.deepStrictEqual(JSON.parse(out.body.data), {data: 'User not found', code: 404});
  }
});
