#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// A real OTLP/gRPC profiles receiver for hostprof's unit tests (tests/unit/test_transport_grpc.c),
// built on @grpc/grpc-js and @grpc/proto-loader and loading the repository's own .proto files, so
// that the C transport is checked against an independent gRPC implementation rather than against
// itself.
//
//   node server.js [--port N] [--out DIR] [--proto DIR] [--answers LIST] [--unavailable N]
//                  [--max-calls N] [--timeout SECONDS] [--exit-with-stdin] [--tls DIR]
//
// It listens on 127.0.0.1 (port 0 = any free port) and prints "listening 127.0.0.1:PORT" on
// stdout once it accepts calls. --proto is the include path of the .proto files (default: the
// repository's proto/). Every request stream is numbered from 1; for each one it writes
// DIR/call-N.json (compact JSON on one line, so that tests can match substrings; written to a
// temporary name and renamed before the answer is sent) holding the decoded request (keepCase,
// 64-bit integers as strings), the received metadata, and what was seen on the wire: the raw
// request headers, the gRPC frame's compressed flag and length. grpc-js decompresses gzip
// messages itself and hides whether a message was compressed, hence the peek at the raw HTTP/2
// stream.
//
// Answers are scripted per call, in order; calls past the end of the list are answered "ok":
//   ok                  OK, empty ExportProfilesServiceResponse
//   partial:N[:MSG]     OK with partial_success {rejected_profiles: N, error_message: MSG}
//   garbage             OK with a response message that is not protobuf
//   unavailable[:MSG]   UNAVAILABLE (14)
//   exhausted-retry:MS  RESOURCE_EXHAUSTED (8) with a google.rpc.RetryInfo of MS milliseconds in
//                       grpc-status-details-bin
//   exhausted           RESOURCE_EXHAUSTED without RetryInfo
//   invalid[:MSG]       INVALID_ARGUMENT (3); the default message needs percent-decoding
//   code:N[:MSG]        any gRPC status N
//   http:STATUS         a bare HTTP answer without grpc-status, as a proxy in front would send
//   slow:MS             OK after MS milliseconds
//   raw:NAME            a hand-made HTTP/2 answer from RAW below: what grpc-js never sends
//                       (compressed answers) and broken ones, for the client's parsers
// --unavailable N puts N "unavailable" answers before the list.
//
// With --tls DIR it serves TLS (ALPN h2) with DIR/cert.pem and DIR/key.pem.
//
// Bounded: it exits after --max-calls request streams have been answered (default 100) or after
// --timeout seconds (default 30, exit status 3), and with --exit-with-stdin when its stdin closes
// (the test holds the other end, so a crashed test does not leave a server behind).
'use strict';

const fs = require('fs');
const http2 = require('http2');
const path = require('path');
const zlib = require('zlib');

const SERVICE = 'opentelemetry.proto.collector.profiles.v1development.ProfilesService';
const SERVICE_PROTO = 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto';
// Carries the stream's number from the raw HTTP/2 layer to the grpc-js handler; removed again
// before the metadata is recorded.
const CALL_KEY = 'x-hostprof-test-call';

function usage(msg) {
	process.stderr.write(`server.js: ${msg}\n`);
	process.exit(2);
}

function parseArgs(argv) {
	const o = {
		port: 0,
		out: null,
		proto: path.join(__dirname, '..', '..', 'proto'),
		answers: [],
		maxCalls: 100,
		timeout: 30,
		exitWithStdin: false,
		tls: null,
	};
	let unavailable = 0;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const val = () => {
			if (i + 1 >= argv.length)
				usage(`${a} needs a value`);
			return argv[++i];
		};
		const int = () => {
			const v = val();
			if (!/^[0-9]+$/.test(v))
				usage(`${a}: '${v}' is not a non-negative integer`);
			return Number(v);
		};
		switch (a) {
		case '--port': o.port = int(); break;
		case '--out': o.out = val(); break;
		case '--proto': o.proto = val(); break;
		case '--answers': o.answers = val().split(',').filter((s) => s !== ''); break;
		case '--unavailable': unavailable = int(); break;
		case '--max-calls': o.maxCalls = int(); break;
		case '--timeout': o.timeout = int(); break;
		case '--exit-with-stdin': o.exitWithStdin = true; break;
		case '--tls': o.tls = val(); break;
		default: usage(`unknown argument '${a}'`);
		}
	}
	o.answers = Array(unavailable).fill('unavailable').concat(o.answers);
	for (const ans of o.answers)
		parseAnswer(ans); // reject a bad script before listening
	return o;
}

// "kind:arg:rest" -> {kind, arg, rest}; the message part may itself contain ':'.
function parseAnswer(s) {
	const parts = s.split(':');
	const a = { kind: parts[0], arg: parts[1], msg: parts.slice(2).join(':') || undefined };
	const num = (v) => {
		if (v === undefined || !/^[0-9]+$/.test(v))
			usage(`answer '${s}' needs a number`);
		return Number(v);
	};
	switch (a.kind) {
	case 'ok':
	case 'garbage':
	case 'exhausted':
		break;
	case 'unavailable':
	case 'invalid':
		a.msg = parts.slice(1).join(':') || undefined;
		break;
	case 'raw':
		if (!Object.prototype.hasOwnProperty.call(RAW, a.arg))
			usage(`unknown raw answer '${a.arg}'`);
		break;
	case 'partial':
	case 'exhausted-retry':
	case 'code':
	case 'http':
	case 'slow':
		a.n = num(a.arg);
		break;
	default:
		usage(`unknown answer '${s}'`);
	}
	return a;
}

// --- protobuf encoding of google.rpc.Status / RetryInfo, which our protos do not define ---

function varint(n) {
	const out = [];
	let v = BigInt(n);
	do {
		let b = Number(v & 0x7fn);
		v >>= 7n;
		if (v !== 0n)
			b |= 0x80;
		out.push(b);
	} while (v !== 0n);
	return Buffer.from(out);
}

function field(num, wireType, payload) {
	const key = varint((num << 3) | wireType);
	if (wireType === 0)
		return Buffer.concat([key, varint(payload)]);
	const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
	return Buffer.concat([key, varint(bytes.length), bytes]);
}

// google.rpc.Status{code, message, details: [Any{type.googleapis.com/google.rpc.RetryInfo}]}
function statusWithRetryInfo(code, message, delayMs) {
	const seconds = Math.floor(delayMs / 1000);
	const nanos = (delayMs % 1000) * 1000000;
	let duration = Buffer.alloc(0);
	if (seconds)
		duration = Buffer.concat([duration, field(1, 0, seconds)]);
	if (nanos)
		duration = Buffer.concat([duration, field(2, 0, nanos)]);
	const retryInfo = field(1, 2, duration);
	const any = Buffer.concat([
		field(1, 2, 'type.googleapis.com/google.rpc.RetryInfo'),
		field(2, 2, retryInfo),
	]);
	return Buffer.concat([field(1, 0, code), field(2, 2, message), field(3, 2, any)]);
}

// A gRPC message frame: compressed flag, big-endian length, message.
function frame(flag, msg) {
	const hdr = Buffer.alloc(5);
	hdr[0] = flag;
	hdr.writeUInt32BE(msg.length, 1);
	return Buffer.concat([hdr, msg]);
}

// ExportProfilesServiceResponse{partial_success{rejected_profiles, error_message}}
function partialSuccess(rejected, message) {
	return field(1, 2, Buffer.concat([field(1, 0, rejected), field(2, 2, message)]));
}

// Hand-made answers: {headers, body, trailers}; no trailers = the stream ends with the body;
// no body = a trailers-only answer carrying `headers`.
const RAW = {
	// grpc-js servers never compress their answers; other servers do when offered gzip.
	'gzip-partial': () => ({
		headers: { 'grpc-encoding': 'gzip' },
		body: frame(1, zlib.gzipSync(partialSuccess(7, 'seven rejected'))),
		trailers: { 'grpc-status': '0' },
	}),
	'cut-frame': () => ({
		// the frame announces 100 bytes, 10 follow
		body: Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), Buffer.alloc(10)]),
		trailers: { 'grpc-status': '0' },
	}),
	'bad-gzip': () => ({
		headers: { 'grpc-encoding': 'gzip' },
		body: frame(1, Buffer.from('this is not gzip at all')),
		trailers: { 'grpc-status': '0' },
	}),
	'gzip-no-encoding': () => ({
		body: frame(1, zlib.gzipSync(partialSuccess(1, 'x'))),
		trailers: { 'grpc-status': '0' },
	}),
	'two-messages': () => ({
		body: Buffer.concat([frame(0, Buffer.alloc(0)), frame(0, Buffer.alloc(0))]),
		trailers: { 'grpc-status': '0' },
	}),
	'bad-message': () => ({
		body: frame(0, Buffer.from([0x0a, 0x05, 0x08])), // partial_success cut short
		trailers: { 'grpc-status': '0' },
	}),
	'no-trailers': () => ({ body: frame(0, Buffer.alloc(0)) }),
	'details-not-base64': () => ({
		headers: { 'grpc-status': '8', 'grpc-message': 'quota',
			'grpc-status-details-bin': '!!not*base64!!' },
	}),
	'details-unpadded': () => ({
		headers: { 'grpc-status': '8', 'grpc-message': 'quota',
			'grpc-status-details-bin': statusWithRetryInfo(8, 'quota', 2500)
				.toString('base64').replace(/=+$/, '') },
	}),
	'details-no-retryinfo': () => ({
		headers: { 'grpc-status': '8', 'grpc-message': 'quota',
			'grpc-status-details-bin': Buffer.concat([field(1, 0, 8), field(2, 2, 'quota')])
				.toString('base64') },
	}),
	'percent': () => ({
		headers: { 'grpc-status': '3', 'grpc-message': 'a%20b%zz%2%e2%9c%93%' },
	}),
	'status-junk': () => ({ headers: { 'grpc-status': 'abc', 'grpc-message': 'junk' } }),
	'unavailable-retryinfo': () => ({
		headers: { 'grpc-status': '14', 'grpc-message': 'slow down',
			'grpc-status-details-bin': statusWithRetryInfo(14, 'slow down', 42000)
				.toString('base64') },
	}),
};

function sendRaw(stream, r) {
	const base = { ':status': 200, 'content-type': 'application/grpc' };
	if (!r.body) {
		stream.respond({ ...base, ...r.headers }, { endStream: true });
		return;
	}
	if (!r.trailers) {
		stream.respond({ ...base, ...r.headers });
		stream.end(r.body);
		return;
	}
	stream.respond({ ...base, ...r.headers }, { waitForTrailers: true });
	stream.on('wantTrailers', () => stream.sendTrailers(r.trailers));
	stream.end(r.body);
}

// --- the server ---

function main() {
	const opts = parseArgs(process.argv.slice(2));
	let grpc, protoLoader;
	try {
		grpc = require('@grpc/grpc-js');
		protoLoader = require('@grpc/proto-loader');
	} catch (e) {
		usage(`${e.message}\n(run 'make grpc-deps' or 'make test': npm ci in tests/grpc)`);
	}
	if (opts.out)
		fs.mkdirSync(opts.out, { recursive: true });

	const def = protoLoader.loadSync(SERVICE_PROTO, {
		includeDirs: [opts.proto],
		keepCase: true,
		longs: String,
		enums: Number,
		bytes: String, // base64
		defaults: false,
		oneofs: true,
	});
	const service = { ...def[SERVICE] };
	// Lets the "garbage" answer put arbitrary bytes on the wire.
	const exportDef = { ...service.Export };
	const serialize = exportDef.responseSerialize;
	exportDef.responseSerialize = (v) => (Buffer.isBuffer(v) ? v : serialize(v));
	service.Export = exportDef;

	let calls = 0; // request streams seen
	let answered = 0;
	const wire = new Map(); // call number -> what the raw stream carried

	function writeRecord(n, rec) {
		if (!opts.out)
			return;
		const file = path.join(opts.out, `call-${n}.json`);
		fs.writeFileSync(`${file}.tmp`, JSON.stringify(rec) + '\n');
		fs.renameSync(`${file}.tmp`, file);
	}

	function done() {
		answered++;
		if (answered < opts.maxCalls)
			return;
		// Give the last answer time to leave before the sockets close.
		setTimeout(() => process.exit(0), 200);
	}

	// Sees every request stream before grpc-js does: numbers it, keeps its raw headers and frame
	// prefix, and gives "http:" and "raw:" answers itself (true), bypassing grpc-js.
	function onStream(stream, headers) {
		const n = ++calls;
		const answer = parseAnswer(opts.answers[n - 1] || 'ok');
		const raw = {};
		for (const [k, v] of Object.entries(headers))
			if (!k.startsWith(':'))
				raw[k] = v;
		const w = {
			path: headers[':path'],
			method: headers[':method'],
			headers: raw,
			prefix: Buffer.alloc(0),
			bytes: 0,
			answer,
		};
		wire.set(n, w);
		stream.on('data', (chunk) => {
			w.bytes += chunk.length;
			if (w.prefix.length < 5)
				w.prefix = Buffer.concat([w.prefix, chunk]).subarray(0, 5);
		});
		if (answer.kind !== 'http' && answer.kind !== 'raw') {
			headers[CALL_KEY] = String(n);
			return false;
		}
		stream.on('end', () => {
			writeRecord(n, { call: n, answer: opts.answers[n - 1], wire: wireJson(w) });
			if (answer.kind === 'raw') {
				sendRaw(stream, RAW[answer.arg]());
			} else {
				stream.respond({ ':status': answer.n, 'content-type': 'text/plain' });
				stream.end(`scripted HTTP ${answer.n}\n`);
			}
			done();
		});
		stream.resume();
		return true;
	}

	function wireJson(w) {
		const r = { path: w.path, method: w.method, headers: w.headers, bytes: w.bytes };
		if (w.prefix.length === 5) {
			r.compressed_flag = w.prefix[0];
			r.frame_length = w.prefix.readUInt32BE(1);
		}
		return r;
	}

	// grpc-js creates its HTTP/2 server through this module object: wrap its 'stream' listener.
	function wrapCreate(name) {
		const create = http2[name];
		http2[name] = function (...args) {
			return wrapServer(create.apply(this, args));
		};
	}
	wrapCreate('createServer');
	wrapCreate('createSecureServer');
	function wrapServer(srv) {
		const on = srv.on.bind(srv);
		srv.on = (ev, fn) => {
			if (ev !== 'stream')
				return on(ev, fn);
			return on(ev, (stream, headers, ...rest) => {
				if (!onStream(stream, headers))
					fn(stream, headers, ...rest);
			});
		};
		return srv;
	}

	function exportCall(call, callback) {
		const n = Number(call.metadata.get(CALL_KEY)[0]);
		call.metadata.remove(CALL_KEY);
		const w = wire.get(n);
		wire.delete(n);
		const md = {};
		for (const [k, v] of Object.entries(call.metadata.getMap()))
			md[k] = Buffer.isBuffer(v) ? v.toString('base64') : v;
		writeRecord(n, {
			call: n,
			answer: opts.answers[n - 1] || 'ok',
			metadata: md,
			wire: wireJson(w),
			request: call.request,
		});

		const a = w.answer;
		const fail = (code, details, metadata) => {
			callback({ code, details, metadata });
			done();
		};
		switch (a.kind) {
		case 'ok':
			callback(null, {});
			return done();
		case 'partial':
			callback(null, {
				partial_success: {
					rejected_profiles: String(a.n),
					error_message: a.msg || `${a.n} profiles rejected`,
				},
			});
			return done();
		case 'garbage':
			callback(null, Buffer.from([0x0a, 0xff, 0xff, 0xff]));
			return done();
		case 'slow':
			setTimeout(() => {
				callback(null, {});
				done();
			}, a.n);
			return;
		case 'unavailable':
			return fail(grpc.status.UNAVAILABLE, a.msg || 'receiver overloaded, try later');
		case 'invalid':
			// Spaces, '%', a quote and non-ASCII: grpc-message arrives percent-encoded.
			return fail(grpc.status.INVALID_ARGUMENT,
				a.msg || 'bad request: string_table[0] must be "" (100% sure) — ünïcode');
		case 'exhausted':
			return fail(grpc.status.RESOURCE_EXHAUSTED, 'quota exceeded');
		case 'exhausted-retry': {
			const md2 = new grpc.Metadata();
			const msg = 'quota exceeded, retry later';
			md2.set('grpc-status-details-bin',
				statusWithRetryInfo(grpc.status.RESOURCE_EXHAUSTED, msg, a.n));
			return fail(grpc.status.RESOURCE_EXHAUSTED, msg, md2);
		}
		case 'code':
			return fail(a.n, a.msg || `scripted status ${a.n}`);
		}
	}

	const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 << 20 });
	server.addService(service, { Export: exportCall });
	let creds = grpc.ServerCredentials.createInsecure();
	if (opts.tls) {
		creds = grpc.ServerCredentials.createSsl(null, [{
			private_key: fs.readFileSync(path.join(opts.tls, 'key.pem')),
			cert_chain: fs.readFileSync(path.join(opts.tls, 'cert.pem')),
		}], false);
	}
	server.bindAsync(`127.0.0.1:${opts.port}`, creds,
		(err, port) => {
			if (err) {
				process.stderr.write(`server.js: bind 127.0.0.1:${opts.port}: ${err.message}\n`);
				process.exit(1);
			}
			process.stdout.write(`listening 127.0.0.1:${port}\n`);
		});

	setTimeout(() => {
		process.stderr.write(`server.js: timeout after ${opts.timeout} s, ${answered} calls\n`);
		process.exit(3);
	}, opts.timeout * 1000);
	if (opts.exitWithStdin) {
		process.stdin.on('data', () => {});
		process.stdin.on('end', () => process.exit(0));
		process.stdin.on('error', () => process.exit(0));
	}
}

main();
