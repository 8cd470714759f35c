#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// The flame graph page never fails: loads each page written by hostprof in Debian's headless
// chromium (through playwright-core, as flame.js does) and fails on any uncaught page error, any
// dialog (an alert() from a frame name that got executed), any request other than file:, or a
// test hook window.__hostprof.view() that throws or reports another root total than expected.
//
// Usage: node robust.js EXPECTED.json
// EXPECTED.json: { "pages": [ { "page": "/path/a.html",   the page to load
//                              "total": 5,                  the root total view() must report
//                              "names": ["main"],           optional: frame names drawn as is
//                              "depth": 301,                optional: the deepest drawn depth >=
//                              "hash": "#d=all" } ] }       optional: the URL hash to load with
// Prints "robust: PASS page: ..." or "robust: FAIL page: ..." per page; exit status 0 when every
// page passes, 1 otherwise, 2 on bad usage.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
	console.error(`robust: ${msg}\nusage: node robust.js EXPECTED.json`);
	process.exit(2);
}

const [expArg] = process.argv.slice(2);
if (!expArg) usage('missing arguments');
let expected;
try {
	expected = JSON.parse(fs.readFileSync(expArg, 'utf8'));
} catch (e) {
	usage(`cannot read ${expArg}: ${e.message}`);
}
if (!Array.isArray(expected.pages) || !expected.pages.length) usage('no pages in the expected numbers');
const { launch, checker } = require('./chromium');

async function checkPage(ctx, exp) {
	const problems = [];
	const file = path.resolve(exp.page);
	const page = await ctx.newPage();
	page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
	page.on('dialog', (d) => {
		problems.push(`a ${d.type()} dialog opened ("${d.message()}"): a name was executed`);
		d.dismiss().catch(() => {});
	});
	await page.route((url) => url.protocol !== 'file:', (route) => {
		problems.push(`network request to ${route.request().url()}`);
		route.abort();
	});
	let summary = '';
	try {
		await page.goto('file://' + file + (exp.hash || ''));
		await page.waitForFunction(() => document.body && document.body.hasAttribute('data-render-ms') &&
			window.__hostprof, null, { timeout: 10000 });
		const r = await page.evaluate(() => {
			try {
				const v = window.__hostprof.view();
				return { ok: true, total: v.total, unit: v.unit, n: v.frames.length,
					depth: v.frames.reduce((m, f) => Math.max(m, f.depth), 0),
					names: [...new Set(v.frames.map((f) => f.name))],
					injected: document.querySelectorAll('img[onerror], img[src="x"]').length };
			} catch (e) {
				return { ok: false, error: String(e && e.stack || e) };
			}
		});
		// Give a late handler (an injected img's onerror) a moment to fire.
		await page.waitForTimeout(200);
		if (!r.ok) {
			problems.push(`window.__hostprof.view() threw: ${r.error}`);
		} else {
			if (r.total !== exp.total)
				problems.push(`root total ${r.total} ${r.unit}, expected ${exp.total}`);
			for (const n of exp.names || [])
				if (!r.names.includes(n)) problems.push(`no frame named ${JSON.stringify(n)} drawn`);
			if (exp.depth !== undefined && r.depth < exp.depth)
				problems.push(`deepest frame drawn at depth ${r.depth}, expected >= ${exp.depth}`);
			if (r.injected) problems.push(`${r.injected} injected <img> element(s) in the document`);
			summary = `total ${r.total} ${r.unit}, ${r.n} frames drawn, depth ${r.depth}`;
		}
	} catch (e) {
		problems.push(String(e && e.message || e).split('\n')[0]);
	} finally {
		await page.close();
	}
	return { problems, summary };
}

async function main() {
	let failed = 0;
	const { ctx, close } = await launch('robust');
	try {
		for (const exp of expected.pages) {
			const { problems, summary } = await checkPage(ctx, exp);
			const name = path.basename(exp.page);
			if (problems.length) {
				failed++;
				console.log(`robust: FAIL ${name}: ${problems.join('; ')}`);
			} else {
				console.log(`robust: PASS ${name}: ${summary}`);
			}
		}
	} finally {
		await close();
	}
	return failed;
}

main().then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.log(`robust: FAIL ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
	process.exit(1);
});
