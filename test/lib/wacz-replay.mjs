// wacz-replay.mjs: screenshots of a page, live and replayed from a WACZ in
// ReplayWeb.page, in Debian's Chromium (puppeteer-core), and their
// difference (pixelmatch).  Test-only (test/crawl-requisites.bats).
//
//   node wacz-replay.mjs live URL OUT.png [URL OUT.png]...
//   node wacz-replay.mjs replay WACZ URL OUT.png [URL OUT.png]...
//                                              (prints the pages that
//                                              ReplayWeb.page lists)
//   node wacz-replay.mjs diff A.png B.png      {"ratio": differing/all pixels}
//
// replay serves ReplayWeb.page's ui.js and sw.js (npm replaywebpage) and
// the WACZ (with Range requests, which ReplayWeb.page reads it by) from a
// server of its own on http://127.0.0.1:PORT: a loopback origin is a
// secure context for Chromium (as localhost is), so the service worker
// that replays the archive may register over plain http.  The page is the
// <replay-web-page> element with embed="replayonly" (the archived page
// alone, no banner), filling the viewport; the archived page's frame is
// screenshot once it has loaded and its network is idle.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const NPM = path.join(here, '..', 'npm', 'node_modules');
const require = createRequire(path.join(NPM, 'x.js'));
const puppeteer = require('puppeteer-core');
const { PNG } = require('pngjs');
const VIEW = { width: 800, height: 600 };
const TIMEOUT = 30000;

function browserPath() {
  for (const c of [process.env.SC_BROWSER, '/usr/lib/chromium/chromium-headless-shell',
    '/usr/lib/chromium/chromium'].filter(Boolean)) {
    try { fs.accessSync(c, fs.constants.X_OK); return c; } catch { /* next */ }
  }
  throw new Error('no Chromium (make deps installs chromium-headless-shell)');
}

async function launch() {
  const args = ['--disable-background-networking', '--disable-component-update', '--no-first-run',
    '--disable-sync', '--disable-default-apps', '--disable-extensions', '--disable-dev-shm-usage',
    '--font-render-hinting=none', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.*'];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  return puppeteer.launch({ executablePath: browserPath(), headless: 'shell', pipe: true, args,
    protocolTimeout: TIMEOUT + 10000 });
}

// The files of the replay origin: ReplayWeb.page's, the WACZ, the page.
function serve(wacz) {
  const rwp = path.join(NPM, 'replaywebpage');
  const page = url => `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0}
replay-web-page{display:block;width:100vw;height:100vh}</style></head><body>
<replay-web-page source="/archive.wacz" url="${url.replace(/[&"<>]/g, c => `&#${c.charCodeAt(0)};`)}" embed="replayonly" replayBase="/replay/"></replay-web-page>
<script src="/replay/ui.js"></script></body></html>`;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x'), p = u.pathname;
    if (p === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(page(u.searchParams.get('url') || ''));
    }
    if (p === '/replay/ui.js' || p === '/replay/sw.js') {
      res.writeHead(200, { 'content-type': 'text/javascript', 'service-worker-allowed': '/' });
      return fs.createReadStream(path.join(rwp, path.basename(p))).pipe(res);
    }
    if (p === '/archive.wacz') {
      const size = fs.statSync(wacz).size;
      const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || '');
      const head = { 'content-type': 'application/wacz', 'accept-ranges': 'bytes' };
      if (!m) {
        res.writeHead(200, { ...head, 'content-length': size });
        return req.method === 'HEAD' ? res.end() : fs.createReadStream(wacz).pipe(res);
      }
      let start = m[1] === '' ? size - Number(m[2]) : Number(m[1]);
      let end = m[1] === '' || m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
      if (start < 0) start = 0;
      res.writeHead(206, { ...head, 'content-length': end - start + 1,
        'content-range': `bytes ${start}-${end}/${size}` });
      return req.method === 'HEAD' ? res.end() : fs.createReadStream(wacz, { start, end }).pipe(res);
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// The frame of the archived page: ReplayWeb.page loads it from
// /replay/w/<collection>/<timestamp>mp_/<url>.
async function archivedFrame(page, url) {
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    const f = page.frames().find(fr => fr.url().includes('mp_/' + url));
    if (f) {
      try {
        if (await f.evaluate(() => document.readyState) === 'complete') return f;
      } catch { /* navigating: look again */ }
    }
    await new Promise(r => setTimeout(r, 100));
  }
  throw new Error(`no replayed frame of ${url} within ${TIMEOUT} ms; frames: ${page.frames().map(f => f.url()).join(' ')}`);
}

async function settle(frame) {
  // Fonts and images as the live page waits for them (networkidle0).
  await frame.evaluate(async () => {
    await document.fonts.ready;
    await Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  });
  await new Promise(r => setTimeout(r, 500));
}

// pairs: [URL, OUT.png, ...].
async function live(pairs) {
  const browser = await launch();
  try {
    for (let i = 0; i < pairs.length; i += 2) {
      const page = await browser.newPage();
      await page.setViewport(VIEW);
      await page.goto(pairs[i], { waitUntil: 'networkidle0', timeout: TIMEOUT });
      await settle(page.mainFrame());
      await page.screenshot({ path: pairs[i + 1] });
      await page.close();
    }
  } finally {
    await browser.close();
  }
}

// pairs: [URL, OUT.png, ...], each in a tab of its own; the pages list
// from the first.
async function replay(wacz, pairs) {
  const server = await serve(wacz);
  const browser = await launch();
  try {
    for (let i = 0; i < pairs.length; i += 2) {
      const page = await browser.newPage();
      await page.setViewport(VIEW);
      await page.goto(`http://127.0.0.1:${server.address().port}/?url=${encodeURIComponent(pairs[i])}`,
        { waitUntil: 'load', timeout: TIMEOUT });
      const frame = await archivedFrame(page, pairs[i]);
      await settle(frame);
      const el = await frame.frameElement();
      await el.screenshot({ path: pairs[i + 1] });
      if (i === 0) console.log(JSON.stringify(await pagesListed(page)));
      await page.close();
    }
  } finally {
    await browser.close();
    server.close();
  }
}

// ReplayWeb.page's list of the WACZ's pages, as its service worker's API
// gives them to its pages panel: /replay/w/api/coll-index names the
// collection loaded, /replay/w/api/c/ID/pages its pages, asked from
// ReplayWeb.page's own frame, which the service worker controls.
async function pagesListed(page) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const app = page.frames().find(f => f.url().includes('/replay/') && !f.url().includes('mp_/'));
    const got = !app ? null : await app.evaluate(async () => {
      const index = await (await fetch('/replay/w/api/coll-index')).json();
      const colls = index.colls || [];
      if (colls.length === 0) return null;
      const r = await fetch(`/replay/w/api/c/${colls[0].id}/pages`);
      return r.ok ? (await r.json()).pages : null;
    }).catch(e => ({ error: String(e), frames: page.frames().map(f => f.url()) }));
    if (Array.isArray(got)) return got.map(p => ({ url: p.url, ts: p.ts, title: p.title }));
    if (Date.now() > deadline) throw new Error(`ReplayWeb.page gave no pages list: ${JSON.stringify(got)}`);
    await new Promise(r => setTimeout(r, 200));
  }
}

async function diff(a, b) {
  const { default: pixelmatch } = await import(path.join(NPM, 'pixelmatch', 'index.js'));
  const A = PNG.sync.read(fs.readFileSync(a));
  const B = PNG.sync.read(fs.readFileSync(b));
  if (A.width !== B.width || A.height !== B.height) return { ratio: 1, why: `sizes ${A.width}x${A.height} ${B.width}x${B.height}` };
  const n = pixelmatch(A.data, B.data, null, A.width, A.height, { threshold: 0.1 });
  return { ratio: n / (A.width * A.height), pixels: n };
}

const [cmd, ...args] = process.argv.slice(2);
try {
  if (cmd === 'live') await live(args);
  else if (cmd === 'replay') await replay(args[0], args.slice(1));
  else if (cmd === 'diff') console.log(JSON.stringify(await diff(args[0], args[1])));
  else throw new Error('usage: wacz-replay.mjs live|replay|diff ...');
} catch (e) {
  console.error(`wacz-replay.mjs: ${e.message}`);
  process.exit(1);
}
