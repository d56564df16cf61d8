#!/usr/bin/env node
// The reference renderers beside sc-render: puppeteer-core or
// playwright-core (test/npm) driving Debian's Chromium over the DevTools
// pipe, rendering URL lines from stdin in N tabs and printing one NDJSON
// record per URL in sc-record(5)'s shape, as sc-render writes them:
//
//   {"url", "final_url", "status", "ok", "content_type", "bytes",
//    "elapsed_ms", "body", "rendered": {"ms", "dialogs", "waited_for"},
//    "error": {"kind": "render", "message"}}    (error only when not ok)
//
// body is the document after the wait (page.content()); a page whose wait
// runs out is a record with ok false, error.kind "render" and the DOM as it
// stood, never an empty body.  Records come in the order pages finish.
//
//   render-ref.js [--engine puppeteer|playwright] [-c N] [--wait W]
//                 [-m SECONDS] [--scroll N] [--viewport WxH] [--browser PATH]
//                 [--browser-arg FLAG]... < urls > out.jsonl
//
// --viewport: the page's window, 1280x800 unless given: sc-render's
// default, so that each renderer lays out and paints as many pixels
// (puppeteer's own default is 800x600, playwright's 1280x720).
//
// W: load, domcontentloaded, networkidle (no request for 500 ms) or
// selector:CSS.  --browser defaults to $SC_BROWSER, else Debian's
// chromium-headless-shell, else chromium.  As root the browser runs with
// --no-sandbox; each --browser-arg is one more flag of the browser's (e.g.
// --js-flags=--max-old-space-size=256, which makes memory-hog.html's
// renderer die at 256 MB of heap rather than at V8's default of some GB).  Unless SC_RENDER_ANY_HOST=1 the browser resolves no name
// but loopback (--host-resolver-rules $SC_RENDER_HOST_RULES, by default
// test/lib/render.bash's value), as in the test suite.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const NPM = path.join(__dirname, '..', 'npm', 'node_modules');

function usage(msg) {
  if (msg) process.stderr.write(`render-ref.js: ${msg}\n`);
  process.stderr.write(
    'usage: render-ref.js [--engine puppeteer|playwright] [-c N] [--wait W] [-m SECONDS]\n' +
    '                     [--scroll N] [--viewport WxH] [--browser PATH] [--browser-arg FLAG]... < urls\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { engine: 'puppeteer', tabs: 4, wait: 'load', timeoutMs: 30000, scroll: 0, browser: '', extra: [],
    viewport: { width: 1280, height: 800 } };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const num = (lo, hi) => {
      const s = val();
      const n = Number(s);
      if (!/^[0-9]+(\.[0-9]+)?$/.test(s) || n < lo || n > hi) usage(`${a}: not a number from ${lo} to ${hi}: ${s}`);
      return n;
    };
    if (a === '--engine') o.engine = val();
    else if (a === '-c') o.tabs = num(1, 256);
    else if (a === '--wait') o.wait = val();
    else if (a === '-m') o.timeoutMs = Math.round(num(0.1, 86400) * 1000);
    else if (a === '--scroll') o.scroll = num(0, 1000);
    else if (a === '--viewport') {
      const m = /^([0-9]{2,5})x([0-9]{2,5})$/.exec(val());
      if (!m) usage(`--viewport: WxH: ${argv[i]}`);
      o.viewport = { width: Number(m[1]), height: Number(m[2]) };
    } else if (a === '--browser') o.browser = val();
    else if (a === '--browser-arg') o.extra.push(val());
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown option ${a}`);
  }
  if (!['puppeteer', 'playwright'].includes(o.engine)) usage(`--engine: puppeteer or playwright: ${o.engine}`);
  if (!/^(load|domcontentloaded|networkidle|selector:.+)$/.test(o.wait)) usage(`--wait: ${o.wait}`);
  return o;
}

function browserPath(o) {
  const cands = [o.browser, process.env.SC_BROWSER, '/usr/lib/chromium/chromium-headless-shell',
    '/usr/lib/chromium/chromium'].filter(Boolean);
  for (const c of cands) {
    try { fs.accessSync(c, fs.constants.X_OK); return c; } catch (e) { /* next */ }
  }
  usage('no browser: install chromium-headless-shell (make deps) or give --browser');
}

// The flags sc-render's man page lists: no traffic but the page's.
function browserArgs(o) {
  const args = ['--disable-background-networking', '--disable-component-update', '--no-first-run',
    '--disable-sync', '--disable-default-apps', '--disable-extensions', '--metrics-recording-only',
    '--no-default-browser-check', '--disable-features=Translate,OptimizationHints,MediaRouter',
    '--disable-dev-shm-usage'];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  if (process.env.SC_RENDER_ANY_HOST !== '1') args.push('--host-resolver-rules=' +
    (process.env.SC_RENDER_HOST_RULES || 'MAP * ~NOTFOUND, EXCLUDE 127.0.0.*, EXCLUDE localhost'));
  return args.concat(o.extra);
}

function readUrls() {
  return new Promise(resolve => {
    const urls = [];
    const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    rl.on('line', l => { l = l.trim(); if (l && !l.startsWith('#')) urls.push(l); });
    rl.on('close', () => resolve(urls));
  });
}

// One engine's calls behind the same five functions.
async function openEngine(o) {
  const exe = browserPath(o);
  if (o.engine === 'puppeteer') {
    const puppeteer = require(path.join(NPM, 'puppeteer-core'));
    const browser = await puppeteer.launch({
      executablePath: exe, headless: 'shell', pipe: true, args: browserArgs(o),
      protocolTimeout: o.timeoutMs + 10000, defaultViewport: o.viewport,
    });
    return {
      browser,
      pid: browser.process().pid,
      crashEvent: 'error',
      newTab: () => browser.newPage(),
      goto: (tab, url, timeout) => tab.goto(url, {
        timeout, waitUntil: { load: 'load', domcontentloaded: 'domcontentloaded', networkidle: 'networkidle0' }[o.wait] || 'load',
      }),
      close: () => browser.close(),
    };
  }
  const { chromium } = require(path.join(NPM, 'playwright-core'));
  const browser = await chromium.launch({ executablePath: exe, headless: true, args: browserArgs(o) });
  const context = await browser.newContext({ viewport: o.viewport });
  return {
    browser,
    pid: null,
    crashEvent: 'crash',
    newTab: () => context.newPage(),
    goto: (tab, url, timeout) => tab.goto(url, {
      timeout, waitUntil: { load: 'load', domcontentloaded: 'domcontentloaded', networkidle: 'networkidle' }[o.wait] || 'load',
    }),
    close: () => browser.close(),
  };
}

async function scrollToEnd(tab, times) {
  for (let i = 0; i < times; i++) {
    const grew = await tab.evaluate(async () => {
      // The page's growth is waited for, up to 3 s, rather than for a
      // fixed time: under load its observer and timer can take longer
      // than any short sleep, and one slow step ended the scrolling.
      const h = document.documentElement.scrollHeight;
      window.scrollTo(0, h);
      for (let waited = 0; waited < 3000; waited += 50) {
        await new Promise(r => setTimeout(r, 50));
        if (document.documentElement.scrollHeight > h) return true;
      }
      return false;
    });
    if (!grew) break;
  }
}

async function renderOne(eng, o, state, url) {
  const t0 = Date.now();
  const rec = { url, final_url: url, status: 0, ok: false, content_type: null, bytes: 0, elapsed_ms: 0, body: '' };
  const deadline = t0 + o.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  let error = null;
  let dialogs = 0;
  let crashed = false;
  const onDialog = d => { dialogs++; d.dismiss().catch(() => {}); };
  const onCrash = () => { crashed = true; };
  state.tab.on('dialog', onDialog);
  state.tab.on(eng.crashEvent, onCrash);
  try {
    const resp = await eng.goto(state.tab, url, left());
    if (resp) {
      rec.status = resp.status();
      const h = resp.headers();
      rec.content_type = h['content-type'] || null;
    }
    if (o.wait.startsWith('selector:')) await state.tab.waitForSelector(o.wait.slice(9), { timeout: left() });
    if (o.scroll > 0) await scrollToEnd(state.tab, o.scroll);
  } catch (e) {
    error = String(e && e.message || e).split('\n')[0];
  }
  try {
    rec.body = await Promise.race([state.tab.content(),
      new Promise((_, rej) => setTimeout(() => rej(new Error('content: timed out')), 5000))]);
    rec.final_url = state.tab.url();
  } catch (e) {
    if (!error) error = String(e && e.message || e).split('\n')[0];
    state.broken = true;
  }
  state.tab.off('dialog', onDialog);
  state.tab.off(eng.crashEvent, onCrash);
  if (crashed) error = 'the page crashed (its renderer died)';
  rec.bytes = Buffer.byteLength(rec.body);
  rec.ok = !error && rec.status >= 200 && rec.status < 400;
  rec.elapsed_ms = Date.now() - t0;
  rec.rendered = { ms: rec.elapsed_ms, dialogs, waited_for: o.wait, scroll: o.scroll };
  if (!rec.ok) rec.error = { kind: 'render', message: error || `status ${rec.status}` };
  // A tab that timed out or crashed is not reused.
  if (error) state.broken = true;
  return rec;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const urls = await readUrls();
  const eng = await openEngine(o);
  let next = 0;
  const out = rec => process.stdout.write(JSON.stringify(rec) + '\n');
  async function worker() {
    const state = { tab: await eng.newTab(), broken: false };
    while (next < urls.length) {
      const url = urls[next++];
      out(await renderOne(eng, o, state, url));
      if (state.broken) {
        await Promise.race([state.tab.close().catch(() => {}), new Promise(r => setTimeout(r, 2000))]);
        state.tab = await eng.newTab();
        state.broken = false;
      }
    }
    await state.tab.close().catch(() => {});
  }
  try {
    await Promise.all(Array.from({ length: Math.min(o.tabs, Math.max(1, urls.length)) }, worker));
  } finally {
    await eng.close();
  }
}

main().catch(e => {
  process.stderr.write(`render-ref.js: ${e && e.stack || e}\n`);
  process.exit(1);
});
