// SPDX-License-Identifier: BSD-2-Clause
//
// Debian's headless chromium through playwright-core, as every page check here drives it
// (flame.js, robust.js, views.js): the same flags, window and profile directory for each, so
// that a page is judged the same way by all of them. A missing browser or playwright-core ends
// the check with a FAIL line naming what installs it.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// The browser context, in a fresh profile directory; close() closes it and removes the
// directory. tag names the check in its FAIL line.
async function launch(tag) {
	let chromium;

	if (!fs.existsSync(CHROMIUM)) {
		console.log(`${tag}: FAIL: ${CHROMIUM} is missing (apt-get install chromium, or make deps-test)`);
		process.exit(1);
	}
	try {
		({ chromium } = require('playwright-core'));
	} catch (e) {
		console.log(`${tag}: FAIL: playwright-core is not installed (make browser-deps)`);
		process.exit(1);
	}
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostprof-chromium-'));
	const ctx = await chromium.launchPersistentContext(profileDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
		viewport: { width: 1400, height: 900 },
		deviceScaleFactor: 1,
		timeout: 30000,
	});
	return {
		ctx,
		close: async () => {
			await ctx.close();
			fs.rmSync(profileDir, { recursive: true, force: true });
		},
	};
}

// Failures and notes of one check, and check(ok, msg) that records a failure.
function checker() {
	const failures = [];
	const notes = [];
	const check = (ok, msg) => {
		if (!ok) failures.push(msg);
		return ok;
	};
	return { failures, notes, check };
}

module.exports = { launch, checker };
