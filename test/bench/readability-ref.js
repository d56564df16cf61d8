// Mozilla's Readability (npm @mozilla/readability, on jsdom as its README
// shows), the anchor of test/bench/maintext.py: fetch records (NDJSON) on
// stdin, one {"url", "text"} line per record on stdout (text: textContent
// of the article, null when Readability finds none).
"use strict";
const path = require("path");
const readline = require("readline");
const modules = path.join(__dirname, "..", "npm", "node_modules");
const { JSDOM, VirtualConsole } = require(path.join(modules, "jsdom"));
const { Readability } = require(path.join(modules, "@mozilla/readability"));

const quiet = new VirtualConsole();
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  const rec = JSON.parse(line);
  let text = null;
  try {
    const dom = new JSDOM(rec.body, { url: rec.url, virtualConsole: quiet });
    const article = new Readability(dom.window.document).parse();
    text = article ? article.textContent : null;
    dom.window.close();
  } catch (e) {
    text = null;
  }
  process.stdout.write(JSON.stringify({ url: rec.url, text }) + "\n");
});
