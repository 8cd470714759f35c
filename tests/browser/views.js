#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// The flame graph page's views (issue 19), checked in Debian's headless chromium through
// playwright-core, as flame.js does, on pages tests/e2e/run.sh (t_html_views) writes:
//   capture  a cpu,wall capture of two cpu_ratio processes and a sleeper:
//            group by executable (the default) gives one cpu_ratio root for both pids, by process
//            two; the function list shows FN's file:line and binary; a click on its row opens
//            the sandwich (callers above: CALLER; callees below), both totalling FN's frames;
//            the callers view; the wall type's state and thread filters give the totals the
//            embedded samples of that state or thread sum to; the URL hash reproduces a view
//            (type, view, grouping, state, function) in a fresh page
//   deep     a 300-deep spike beside a broad stack: the graph fits the window, the spike is
//            collapsed, a click on the collapsed frame zooms into it; "all frames" is as tall as
//            the stack
//   diff     render --base: each named frame's change of share is the expected one, grown
//            frames are painted red and shrunk ones blue; the list has the base-only function
//   big      a 100k-stack page: load + first draw time printed, and under 5 s
// Screenshots of each view go to OUTDIR (views-*.png).
//
// Usage: node views.js SPEC.json OUTDIR
// SPEC.json: { "capture": PAGE, "exe": "cpu_ratio", "pids": [A, B], "fn": "burn_c",
//              "caller": "main", "deep": PAGE, "diff": PAGE,
//              "deltas": { "grow": 0.1, "shrink": -0.5 }, "gone": "gone", "big": PAGE }
// Exit status 0 when every check holds; otherwise 1, with one "views: FAIL ..." line per failure.
'use strict';

const fs = require('fs');
const path = require('path');

const [specArg, outArg] = process.argv.slice(2);
if (!specArg || !outArg) {
	console.error('usage: node views.js SPEC.json OUTDIR');
	process.exit(2);
}
const spec = JSON.parse(fs.readFileSync(specArg, 'utf8'));
const outDir = path.resolve(outArg);
const { launch, checker } = require('./chromium');

const { failures, notes, check } = checker();
const pc = (x) => `${(100 * x).toFixed(2)}%`;
const view = (page) => page.evaluate(() => window.__hostprof.view());

async function open(ctx, file, hash) {
	const page = await ctx.newPage();
	page.errors = [];
	page.on('pageerror', (e) => page.errors.push(e.message));
	await page.route((url) => url.protocol !== 'file:', (route) => {
		page.errors.push(`network request to ${route.request().url()}`);
		route.abort();
	});
	await page.goto('file://' + path.resolve(file) + (hash || ''));
	await page.waitForFunction(() => document.body.hasAttribute('data-render-ms') && window.__hostprof,
		null, { timeout: 20000 });
	return page;
}
async function close(page, label) {
	check(page.errors.length === 0, `${label}: page errors: ${page.errors.join('; ')}`);
	await page.close();
}
const shot = (page, name) => page.screenshot({ path: path.join(outDir, `views-${name}.png`) });

// The samples embedded in the page (not what the page computed): [{node, value, proc, tid, state}].
async function rawSamples(page, type) {
	return page.evaluate((type) => {
		const d = JSON.parse(document.getElementById('data').textContent);
		const p = d.profiles.find((x) => x.type === type), out = [];
		for (let i = 0; i < p.s.length; i += 7)
			out.push({ value: p.s[i + 1], tid: String(p.s[i + 3]), state: d.strings[p.s[i + 5]],
				span: d.strings[p.s[i + 6]] });
		return out;
	}, type);
}

// The page coordinates of the centre of a drawn frame (from the hook) in the canvas of its part.
async function centre(page, fr) {
	return page.evaluate((fr) => {
		const id = fr.part === 'callers' && window.__hostprof.view().view === 'sandwich' ? 'cvup' :
			fr.part === 'callees' ? 'cvdown' : 'cv';
		const r = document.getElementById(id).getBoundingClientRect();
		return { x: r.left + fr.x + fr.w / 2, y: r.top + fr.y + fr.h / 2, cx: fr.x + fr.w / 2, cy: fr.y + fr.h / 2, id };
	}, fr);
}
async function pixel(page, fr) {
	const c = await centre(page, fr);
	return page.evaluate((c) => {
		const cv = document.getElementById(c.id);
		const dpr = cv.width / cv.clientWidth;
		const d = cv.getContext('2d').getImageData(Math.floor(c.cx * dpr), Math.floor(c.cy * dpr) + 3, 1, 1).data;
		return [d[0], d[1], d[2]];
	}, c);
}

async function checkCapture(ctx) {
	const page = await open(ctx, spec.capture);
	const exe = spec.exe, fn = spec.fn;
	// Grouping: by executable, the two pids are one root.
	let v = await view(page);
	const roots = (v) => v.frames.filter((f) => f.depth === 1);
	let r = roots(v).filter((f) => f.name.startsWith(exe));
	check(v.group === 'exe', `group: the default grouping is ${v.group}, not exe`);
	check(r.length === 1 && r[0].name === exe, `group exe: roots for ${exe}: ${r.map((f) => f.name).join(', ')}; expected one named ${exe}`);
	const exeShare = r.length ? r[0].w / v.width : 0;
	await shot(page, 'group-exe');
	await page.selectOption('#group', 'process');
	v = await view(page);
	r = roots(v).filter((f) => f.name.startsWith(exe + ' ('));
	const pids = r.map((f) => +f.name.replace(/.*\((\d+)\)$/, '$1')).sort();
	check(JSON.stringify(pids) === JSON.stringify([...spec.pids].sort()),
		`group process: ${exe} roots for pids ${pids.join(',')}, expected ${spec.pids.join(',')}`);
	const procShare = r.reduce((s, f) => s + f.w, 0) / v.width;
	check(Math.abs(procShare - exeShare) < 0.01, `group: ${exe} is ${pc(exeShare)} as one root but ${pc(procShare)} as processes`);
	await shot(page, 'group-process');
	notes.push(`group: exe gives one ${exe} root (${pc(exeShare)}), process gives ${r.length} (${pids.join(', ')})`);
	await page.selectOption('#group', 'exe');

	// The function total in the flame graph, before the list.
	v = await view(page);
	const fnTotal = v.frames.filter((f) => f.name === fn).reduce((s, f) => s + f.value, 0);

	// Function list: file:line and binary of FN; a click on the row opens the sandwich.
	await page.click('#vlist');
	const row = await page.evaluate((fn) => {
		const tr = [...document.querySelectorAll('#rows tr')].find((t) => t.cells[0].textContent === fn);
		return tr ? [...tr.cells].map((c) => c.textContent).concat(tr.cells[2].title) : null;
	}, fn);
	const heads = await page.$$eval('#thead th', (ths) => ths.map((t) => t.textContent));
	check(heads.slice(0, 3).join('|') === 'Function|File:line|Binary', `list: columns ${heads.join('|')}`);
	if (check(row, `list: no row for ${fn}`)) {
		check(/(^|\/)cpu_ratio\.c:\d+$/.test(row[1]), `list: ${fn}'s file:line is "${row[1]}", expected .../cpu_ratio.c:N`);
		check(row[2] === exe && row[row.length - 1].endsWith('/' + exe), `list: ${fn}'s binary is "${row[2]}" (${row[row.length - 1]}), expected ${exe}`);
		notes.push(`list: ${fn} at ${row[1]} in ${row[row.length - 1]}, self ${row[4]}, total ${row[6]}`);
	}
	await shot(page, 'list');
	await page.click(`#rows tr:has(td.n:text-is("${fn}"))`);
	v = await view(page);
	check(v.view === 'sandwich' && v.fn === fn, `list click: view ${v.view} on ${v.fn}, expected the sandwich of ${fn}`);
	const up = v.frames.filter((f) => f.part === 'callers'), down = v.frames.filter((f) => f.part === 'callees');
	const upRoot = up.find((f) => f.depth === 0), downRoot = down.find((f) => f.depth === 0);
	const caller = up.filter((f) => f.depth === 1 && f.name === spec.caller).reduce((s, f) => s + f.w, 0);
	check(upRoot && upRoot.name === fn && downRoot && downRoot.name === fn, `sandwich: roots ${upRoot && upRoot.name} / ${downRoot && downRoot.name}, expected ${fn}`);
	check(upRoot && downRoot && upRoot.value === fnTotal && downRoot.value === fnTotal,
		`sandwich: callers total ${upRoot && upRoot.value}, callees ${downRoot && downRoot.value}; ${fn}'s frames total ${fnTotal}`);
	check(caller / v.width >= 0.95, `sandwich: ${spec.caller} is ${pc(caller / v.width)} of ${fn}'s callers, expected >= 95%`);
	// Callers are drawn above the function (flame), callees below it (icicle).
	const upFn = up.find((f) => f.depth === 0), upCaller = up.find((f) => f.depth === 1);
	check(upFn && upCaller && upCaller.y < upFn.y, 'sandwich: the callers are not drawn above the function');
	await shot(page, 'sandwich');
	notes.push(`sandwich of ${fn}: ${spec.caller} ${pc(caller / v.width)} of its callers; total ${fnTotal}`);
	await page.click('#vcallers');
	v = await view(page);
	const c1 = v.frames.filter((f) => f.depth === 1 && f.name === spec.caller);
	check(v.view === 'callers' && v.frames.some((f) => f.depth === 0 && f.name === fn) && c1.length === 1,
		`callers: view ${v.view}, depth 1: ${v.frames.filter((f) => f.depth === 1).map((f) => f.name).join(',')}`);
	await shot(page, 'callers');

	// Wall: thread-state and thread filters.
	const opts = await page.$$eval('#type option', (os) => os.map((o) => o.textContent));
	const wi = opts.findIndex((o) => o.startsWith('wall '));
	if (check(wi >= 0, `filters: no wall type (${opts.join(', ')})`)) {
		await page.click('#vflame');
		await page.selectOption('#type', String(wi));
		check(await page.isVisible('#state'), 'filters: the state filter is hidden on a wall profile');
		const raw = await rawSamples(page, 'wall');
		const all = raw.reduce((s, x) => s + x.value, 0);
		const states = await page.$$eval('#state option', (os) => os.map((o) => o.value).filter((x) => x));
		check(states.length >= 2, `filters: states ${states.join(',')}: expected running and sleeping at least`);
		const st = states.includes('sleeping') ? 'sleeping' : states[0];
		await page.selectOption('#state', st);
		v = await view(page);
		const want = raw.filter((x) => x.state === st).reduce((s, x) => s + x.value, 0);
		check(v.total === want && want < all, `state ${st}: total ${v.total}, the samples in that state sum to ${want} of ${all}`);
		await shot(page, 'state');
		notes.push(`state ${st}: total ${v.total} of ${all}`);
		const tids = await page.$$eval('#thread option', (os) => os.map((o) => o.value).filter((x) => x));
		if (check(tids.length >= 3, `filters: ${tids.length} threads, expected 3 (two cpu_ratio, one sleeper)`)) {
			await page.selectOption('#thread', tids[1]);
			v = await view(page);
			const wt = raw.filter((x) => x.tid === tids[1] && x.state === st).reduce((s, x) => s + x.value, 0);
			check(v.total === wt, `thread ${tids[1]} and state ${st}: total ${v.total}, expected ${wt}`);
			await page.selectOption('#thread', '');
		}
		// URL hash: a view with state, grouping, function; a fresh page restores it. In a
		// state where FN runs, so that the restored sandwich has frames to compare.
		const hs = states.includes('running') ? 'running' : st;
		await page.selectOption('#state', hs);
		await page.selectOption('#group', 'process');
		await page.click('#vsandwich');
		const before = await view(page);
		const hash = await page.evaluate(() => location.hash);
		const h = new URLSearchParams(hash.slice(1));
		check(h.get('t') === 'wall' && h.get('v') === 'sandwich' && h.get('g') === 'process' && h.get('sa') === hs && h.get('fn'),
			`hash: ${hash} lacks t=wall, v=sandwich, g=process, sa=${hs} or fn`);
		check(before.frames.length >= 2, `hash: the sandwich of ${fn} in state ${hs} is empty`);
		const p2 = await open(ctx, spec.capture, hash);
		const after = await view(p2);
		const key = (v) => JSON.stringify([v.type, v.view, v.group, v.state, v.fn, v.total, v.frames.map((f) => [f.part, f.depth, f.name, Math.round(f.w)])]);
		check(key(after) === key(before), `hash: the page loaded with ${hash} shows ${key(after).slice(0, 200)}, not ${key(before).slice(0, 200)}`);
		check(await p2.inputValue('#state') === hs && await p2.inputValue('#group') === 'process', 'hash: the controls do not show the restored state and grouping');
		await shot(p2, 'hash-restored');
		notes.push(`hash ${hash} restored: ${after.view} of ${after.fn}, ${after.group}, state ${after.state}`);
		// Zoom and search go in the hash too.
		await p2.click('#vflame');
		await p2.selectOption('#state', '');
		const z = (await view(p2)).frames.find((f) => f.name === fn);
		if (check(z, `hash: no ${fn} frame in the wall flame graph`)) {
			const c = await centre(p2, z);
			await p2.mouse.click(c.x, c.y);
			await p2.fill('#search', '^burn_');
			await p2.waitForFunction(() => /q=/.test(location.hash), null, { timeout: 5000 });
			const zh = await p2.evaluate(() => location.hash);
			const p3 = await open(ctx, spec.capture, zh);
			const zv = await view(p3);
			check(zv.zoom === fn && await p3.inputValue('#search') === '^burn_' && await p3.getAttribute('#match', 'data-share') !== null,
				`hash: ${zh} restores zoom ${zv.zoom} and search "${await p3.inputValue('#search')}", expected ${fn} and ^burn_`);
			await close(p3, 'hash zoom');
		}
		await close(p2, 'hash');
	}
	await close(page, 'capture');
}

async function checkDeep(ctx) {
	const page = await open(ctx, spec.deep);
	let v = await view(page);
	const inner = await page.evaluate(() => window.innerHeight);
	const wide = v.frames.filter((f) => f.name === 'wide').reduce((s, f) => s + f.w, 0) / v.width;
	const cut = v.frames.filter((f) => f.collapsed);
	check(v.height <= inner, `deep: the graph is ${v.height} px tall in a ${inner} px window`);
	check(cut.length === 1 && /^f\d+$/.test(cut[0].name), `deep: ${cut.length} collapsed frames (${cut.map((f) => f.name)}), expected one f<N>`);
	check(Math.abs(wide - 0.99) < 0.01, `deep: wide is drawn ${pc(wide)} wide, expected 99%`);
	const deepest = (v) => Math.max(...v.frames.filter((f) => /^f\d+$/.test(f.name)).map((f) => +f.name.slice(1)));
	const before = deepest(v);
	await shot(page, 'fit');
	if (cut.length) {
		const c = await centre(page, cut[0]);
		await page.mouse.click(c.x, c.y);
		v = await view(page);
		check(v.zoom === cut[0].name && deepest(v) > before && v.height <= inner,
			`deep: a click on the collapsed ${cut[0].name} zooms to ${v.zoom}, deepest f${deepest(v)} (was f${before}), ${v.height} px`);
		await shot(page, 'fit-zoomed');
		notes.push(`deep: fits in ${v.height} px, f${before} collapsed; zoomed, frames to f${deepest(v)}`);
	}
	await page.keyboard.press('Escape');
	await page.selectOption('#depth', 'all');
	v = await view(page);
	check(v.height === 303 * 18 && v.collapsed === 0, `deep: all frames: ${v.height} px, ${v.collapsed} collapsed; expected ${303 * 18} px, none`);
	await close(page, 'deep');
}

async function checkDiff(ctx) {
	const page = await open(ctx, spec.diff);
	const v = await view(page);
	check(v.diff, 'diff: the page is not differential');
	for (const [name, d] of Object.entries(spec.deltas)) {
		const fr = v.frames.find((f) => f.name === name);
		if (!check(fr, `diff: no frame ${name}`)) continue;
		check(Math.abs(fr.delta - d) < 1e-9, `diff: ${name} changed by ${fr.delta}, expected ${d}`);
		const px = await pixel(page, fr);
		if (d > 0) check(px[0] - px[2] > 60, `diff: ${name} grew but is painted rgb(${px})`);
		else check(px[2] - px[0] > 60, `diff: ${name} shrank but is painted rgb(${px})`);
		notes.push(`diff: ${name} ${d > 0 ? '+' : ''}${pc(fr.delta)} painted rgb(${px})`);
	}
	await shot(page, 'diff');
	await page.click('#vlist');
	const gone = await page.evaluate((g) => {
		const tr = [...document.querySelectorAll('#rows tr')].find((t) => t.cells[0].textContent === g);
		return tr ? [...tr.cells].map((c) => c.textContent) : null;
	}, spec.gone);
	check(gone && gone[gone.length - 1].startsWith('\u2212'), `diff list: the base-only ${spec.gone}: ${gone && gone.join('|')}`);
	await shot(page, 'diff-list');
	await close(page, 'diff');
}

async function checkBig(ctx) {
	const t0 = Date.now();
	const page = await open(ctx, spec.big);
	const ms = +(await page.evaluate(() => document.body.getAttribute('data-render-ms')));
	const v = await view(page);
	check(v.frames.length > 100 && ms < 5000, `big: ${v.frames.length} frames drawn in ${ms} ms (expected under 5000)`);
	// Responsive: a regrouping of the whole profile is timed too.
	const regroup = await page.evaluate(() => {
		const t = performance.now();
		const s = document.getElementById('group');
		s.value = 'process';
		s.dispatchEvent(new Event('change'));
		return performance.now() - t;
	});
	check(regroup < 3000, `big: regrouping took ${regroup.toFixed(0)} ms`);
	notes.push(`big: ${fs.statSync(spec.big).size} bytes, load + first draw ${ms} ms (${Date.now() - t0} ms with the browser), regroup by process ${regroup.toFixed(0)} ms`);
	await shot(page, 'big');
	await close(page, 'big');
}

// The span filter: a capture of a service whose samples serve OpenTelemetry spans. Picking one
// span leaves exactly the embedded samples of that span (and its function, not the other
// thread's).
async function checkSpans(ctx) {
	const page = await open(ctx, spec.spans);
	check(await page.isVisible('#span'), 'spans: the span filter is hidden on a profile with spans');
	const spans = await page.$$eval('#span option', (os) => os.map((o) => o.value).filter((x) => x));
	check(spans.includes(spec.span), `spans: ${spec.span} is not among the filter's spans: ${spans.join(' ')}`);
	const raw = await rawSamples(page, 'cpu');
	const all = raw.reduce((s, x) => s + x.value, 0);
	const want = raw.filter((x) => x.span === spec.span).reduce((s, x) => s + x.value, 0);
	await page.selectOption('#span', spec.span);
	const v = await view(page);
	const names = v.frames.map((f) => f.name);
	check(v.total === want && want > 0 && want < all, `span ${spec.span}: total ${v.total}, its samples sum to ${want} of ${all}`);
	check(names.includes(spec.in_span) && !names.includes(spec.other_span),
		`span ${spec.span}: frames should hold ${spec.in_span} and not ${spec.other_span}`);
	check(v.span === spec.span && (await page.evaluate(() => location.hash)).includes(`sp=${spec.span}`),
		'span: the hook and the URL hash name the span');
	notes.push(`span ${spec.span}: total ${v.total} of ${all}, ${spans.length} spans listed`);
	await shot(page, 'span');
	await close(page, 'spans');
}

async function main() {
	fs.mkdirSync(outDir, { recursive: true });
	const { ctx, close } = await launch('views');
	try {
		for (const [k, f] of [['capture', checkCapture], ['spans', checkSpans], ['deep', checkDeep], ['diff', checkDiff], ['big', checkBig]]) {
			if (!spec[k]) continue;
			try {
				await f(ctx);
			} catch (e) {
				failures.push(`${k}: ${String(e && e.message || e).split('\n')[0]}`);
			}
		}
	} finally {
		await close();
	}
}

main().then(() => {
	for (const n of notes) console.log(`views: ${n}`);
	for (const f of failures) console.log(`views: FAIL ${f}`);
	process.exit(failures.length ? 1 : 0);
}, (e) => {
	console.log(`views: FAIL ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
	process.exit(1);
});
