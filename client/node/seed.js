#!/usr/bin/env node
// A small Node.js client of the Kiln service (proto/kiln/v1/service.proto): the protocol
// handshake, then Compile of the seed graph a + a**10 built by hand as a kiln.v1.Graph, then
// Execute on the float64 vector [0, 1, 2].
//
// Usage: node seed.js HOST:PORT
'use strict';

const path = require('path');
const crypto = require('crypto');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

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

// Calls a unary RPC with a deadline; resolves to its response, rejects with an Error naming
// the RPC and the gRPC status.
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

// Calls `method`; `route` (a function id or session) is the `kiln-route` a front hashes to pick
// a replica, and the call id, the same on every retry, lets a retried update apply once.
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
        reject(new Error(`${method} failed: ${code}: ${err.details || err.message}`));
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

    const compiled = await call(client, 'Compile', { graph: seedGraph() });
    console.log(`function_id ${compiled.function_id.slice(0, 16)}... (${compiled.source})`);

    const x = [0, 1, 2];
    const executed = await call(client, 'Execute', {
      function_id: compiled.function_id,
      args: [float64Tensor(x)],
    }, compiled.function_id);
    if (executed.outputs.length !== 1) {
      throw new Error(`Execute returned ${executed.outputs.length} outputs, expected 1`);
    }
    const y = decodeFloat64(executed.outputs[0]);
    console.log(`a + a**10 on [${x.join(', ')}] = [${y.join(', ')}]`);
  } finally {
    client.close();
  }
}

main().catch((err) => fail(err.message));
