import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientResponseHeaders, upstreamRequestHeaders } from '#src/proxy/http/hop-headers.ts';

test('the client credentials and hop-by-hop headers never reach the node; the node key does', () => {
  const out = upstreamRequestHeaders({
    client: {
      authorization: 'Bearer client-secret',
      'x-api-key': 'client-key',
      connection: 'keep-alive, x-private',
      'x-private': 'drop me',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      host: 'gateway',
      'content-length': '999',
      'user-agent': 'test',
    },
    apiKey: 'node-secret',
    bodyBytes: 12,
    requestId: 'r1',
    clientAddress: '127.0.0.1',
  });
  assert.equal(out.authorization, 'Bearer node-secret');
  assert.equal(out['content-length'], '12');
  assert.equal(out['user-agent'], 'test');
  for (const name of ['x-api-key', 'connection', 'x-private', 'keep-alive', 'transfer-encoding', 'host']) {
    assert.equal(out[name], undefined, name);
  }
  assert.equal(out['x-forwarded-for'], '127.0.0.1');
});

test('without a node key no authorization header is sent at all', () => {
  const out = upstreamRequestHeaders({
    client: { authorization: 'Bearer x' },
    apiKey: undefined,
    bodyBytes: 0,
    requestId: 'r',
    clientAddress: undefined,
  });
  assert.equal(out.authorization, undefined);
});

test('hop-by-hop response headers are stripped, the rest pass', () => {
  const out = clientResponseHeaders({
    connection: 'close',
    'transfer-encoding': 'chunked',
    'content-type': 'text/event-stream',
    'x-accel-buffering': 'no',
  });
  assert.deepEqual(out, { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' });
});

test('headers that would bind the client to what sits behind the gateway are not passed on', () => {
  const out = clientResponseHeaders({
    'content-type': 'application/json',
    'Set-Cookie': ['a=1', 'b=2'],
    'set-cookie2': 'c=3',
    location: 'http://10.0.0.5/x',
    'content-location': '/x',
    refresh: '0',
    'alt-svc': 'h3=":443"',
    'strict-transport-security': 'max-age=1',
  });
  assert.deepEqual(out, { 'content-type': 'application/json' });
});

test('nodes are asked for plain bytes whatever the client accepts', () => {
  const out = upstreamRequestHeaders({
    client: { 'accept-encoding': 'gzip, deflate, br' },
    apiKey: undefined,
    bodyBytes: 0,
    requestId: 'r',
    clientAddress: undefined,
  });
  assert.equal(out['accept-encoding'], 'identity');
});

test('a multipart body keeps its content-type (the boundary is in it); every other body is sent as JSON', () => {
  const head = (contentType: string | undefined): string | undefined =>
    upstreamRequestHeaders({
      client: contentType === undefined ? {} : { 'content-type': contentType },
      apiKey: undefined,
      bodyBytes: 0,
      requestId: 'r',
      clientAddress: undefined,
    })['content-type'];
  assert.equal(head('multipart/form-data; boundary=abc'), 'multipart/form-data; boundary=abc');
  assert.equal(head('Multipart/Form-Data; boundary="x y"'), 'Multipart/Form-Data; boundary="x y"');
  assert.equal(head('multipart/form-data'), 'application/json', 'no boundary: not a usable multipart type');
  assert.equal(head('text/plain'), 'application/json');
  assert.equal(head(undefined), 'application/json');
});

test('Connection: keep-alive (either spelling) drops keep-alive and itself, and every other header passes, at both edges', () => {
  for (const connection of ['keep-alive', 'Keep-Alive']) {
    const up = upstreamRequestHeaders({
      client: { connection, 'keep-alive': 'timeout=5', 'user-agent': 'test', 'x-trace': 't' },
      apiKey: undefined,
      bodyBytes: 0,
      requestId: 'r',
      clientAddress: undefined,
    });
    assert.equal(up.connection, undefined);
    assert.equal(up['keep-alive'], undefined);
    assert.equal(up['user-agent'], 'test');
    assert.equal(up['x-trace'], 't');
    const down = clientResponseHeaders({
      connection,
      'keep-alive': 'timeout=5',
      'content-type': 'application/json',
      'x-trace': 't',
    });
    assert.deepEqual(down, { 'content-type': 'application/json', 'x-trace': 't' });
  }
  // A list naming more than keep-alive still drops what it names.
  assert.deepEqual(clientResponseHeaders({ connection: 'keep-alive, x-node-private', 'x-node-private': 'p', 'x-trace': 't' }), {
    'x-trace': 't',
  });
});
