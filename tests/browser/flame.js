#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Drives Debian's headless chromium (/usr/bin/chromium, through playwright-core: no browser
// download) over one HTML flame graph written by hostprof, and checks what a person would see:
//   1. widths: the root's children and the named frames are drawn with the expected shares (+-1
//      point of the view's width), read from the page's read-only hook window.__hostprof.view()
//   2. zoom: clicking a frame (a real mouse click at its coordinates) makes it span the full
//      width and shows it in the breadcrumb; the reset button restores the whole view
//   3. search: typing a regex paints the matching frames in the highlight colour (canvas pixels)
//      and shows their total share (#match)
//   4. types: the type selector switches the data (root total, unit and shares of each type)
//   5. a screenshot PNG of each type's view in OUTDIR
//
// Usage: node flame.js PAGE.html EXPECTED.json [OUTDIR]   (OUTDIR defaults to PAGE's directory)
// EXPECTED.json:
//   { "types": [ { "type": "cpu", "total": 297,                 root total in the page's unit
//                  "children": { "cpu_ratio": 1.0 },             root's children, by name
//                  "shares": { "burn_a": 0.17, ... } }, ... ],   total share per function name
//     "zoom": "burn_c",                                          frame to click (in type 0)
//     "search": { "regex": "^burn_[ab]$", "share": 0.5 } }       in type 0, whole view
// A process frame is named "comm (pid)" in the page and "comm" in folded files: children are
// compared with the " (pid)" suffix removed.
// Exit status 0 when every check holds; otherwise 1, with one "flame: FAIL ..." line per failure.
'use strict';

const fs = require('fs');
const path = require('path');

const TOL = 0.01; // shares: +-1 point of the full width
const HIGHLIGHT = [0xe6, 0x4f, 0xc8]; // the page's colour for search matches

function usage(msg) {
	console.error(`flame: ${msg}\nusage: node flame.js PAGE.html EXPECTED.json [OUTDIR]`);
	process.exit(2);
}

const [pageArg, expArg, outArg] = process.argv.slice(2);
if (!pageArg || !expArg) usage('missing arguments');
const pageFile = path.resolve(pageArg);
if (!fs.existsSync(pageFile)) usage(`no such page: ${pageFile}`);
let expected;
try {
	expected = JSON.parse(fs.existsSync(expArg) ? fs.readFileSync(expArg, 'utf8') : expArg);
} catch (e) {
	usage(`expected numbers are not JSON (a file or a string): ${e.message}`);
}
const outDir = path.resolve(outArg || path.dirname(pageFile));
const { launch, checker } = require('./chromium');

const { failures, notes, check } = checker();
const pc = (x) => `${(100 * x).toFixed(2)}%`;
const baseName = (n) => n.replace(/ \(\d+\)$/, '');

async function view(page) {
	return page.evaluate(() => window.__hostprof.view());
}

// Sum of the drawn widths of the frames named NAME, as a share of the view's width.
function drawnShare(v, name) {
	return v.frames.filter((f) => f.name === name).reduce((s, f) => s + f.w, 0) / v.width;
}

// The page coordinates of the centre of the (widest) frame named NAME, scrolled into view.
async function frameCentre(page, name) {
	const v = await view(page);
	const fr = v.frames.filter((f) => f.name === name).sort((a, b) => b.w - a.w)[0];
	if (!fr) return null;
	return page.evaluate((fr) => {
		const g = document.getElementById('graph');
		const cv = document.getElementById('cv');
		g.scrollIntoView({ block: 'nearest' });
		// The graph scrolls inside its box: bring the frame's row to the middle of it.
		g.scrollTop = Math.max(0, fr.y + fr.h / 2 - g.clientHeight / 2);
		const r = cv.getBoundingClientRect();
		return { x: r.left + fr.x + fr.w / 2, y: r.top + fr.y + fr.h / 2, cx: fr.x + fr.w / 2, cy: fr.y + fr.h / 2 };
	}, fr);
}

// The canvas pixel at the centre of the frame named NAME: [r, g, b].
async function pixelOf(page, name) {
	const c = await frameCentre(page, name);
	if (!c) return null;
	return page.evaluate((c) => {
		const cv = document.getElementById('cv');
		const dpr = cv.width / cv.clientWidth;
		const d = cv.getContext('2d').getImageData(Math.floor(c.cx * dpr), Math.floor(c.cy * dpr), 1, 1).data;
		return [d[0], d[1], d[2]];
	}, c);
}
const isHighlight = (px) => px && px.every((v, i) => Math.abs(v - HIGHLIGHT[i]) <= 2);

async function checkWidths(page, t, label) {
	const v = await view(page);
	check(v.type === t.type, `${label}: the page shows type ${v.type}, expected ${t.type}`);
	if (t.total !== undefined)
		check(Math.abs(v.total - t.total) <= 0.001 * t.total,
			`${label}: root total ${v.total} ${v.unit}, expected ${t.total}`);
	const root = v.frames.find((f) => f.depth === 0);
	check(root && Math.abs(root.w - v.width) < 1, `${label}: the root does not span the width`);
	for (const [name, share] of Object.entries(t.children || {})) {
		const kids = v.frames.filter((f) => f.depth === 1 && baseName(f.name) === name);
		const got = kids.reduce((s, f) => s + f.w, 0) / v.width;
		check(Math.abs(got - share) <= TOL, `${label}: root child ${name} drawn ${pc(got)} wide, expected ${pc(share)} +-1 point`);
	}
	const got = {};
	for (const [name, share] of Object.entries(t.shares || {})) {
		got[name] = drawnShare(v, name);
		check(Math.abs(got[name] - share) <= TOL, `${label}: ${name} drawn ${pc(got[name])} wide, expected ${pc(share)} +-1 point`);
	}
	notes.push(`${label}: total ${v.total} ${v.unit}; ` +
		Object.entries(got).map(([n, s]) => `${n} ${pc(s)}`).join(' '));
	return v;
}

async function main() {
	const t0 = Date.now();
	fs.mkdirSync(outDir, { recursive: true });
	const { ctx, close } = await launch('flame');
	try {
		const page = ctx.pages()[0] || await ctx.newPage();
		const errors = [];
		page.on('pageerror', (e) => errors.push(e.message));
		// The page is self-contained: any request other than the file itself is a failure.
		await page.route((url) => url.protocol !== 'file:', (route) => {
			errors.push(`network request to ${route.request().url()}`);
			route.abort();
		});
		await page.goto('file://' + pageFile);
		await page.waitForFunction(() => document.body.hasAttribute('data-render-ms') && window.__hostprof,
			null, { timeout: 10000 });
		const renderMs = await page.evaluate(() => document.body.getAttribute('data-render-ms'));
		const types = expected.types || [];
		check(types.length > 0, 'expected numbers name no profile type');

		// 1. widths in the first type
		const v0 = await checkWidths(page, types[0], types[0].type);

		// 2. zoom by a click on the frame, breadcrumb, reset
		const target = expected.zoom;
		if (target) {
			const c = await frameCentre(page, target);
			if (check(c, `zoom: no frame ${target} drawn`)) {
				await page.mouse.click(c.x, c.y);
				const z = await view(page);
				const fr = z.frames.filter((f) => f.name === target).sort((a, b) => b.w - a.w)[0];
				const crumb = await page.textContent('#crumbs b');
				check(z.zoom === target, `zoom: after a click on ${target} the view is zoomed on ${z.zoom}`);
				check(fr && fr.x < 1 && Math.abs(fr.w - z.width) < 1,
					`zoom: ${target} spans x=${fr && fr.x}..${fr && fr.x + fr.w} of ${z.width} px, not the full width`);
				check(crumb === target, `zoom: the breadcrumb ends with "${crumb}", expected ${target}`);
				check(await page.isEnabled('#reset'), 'zoom: the reset button is disabled while zoomed');
				const path0 = (await page.textContent('#crumbs')).trim();
				await page.click('#reset');
				const r = await view(page);
				check(r.zoom === v0.zoom && Math.abs(r.zoomValue - v0.total) < 1e-9,
					`reset: the view is still zoomed on ${r.zoom}`);
				check(await page.textContent('#crumbs b') === v0.zoom, 'reset: the breadcrumb still shows the zoomed frame');
				const back = drawnShare(r, target), before = drawnShare(v0, target);
				check(Math.abs(back - before) < 0.001, `reset: ${target} drawn ${pc(back)} wide, was ${pc(before)}`);
				notes.push(`zoom: ${target} clicked at (${c.x.toFixed(0)},${c.y.toFixed(0)}) spans ${fr && fr.w.toFixed(0)}/${z.width} px, breadcrumb "${path0}"; reset ok`);
			}
		}

		// 3. search: highlight and matched share
		const s = expected.search;
		if (s) {
			await page.fill('#search', s.regex);
			await page.waitForFunction(() => document.getElementById('match').hasAttribute('data-share') &&
				document.getElementById('match').textContent !== '', null, { timeout: 5000 });
			const share = +(await page.getAttribute('#match', 'data-share'));
			const text = await page.textContent('#match');
			check(Math.abs(share - s.share) <= TOL, `search /${s.regex}/: matched share ${pc(share)} ("${text}"), expected ${pc(s.share)} +-1 point`);
			const re = new RegExp(s.regex);
			const names = [...new Set((await view(page)).frames.map((f) => f.name))];
			for (const n of names.filter((n) => re.test(n) || Object.hasOwn(types[0].shares || {}, n))) {
				const px = await pixelOf(page, n);
				if (re.test(n)) check(isHighlight(px), `search: ${n} matches /${s.regex}/ but is painted rgb(${px})`);
				else check(!isHighlight(px), `search: ${n} does not match /${s.regex}/ but is highlighted`);
			}
			await page.screenshot({ path: path.join(outDir, `flame-${types[0].type}-search.png`) });
			notes.push(`search /${s.regex}/: "${text}"`);
			await page.fill('#search', '');
			await page.waitForFunction(() => document.getElementById('match').textContent === '', null, { timeout: 5000 });
		}
		await page.screenshot({ path: path.join(outDir, `flame-${types[0].type}.png`) });

		// 4. the type selector
		const opts = await page.$$eval('#type option', (os) => os.map((o) => o.textContent));
		for (let i = 1; i < types.length; i++) {
			const k = opts.findIndex((o) => o.startsWith(types[i].type + ' '));
			if (!check(k >= 0, `types: no ${types[i].type} in the selector (${opts.join(', ')})`)) continue;
			check(await page.isVisible('#type'), 'types: the type selector is hidden');
			await page.selectOption('#type', String(k));
			const v = await checkWidths(page, types[i], types[i].type);
			check(v.total !== v0.total || v.unit !== v0.unit,
				`types: switching to ${types[i].type} left the root total at ${v.total} ${v.unit}`);
			await page.screenshot({ path: path.join(outDir, `flame-${types[i].type}.png`) });
		}
		check(errors.length === 0, `page errors: ${errors.join('; ')}`);
		notes.push(`page load+render ${renderMs} ms; whole browser test ${Date.now() - t0} ms; screenshots in ${outDir}`);
	} finally {
		await close();
	}
}

main().then(() => {
	for (const n of notes) console.log(`flame: ${n}`);
	for (const f of failures) console.log(`flame: FAIL ${f}`);
	process.exit(failures.length ? 1 : 0);
}, (e) => {
	for (const n of notes) console.log(`flame: ${n}`);
	for (const f of failures) console.log(`flame: FAIL ${f}`);
	console.log(`flame: FAIL ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
	process.exit(1);
});
