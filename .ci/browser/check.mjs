// Open a flashlab report (index.html) in headless Chromium and check it the way a reader sees
// it: the page loads with no console error, no page error and no network request; every plot
// (figure.plot) is there with a non-zero-size SVG that has drawn something; the summary and run
// tables are filled; every legend line and bar-category label stays inside its chart, no
// legend line covers the plot area and no two category labels overlap; the same holds in print
// layout, at the printable width of an A4 page, where legend text must also be at least 9 pt.
// Saves a full-page screenshot; with SHOTS_DIR=DIR also one PNG per figure (DIR/ID.png).
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
    const legends = await page.$$eval('figure.plot', (els) => els.map((e) => {
      const svg = e.querySelector('svg');
      if (!svg) return { id: e.id, issues: [], font: Infinity, texts: 0 };
      const box = svg.getBoundingClientRect();
      const area = svg.querySelector('rect.plot-area');
      const a = area ? area.getBoundingClientRect() : null;
      const scale = box.width / (svg.viewBox.baseVal.width || svg.width.baseVal.value || box.width);
      const issues = [];
      let font = Infinity;
      const texts = [...svg.querySelectorAll('g.chart-legend text, g.chart-categories text')];
      const overlaps = (r, q) => r.left < q.right && r.right > q.left && r.top < q.bottom && r.bottom > q.top;
      for (const t of texts) {
        const r = t.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
          issues.push(`"${t.textContent}" leaves the chart`);
        }
        if (a && t.closest('g.chart-legend') && overlaps(r, a)) issues.push(`legend "${t.textContent}" covers the plot area`);
        if (t.closest('g.chart-legend')) font = Math.min(font, parseFloat(getComputedStyle(t).fontSize) * scale);
      }
      const cats = [...svg.querySelectorAll('g.chart-categories text')];
      for (let i = 0; i < cats.length; i++) {
        for (let j = i + 1; j < cats.length; j++) {
          if (overlaps(cats[i].getBoundingClientRect(), cats[j].getBoundingClientRect())) {
            issues.push(`labels "${cats[i].textContent}" and "${cats[j].textContent}" collide`);
          }
        }
      }
      return { id: e.id, issues, font, texts: texts.length };
    }));
    for (const l of legends) {
      for (const i of l.issues) problems.push(`${layout}: plot ${l.id}: ${i}`);
      // 9 pt = 12 CSS px; checked where the page is laid out at a printed page's width.
      if (layout === 'print' && l.texts > 0 && l.font < 12) problems.push(`print: plot ${l.id}: legend text ${l.font.toFixed(1)} px (< 9 pt)`);
    }
    const rows = await page.$$eval('#summary tbody tr', (r) => r.length);
    if (rows < 1) problems.push(`${layout}: the summary table is empty`);
    const run = await page.$$eval('#run tbody tr', (r) => r.length);
    if (run < 5) problems.push(`${layout}: the run metadata has ${run} rows`);
    return plots.length;
  };
  const n = await check('screen');
  await page.screenshot({ path: shot, fullPage: true });
  if (process.env.SHOTS_DIR) {
    for (const el of await page.$$('figure.plot')) {
      const id = await el.getAttribute('id');
      await el.screenshot({ path: `${process.env.SHOTS_DIR}/${id}.png` });
    }
  }
  // A4 less 14 mm margins each side: 182 mm = 688 CSS px.
  await page.setViewportSize({ width: 688, height: 1000 });
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
