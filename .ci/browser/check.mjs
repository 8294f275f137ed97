// Open a flashlab report (index.html) in headless Chromium and check it the way a reader sees
// it: the page loads with no console error, no page error and no network request; every plot
// (figure.plot) is there with a non-zero-size SVG that has drawn something; the summary and run
// tables are filled; the same holds in print layout. Saves a full-page screenshot.
//
// usage: node check.mjs PAGE.html SCREENSHOT.png EXPECTED_PLOTS
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const [page_path, shot, expected_arg] = process.argv.slice(2);
const expected = Number(expected_arg);
if (!page_path || !shot || !(expected > 0)) {
  console.error('usage: node check.mjs PAGE.html SCREENSHOT.png EXPECTED_PLOTS');
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) problems.push(`network request: ${r.url()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(pathToFileURL(page_path).href, { waitUntil: 'load' });

  const check = async (layout) => {
    const plots = await page.$$eval('figure.plot', (els) => els.map((e) => {
      const svg = e.querySelector('svg');
      const r = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
      const marks = svg ? svg.querySelectorAll('polyline, path, circle, rect, line, polygon').length : 0;
      return { id: e.id, width: r.width, height: r.height, marks };
    }));
    if (plots.length !== expected) problems.push(`${layout}: ${plots.length} plots, expected ${expected}`);
    for (const p of plots) {
      if (!(p.width > 50 && p.height > 50)) problems.push(`${layout}: plot ${p.id} is ${p.width}x${p.height} px`);
      if (p.marks < 5) problems.push(`${layout}: plot ${p.id} draws nothing (${p.marks} marks)`);
    }
    const rows = await page.$$eval('#summary tbody tr', (r) => r.length);
    if (rows < 1) problems.push(`${layout}: the summary table is empty`);
    const run = await page.$$eval('#run tbody tr', (r) => r.length);
    if (run < 5) problems.push(`${layout}: the run metadata has ${run} rows`);
    return plots.length;
  };
  const n = await check('screen');
  await page.screenshot({ path: shot, fullPage: true });
  await page.emulateMedia({ media: 'print' });
  await check('print');
  console.log(`browser check: ${n} plots, all drawn with non-zero size; screenshot ${shot}`);
} finally {
  await browser.close();
}
if (problems.length > 0) {
  for (const p of problems) console.error(`browser check: ${p}`);
  process.exit(1);
}
