#!/usr/bin/env node
// A small Node.js client of the Kiln service (proto/kiln/v1/service.proto): the protocol
// handshake, then Compile of the seed graph a + a**10 built by hand as a kiln.v1.Graph, then
// Execute on the float64 vector [0, 1, 2]. A failed call carries the server's machine-readable
// reason (proto/kiln/v1/errors.proto): an evicted function is compiled again, as the C++ and
// Python clients do. Its helpers are exported for tests/integration/node_reasons_test.js.
//
// Usage: node seed.js HOST:PORT
'use strict';

const path = require('path');
const crypto = require('crypto');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const PROTOCOL = 2;
const DEADLINE_MS = 30000;
const PROTO_DIR = path.resolve(__dirname, '..', '..', 'proto');

function fail(message) {
  process.stderr.write(`seed.js: ${message}\n`);
  process.exit(1);
}

function loadKiln() {
  const definition = protoLoader.loadSync(path.join(PROTO_DIR, 'kiln', 'v1', 'service.proto'), {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).kiln.v1;
}

// gRPC retries a call that finds a replica gone (UNAVAILABLE) on another, as the C++ and Python
// clients do: behind a front (deploy/cluster.sh), a replica's death costs a retry, not an error.
const CHANNEL_OPTIONS = {
  'grpc.enable_retries': 1,
  'grpc.service_config': JSON.stringify({
    methodConfig: [{
      name: [{ service: 'kiln.v1.Kiln' }],
      retryPolicy: {
        maxAttempts: 5, initialBackoff: '0.05s', maxBackoff: '1s', backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    }],
  }),
};

// kiln.v1.RpcStatus and ErrorInfo, loaded on first use.
let errorTypes = null;

// The reason of a failed call (a kiln.v1.ErrorReason's name, '' when it has none) and what it is
// about, from its status's binary details (`grpc-status-details-bin`).
function errorInfoOf(err) {
  const details = err && err.metadata ? err.metadata.get('grpc-status-details-bin') : [];
  if (details.length === 0) return { reason: '', metadata: {} };
  if (errorTypes === null) {
    const root = new protobuf.Root().loadSync(path.join(PROTO_DIR, 'kiln', 'v1', 'errors.proto'),
      { keepCase: true });
    errorTypes = { status: root.lookupType('kiln.v1.RpcStatus'),
      info: root.lookupType('kiln.v1.ErrorInfo') };
  }
  try {
    const status = errorTypes.status.decode(details[0]);
    for (const any of status.details) {
      if (any.type_url !== 'type.googleapis.com/kiln.v1.ErrorInfo') continue;
      const info = errorTypes.info.toObject(errorTypes.info.decode(any.value),
        { enums: String, defaults: true });
      // A number: a reason newer than this client, taken as none.
      const known = typeof info.reason === 'string' && info.reason !== 'ERROR_REASON_UNSPECIFIED';
      const reason = known ? info.reason : '';
      return { reason, metadata: info.metadata || {} };
    }
  } catch (e) {
    // not Kiln's details (a proxy's): the code alone
  }
  return { reason: '', metadata: {} };
}

// Calls a unary RPC with a deadline; resolves to its response, rejects with an Error naming the
// RPC and the gRPC status, with `code` (the status name), `reason` and `reasonMetadata`
// (errorInfoOf) to act on. `route` (a function id or session) is the `kiln-route` a front hashes
// to pick a replica, and the call id, the same on every retry, lets a retried update apply once.
function call(client, method, request, route) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + DEADLINE_MS);
    const metadata = new grpc.Metadata();
    if (process.env.KILN_TOKEN) metadata.set('authorization', `Bearer ${process.env.KILN_TOKEN}`);
    if (route) metadata.set('kiln-route', route);
    metadata.set('kiln-call-id', crypto.randomUUID().replace(/-/g, ''));
    client[method](request, metadata, { deadline }, (err, response) => {
      if (err) {
        const code = grpc.status[err.code] !== undefined ? grpc.status[err.code] : err.code;
        const error = new Error(`${method} failed: ${code}: ${err.details || err.message}`);
        const { reason, metadata } = errorInfoOf(err);
        Object.assign(error, { code, reason, reasonMetadata: metadata });
        reject(error);
      } else {
        resolve(response);
      }
    });
  });
}

// Attribute helpers (kiln.v1.Attr with a kiln.v1.AttrValue oneof).
const intAttr = (name, i) => ({ name, value: { i } });
const intsAttr = (name, values) => ({ name, value: { ints: { values } } });
const strAttr = (name, s) => ({ name, value: { s } });

// Value references (kiln.v1.ValueRef oneof).
const input = (index) => ({ input: index });
const constant = (index) => ({ constant: index });
const nodeOutput = (node, output = 0) => ({ node_output: { node, output } });

// a + a**10 exactly as the C++ DSL sends it: a float64 vector input, the exponent as an int8
// scalar constant broadcast to one dim by a DimShuffle, then Elemwise pow and add. Output types
// are left out: the server infers them.
function seedGraph() {
  return {
    inputs: [
      { name: 'a', type: { dtype: 'DTYPE_FLOAT64', shape: [{ known: false, size: 0 }] } },
    ],
    constants: [
      {
        value: { dtype: 'DTYPE_INT8', shape: [], data: Buffer.from([10]) },
        type: { dtype: 'DTYPE_INT8', shape: [] },
      },
    ],
    nodes: [
      {
        op: {
          kind: 'DimShuffle',
          attrs: [intsAttr('input_broadcastable', []), intsAttr('new_order', [-1]), intAttr('inplace', 1)],
        },
        inputs: [constant(0)],
      },
      {
        op: { kind: 'Elemwise', attrs: [strAttr('scalar_op', 'pow')] },
        inputs: [input(0), nodeOutput(0)],
      },
      {
        op: { kind: 'Elemwise', attrs: [strAttr('scalar_op', 'add')] },
        inputs: [input(0), nodeOutput(1)],
      },
    ],
    outputs: [nodeOutput(2)],
  };
}

function float64Tensor(values) {
  return {
    dtype: 'DTYPE_FLOAT64',
    shape: [values.length],
    data: Buffer.from(new Float64Array(values).buffer),
  };
}

// The elements of a float64 kiln.v1.Tensor. The returned Buffer may sit at any offset of a
// shared ArrayBuffer, so copy it into a fresh (8-byte aligned) one first.
function decodeFloat64(tensor) {
  if (tensor.dtype !== 'DTYPE_FLOAT64') {
    throw new Error(`expected a DTYPE_FLOAT64 output, got ${tensor.dtype}`);
  }
  const data = tensor.data;
  if (data.length % 8 !== 0) {
    throw new Error(`float64 output of ${data.length} bytes`);
  }
  const count = tensor.shape.reduce((n, d) => n * Number(d), 1);
  if (count * 8 !== data.length) {
    throw new Error(`output of shape [${tensor.shape.join(', ')}] has ${data.length} bytes`);
  }
  const copy = new ArrayBuffer(data.length);
  new Uint8Array(copy).set(data);
  return Array.from(new Float64Array(copy));
}

// Compiles `request` (a kiln.v1.CompileRequest); the function keeps it, so that execute can
// compile it again.
async function compile(client, request) {
  return { request, ...(await call(client, 'Compile', request)) };
}

// Execute of a function compile returned, on `args` (kiln.v1.Tensor); when the server no longer
// has it (FUNCTION_NOT_FOUND: evicted, or restarted), compiles it again and retries.
async function execute(client, fn, args) {
  for (let attempt = 0; ; ++attempt) {
    try {
      return await call(client, 'Execute', { function_id: fn.function_id, args }, fn.function_id);
    } catch (err) {
      if (attempt === 2 || err.reason !== 'FUNCTION_NOT_FOUND') throw err;
      Object.assign(fn, await compile(client, fn.request));
    }
  }
}

// TLS when KILN_TLS_CA names the server's CA (mutual with KILN_TLS_CERT and KILN_TLS_KEY), else
// plaintext; KILN_TOKEN goes with every call.
function channelCredentials() {
  const read = (name) => (process.env[name] ? fs.readFileSync(process.env[name]) : null);
  if (!process.env.KILN_TLS_CA && !process.env.KILN_TLS_CERT) {
    return grpc.credentials.createInsecure();
  }
  return grpc.credentials.createSsl(read('KILN_TLS_CA'), read('KILN_TLS_KEY'),
    read('KILN_TLS_CERT'));
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length !== 1 || !args[0] || args[0].startsWith('-')) {
    process.stderr.write('usage: node seed.js HOST:PORT\n');
    process.exit(2);
  }
  const target = args[0];

  const kiln = loadKiln();
  const client = new kiln.Kiln(target, channelCredentials(), CHANNEL_OPTIONS);
  try {
    const version = await call(client, 'GetVersion', { client_protocol: PROTOCOL });
    console.log(`server ${version.server_version} (protocol ${version.protocol})`);

    const compiled = await compile(client, { graph: seedGraph() });
    console.log(`function_id ${compiled.function_id.slice(0, 16)}... (${compiled.source})`);

    const x = [0, 1, 2];
    const executed = await execute(client, compiled, [float64Tensor(x)]);
    if (executed.outputs.length !== 1) {
      throw new Error(`Execute returned ${executed.outputs.length} outputs, expected 1`);
    }
    const y = decodeFloat64(executed.outputs[0]);
    console.log(`a + a**10 on [${x.join(', ')}] = [${y.join(', ')}]`);
  } finally {
    client.close();
  }
}

module.exports = {
  PROTOCOL, CHANNEL_OPTIONS, loadKiln, channelCredentials, call, compile, execute, errorInfoOf,
  seedGraph, float64Tensor, decodeFloat64,
};

if (require.main === module) main().catch((err) => fail(err.message));
