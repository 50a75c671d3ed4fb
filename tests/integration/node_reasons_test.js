#!/usr/bin/env node
// The Node.js client (client/node/seed.js) reads the machine-readable reasons of a real
// kiln-server's errors (proto/kiln/v1/errors.proto) and acts on them: an evicted function is
// compiled again. The server starts on a free port of 127.0.0.1 with --cache_bytes=1 (one
// function at a time).
//
// Usage: node tests/integration/node_reasons_test.js PATH/TO/kiln-server
// Needs client/node/node_modules (npm ci there; tests/integration/node_client_test.sh does it).
'use strict';

const assert = require('assert');
const path = require('path');
const { spawn } = require('child_process');

const NAME = 'node_reasons_test';
const NODE_DIR = path.resolve(__dirname, '..', '..', 'client', 'node');

// The server's host:port once it logs "serving"; rejects when it exits first or takes 10 s.
function startServer(binary) {
  const server = spawn(binary, ['--host', '127.0.0.1', '--port', '0', '--metrics_port', '-1',
    '--cache_dir=', '--cache_bytes=1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const address = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "serving" within 10 s:\n${log}`)), 10000);
    server.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /"msg":"serving","address":"([^"]+)"/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`kiln-server exited (${code}):\n${log}`)));
  });
  return { server, address };
}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

async function main() {
  const binary = process.argv[2];
  if (!binary) {
    process.stderr.write('usage: node node_reasons_test.js PATH/TO/kiln-server\n');
    process.exit(2);
  }
  const kilnNode = require(path.join(NODE_DIR, 'seed.js'));
  const { call, compile, execute, seedGraph, float64Tensor, decodeFloat64 } = kilnNode;
  const { server, address } = startServer(binary);
  const kiln = kilnNode.loadKiln();
  const client = new kiln.Kiln(await address, kilnNode.channelCredentials(),
    kilnNode.CHANNEL_OPTIONS);
  try {
    const mismatch = await rejection(call(client, 'GetVersion', { client_protocol: 99 }));
    assert.strictEqual(mismatch.code, 'FAILED_PRECONDITION');
    assert.strictEqual(mismatch.reason, 'PROTOCOL_MISMATCH');
    assert.strictEqual(mismatch.reasonMetadata.client_protocol, '99');

    const f = await compile(client, { graph: seedGraph() });
    const other = seedGraph();
    other.constants[0].value.data = Buffer.from([3]);  // a + a**3: evicts f
    await compile(client, { graph: other });
    const x = [float64Tensor([0, 1, 2])];
    const gone = await rejection(call(client, 'Execute', { function_id: f.function_id, args: x }));
    assert.strictEqual(gone.code, 'NOT_FOUND');
    assert.strictEqual(gone.reason, 'FUNCTION_NOT_FOUND');
    assert.strictEqual(gone.reasonMetadata.function_id, f.function_id);
    const out = await execute(client, f, x);  // compiled again
    assert.deepStrictEqual(decodeFloat64(out.outputs[0]), [0, 2, 1026]);
    assert.strictEqual(f.source, 'compiled');

    const { session } = await call(client, 'CreateSession', {});
    const lost = await rejection(call(client, 'Execute', {
      function_id: f.function_id,
      session,
      arg_refs: [{ index: 0, region: { region: 'never-registered', offset: 0, size: 24 },
        dtype: 'DTYPE_FLOAT64', shape: [3] }],
    }));
    assert.strictEqual(lost.reason, 'REGION_UNKNOWN');
    assert.strictEqual(lost.reasonMetadata.region, 'never-registered');

    const bad = await rejection(call(client, 'Compile', { graph: { outputs: [{ input: 7 }] } }));
    assert.strictEqual(bad.code, 'INVALID_ARGUMENT');
    assert.strictEqual(bad.reason, '');
    console.log(`${NAME}: PASS`);
  } finally {
    client.close();
    server.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`${NAME}: FAIL: ${err.stack || err}\n`);
  process.exit(1);
});
