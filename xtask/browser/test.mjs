// Real-browser tests of the pages `pi-session export` and `pi-session serve` make, in the
// system's headless Chromium through puppeteer-core (no browser download). Run by
// `cargo xtask test` (xtask/src/browser.rs), which builds the binary and passes:
//
//   node xtask/browser/test.mjs PI_SESSION_BINARY CHROMIUM OUT_DIR
//
// Every check compares the page with facts computed here independently of the page (the
// branch walked from the JSONL's parentId links; the context counted by `pi-session context`).
// Screenshots go to OUT_DIR (target/browser/); timings to OUT_DIR/timings.json.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const [binary, chromium, outDir] = process.argv.slice(2);
if (!binary || !chromium || !outDir) {
  console.error('usage: node test.mjs PI_SESSION_BINARY CHROMIUM OUT_DIR');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
fs.mkdirSync(outDir, { recursive: true });

const FIXTURES = [
  'fixtures/omp/branch-summaries.jsonl', // branches, branch summaries
  'fixtures/omp/compactions-several.jsonl', // compactions
  'fixtures/omp/images.jsonl', // pictures, omp blobs, tool calls
  'fixtures/omp/long-tool-output.jsonl', // long tool results (collapsed)
  'fixtures/omp/bash-execution.jsonl', // bash executions
  'fixtures/omp/aborted-and-errored-turns.jsonl', // errors and aborted turns
  'fixtures/omp/labels.jsonl', // labels
  'fixtures/omp/python-execution.jsonl', // python executions
  'fixtures/omp/custom-entries-and-messages.jsonl', // custom entries and custom messages
  'fixtures/pi/custom-role-message.jsonl', // pi's custom-role messages
  'fixtures/view/archive-and-fork.jsonl', // omp's archive, a fork, model/thinking changes, thinking
  'fixtures/view/hostile.jsonl', // text that must stay text
];

let failures = 0;
const timings = {};
function check(ok, what) {
  if (ok) console.log('  ok   ' + what);
  else { failures++; console.log('  FAIL ' + what); }
}

/** Entries of a JSONL file (header and title slot left out), in file order. */
function entriesOf(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
    .filter(e => e.type !== 'session' && e.type !== 'title');
}
/** Ids from the root to `leafId`, walking parentId. */
function branchIds(entries, leafId) {
  const byId = new Map(entries.map(e => [e.id, e]));
  const ids = [];
  for (let e = byId.get(leafId); e && !ids.includes(e.id); e = byId.get(e.parentId)) ids.unshift(e.id);
  return ids;
}
/**
 * What the page must mark on the branch `ids`, counted from the JSONL: a CSS selector → how many
 * elements match it once every entry of the branch is drawn.
 */
function marksOf(entries, ids) {
  const byId = new Map(entries.map(e => [e.id, e]));
  const branch = ids.map(id => byId.get(id));
  const msgs = branch.filter(e => e.type === 'message' && e.message).map(e => e.message);
  const count = (list, f) => list.filter(f).length;
  const labels = new Map();
  for (const e of entries) if (e.type === 'label') { if (e.label) labels.set(e.targetId, e.label); else labels.delete(e.targetId); }
  const thinking = msgs.filter(m => m.role === 'assistant' && Array.isArray(m.content))
    .flatMap(m => m.content).filter(b => b && b.type === 'thinking').length;
  return {
    'article.type-compaction': count(branch, e => e.type === 'compaction'),
    'article.type-branch_summary': count(branch, e => e.type === 'branch_summary'),
    'article.type-model_change': count(branch, e => e.type === 'model_change'),
    'article.type-thinking_level_change': count(branch, e => e.type === 'thinking_level_change'),
    'article.type-custom_message': count(branch, e => e.type === 'custom_message'),
    'article.type-custom': count(branch, e => e.type === 'custom'),
    'article.role-custom': count(msgs, m => m.role === 'custom'),
    'article.role-bashExecution': count(msgs, m => m.role === 'bashExecution'),
    'article.role-pythonExecution': count(msgs, m => m.role === 'pythonExecution'),
    'details.thinking': thinking,
    'details.thinking[open]': 0,
    '.flag.error': count(msgs, m => (m.role === 'assistant' && m.stopReason === 'error') || (m.role === 'toolResult' && m.isError)),
    '.flag.aborted': count(msgs, m => m.role === 'assistant' && m.stopReason === 'aborted'),
    'article.role-assistant .usage': count(msgs, m => m.role === 'assistant' && Boolean(m.provider || m.model || m.usage)),
    '.head .label:not(.archived)': count(branch, e => labels.has(e.id)),
  };
}
/** Checks each mark of `marksOf` on the page; names the ones this fixture has. */
async function checkMarks(page, entries, ids) {
  const want = marksOf(entries, ids);
  const got = await page.evaluate(sels => Object.fromEntries(sels.map(s => [s, document.querySelectorAll('.list ' + s).length])), Object.keys(want));
  const wrong = Object.keys(want).filter(k => want[k] !== got[k]).map(k => `${k}: want ${want[k]}, drew ${got[k]}`);
  const present = Object.keys(want).filter(k => want[k] > 0).map(k => `${k.replace(/^article\.|^\./, '')} ${want[k]}`);
  check(wrong.length === 0, `marks every kind of entry on the branch (${present.join(', ') || 'plain messages'})` + (wrong.length ? ': ' + wrong.join('; ') : ''));
}

function contextLength(file, leafId, format) {
  const out = execFileSync(binary, ['context', file, '--leaf', leafId, '--format', format], { encoding: 'utf8' });
  const value = JSON.parse(out);
  return (Array.isArray(value) ? value : value.messages).length;
}

/** Scrolls until the lazy list has drawn all it has; returns the drawn cards' ids and positions. */
async function drawAll(page) {
  for (let i = 0; i < 200; i++) {
    const done = await page.evaluate(() => {
      const list = document.querySelector('.list');
      window.scrollTo(0, document.body.scrollHeight);
      return !list || list.dataset.rendered === list.dataset.count;
    });
    if (done) break;
    await new Promise(r => setTimeout(r, 30));
  }
  return page.evaluate(() => [...document.querySelectorAll('.list > article')].map(a => ({ id: a.dataset.id || null, pos: a.dataset.pos })));
}

function watch(page) {
  const problems = [];
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warn') problems.push(m.type() + ': ' + m.text()); });
  page.on('pageerror', e => problems.push('page error: ' + e.message));
  page.on('requestfailed', r => problems.push('request failed: ' + r.url()));
  page.on('request', r => { if (!/^(file|data|blob):/.test(r.url()) && !r.url().startsWith(page.allowedOrigin || '\u0000')) problems.push('network request: ' + r.url()); });
  return problems;
}

async function exportTest(browser, rel) {
  const file = path.join(root, rel);
  const name = path.basename(rel, '.jsonl');
  console.log(`export: ${rel}`);
  const html = path.join(outDir, name + '.html');
  execFileSync(binary, ['export', file, '-o', html], { stdio: ['ignore', 'ignore', 'inherit'] });
  const entries = entriesOf(file);
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const problems = watch(page);
  const started = Date.now();
  await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
  timings['export:' + name] = Date.now() - started;

  // Every entry of the selected (default) branch, in order.
  const leafId = entries[entries.length - 1].id;
  const expected = branchIds(entries, leafId);
  const drawn = await drawAll(page);
  check(JSON.stringify(drawn.map(d => d.id)) === JSON.stringify(expected),
    `shows every entry of the leaf's branch (${expected.length}; drew ${drawn.length})`);
  await checkMarks(page, entries, expected);
  if (rel.includes('compactions')) {
    // What a compaction replaced: the messages before its first kept entry, faded and marked.
    const unsent = await page.$$eval('.list article.unsent', a => a.map(x => x.dataset.id));
    const compaction = expected.map(id => entries.find(e => e.id === id)).filter(e => e.type === 'compaction').pop();
    const kept = expected.indexOf(compaction.firstKeptEntryId);
    const replaced = expected.slice(0, kept).filter(id => entries.find(e => e.id === id).type === 'message');
    check(replaced.length > 0 && replaced.every(id => unsent.includes(id)),
      `the ${replaced.length} messages the last compaction replaced are marked as not sent (${unsent.length} marked)`);
  }
  // Per turn and in total: model, tokens, cost (the session's total in the header).
  const meta = await page.$eval('header .meta', m => m.textContent);
  check(/session total [\d.,]+[kM]? tokens · \$[\d.]+/.test(meta), `the header shows the session's total tokens and cost (${meta.split(' · ').slice(-2).join(' · ')})`);
  const csp = await page.$eval('meta[http-equiv="Content-Security-Policy"]', m => m.content).catch(() => '');
  check(/default-src 'none'/.test(csp) && /connect-src 'none'/.test(csp) && !/unsafe-inline|unsafe-eval/.test(csp),
    'a Content-Security-Policy forbids network access and inline script');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(outDir, name + '.png') });

  // Switching branch.
  const tips = await page.$$eval('.tip:not([disabled])', b => b.map(x => x.dataset.pos));
  if (tips.length > 1) {
    await page.click(`.tip[data-pos="${tips[1]}"]`);
    const other = await drawAll(page);
    const tipId = other.length ? other[other.length - 1].id : null;
    const branch = await page.evaluate(() => document.body.dataset.branch);
    check(branch === tips[1] && tipId !== leafId &&
      JSON.stringify(other.map(d => d.id)) === JSON.stringify(branchIds(entries, tipId)),
      `switches to branch ${tips[1]} and shows its ${other.length} entries`);
    await checkMarks(page, entries, branchIds(entries, tipId));
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(outDir, name + '-branch2.png') });
    await page.click(`.tip[data-pos="${tips[0]}"]`);
  }

  // "What the model saw", in both formats, against `pi-session context`.
  for (const [mode, format] of [['agent', 'agent'], ['llm', 'llm']]) {
    await page.click(`button[data-mode="${mode}"]`);
    const cards = await drawAll(page);
    const want = contextLength(file, leafId, format);
    const shown = await page.evaluate(() => document.body.dataset.mode);
    check(shown === mode && cards.length === want, `"${mode}" view shows the ${want} context messages (drew ${cards.length})`);
    if (mode === 'agent') {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(outDir, name + '-context.png') });
    }
  }
  await page.click('button[data-mode="entries"]');

  // Search: the last word of the first user message.
  const firstUser = entries.find(e => e.message && e.message.role === 'user');
  const text = typeof firstUser.message.content === 'string' ? firstUser.message.content
    : firstUser.message.content.filter(b => b.type === 'text').map(b => b.text).join(' ');
  const word = text.split(/[^A-Za-z0-9]+/).filter(w => w.length >= 2).pop();
  await page.type('#search', word);
  await page.keyboard.press('Enter');
  await page.waitForSelector('article.hit', { timeout: 5000 }).catch(() => null);
  const hit = await page.evaluate(() => { const a = document.querySelector('article.hit'); return a ? a.textContent : ''; });
  check(hit.toLowerCase().includes(word.toLowerCase()), `search finds "${word}"`);

  // Pictures: shown on request from data: URIs (blob references resolved).
  const pics = await page.$$('button.pic');
  if (rel.includes('images')) {
    check(pics.length > 0, `pictures are collapsed (${pics.length} buttons)`);
    await page.click('button.mode[data-mode="entries"]');
    await page.$$eval('button.pic', bs => bs.forEach(b => b.click()));
    const sizes = await page.$$eval('.picture img', imgs => Promise.all(imgs.map(i => i.decode().then(() => i.naturalWidth, () => 0))));
    check(sizes.length >= 3 && sizes.every(w => w > 0), `pictures decode (${sizes.join(', ')} px wide), omp blobs included`);
    await page.screenshot({ path: path.join(outDir, name + '-pictures.png') });
  }

  if (rel.includes('long-tool-output')) {
    const more = await page.$$eval('.list button.more', bs => bs.map(b => b.textContent));
    check(more.length > 0 && more.every(t => /^show all [\d.]+ (B|KB|MB)$/.test(t)),
      `long tool output is collapsed with its size (${more.slice(0, 2).join(', ')})`);
  }
  if (rel.includes('archive-and-fork')) {
    const tipNames = await page.$$eval('.tip .tipname', t => t.map(x => x.textContent));
    check(tipNames.some(t => t.endsWith(' · archived')), `omp's archived branch is marked (${tipNames.join(' | ')})`);
    const header = await page.$eval('header', h => h.textContent);
    check(header.includes('forked from /work/sessions/-work-app/'), 'the fork names its parent session');
    const changes = await page.$$eval('.list .change', c => c.map(x => x.textContent));
    check(changes.includes('→ anthropic/claude-opus-4-5 (default)') && changes.includes('→ high'), `model and thinking changes show where they happen (${changes.join(', ')})`);
    const models = await page.$$eval('.list article.role-assistant .usage', u => u.map(x => x.textContent));
    check(models.length === 2 && models[0].startsWith('anthropic/claude-sonnet-4-5 · 1100 tokens') && models[1].startsWith('anthropic/claude-opus-4-5'),
      `each turn shows its model, tokens and cost (${models.join(' | ')})`);
  }

  if (rel.includes('hostile')) {
    const pwned = await page.evaluate(() => window.__pwned);
    check(pwned === undefined, 'the hostile session runs no script');
    const body = await page.evaluate(() => document.body.innerText);
    check(body.includes('</script><script>window.__pwned=1</script>') && body.includes('<img src=x onerror='),
      'hostile text shows as text');
    const title = await page.title();
    check(title.startsWith('</title><script>'), 'the session name stays text in <title>');
    check(await page.$$eval('main img, main iframe, main script, main svg', n => n.length) === 0, 'no element made from session text');
  }
  check(problems.length === 0, 'no console errors or network requests' + (problems.length ? ': ' + problems.join(' | ') : ''));
  await page.close();
}

/** A folder of `count` sessions, one in every 100 mentioning "zebra" in a reply only. */
function generateSessions(dir, count) {
  fs.mkdirSync(dir, { recursive: true });
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const lines = [
      { type: 'session', version: 3, id, timestamp: ts, cwd: '/work/project-' + (i % 7) },
      { type: 'message', id: 'u' + i, parentId: null, timestamp: ts, message: { role: 'user', content: `Question number ${i}: how do I fix the build?`, timestamp: 1 } },
      { type: 'message', id: 'a' + i, parentId: 'u' + i, timestamp: ts, message: { role: 'assistant', content: [{ type: 'text', text: i % 100 === 7 ? 'Feed the zebra first.' : 'Run cargo build.' }], api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0.0003, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.0006 } }, stopReason: 'stop', timestamp: 2 } },
    ];
    const file = path.join(dir, `${ts.replace(/[:.]/g, '-')}_${id}.jsonl`);
    fs.writeFileSync(file, lines.map(l => JSON.stringify(l)).join('\n') + '\n');
    const t = new Date(now - (count - i) * 1000);
    fs.utimesSync(file, t, t);
  }
}

async function serveTest(browser) {
  console.log('serve: 1,000 sessions over 127.0.0.1');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pi-session-serve-'));
  const dir = path.join(tmp, 'sessions');
  generateSessions(dir, 1000);
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home);
  const env = { ...process.env, HOME: home };
  for (const k of Object.keys(env)) if (/^(PI_|OMP_|XDG_)/.test(k)) delete env[k];
  const server = spawn(binary, ['serve', '--port', '0', dir], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise((resolve, reject) => {
      let text = '';
      server.stdout.on('data', d => { text += d; const m = text.match(/http:\/\/127\.0\.0\.1:\d+\//); if (m) resolve(m[0]); });
      server.on('exit', code => reject(new Error('serve exited with ' + code)));
      setTimeout(() => reject(new Error('serve printed no address')), 10000);
    });
    check(url.startsWith('http://127.0.0.1:'), 'serve binds 127.0.0.1 (' + url + ')');
    const page = await browser.newPage();
    page.allowedOrigin = url;
    await page.setViewport({ width: 1280, height: 900 });
    const problems = watch(page);
    // The list appears from the sessions' first lines; the details (first message, entries,
    // model, cost) follow from /api/sessions, read once and cached.
    for (const round of ['cold', 'warm']) {
      const started = Date.now();
      await page.goto(url, { waitUntil: 'domcontentloaded' });
      await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
      timings['serve:list-1000-' + round] = Date.now() - started;
      await page.waitForSelector('body[data-details="1"]', { timeout: 120000 });
      timings['serve:details-1000-' + round] = Date.now() - started;
      console.log(`  1,000 sessions (${round}): list shown in ${timings['serve:list-1000-' + round]} ms, details in ${timings['serve:details-1000-' + round]} ms`);
    }
    const rows = await page.$$eval('.sessions tbody tr', r => r.map(x => x.dataset.path));
    check(rows.length === 1000, `lists all 1,000 sessions (${rows.length})`);
    check(rows[0].endsWith('000000000999.jsonl') && rows[999].endsWith('000000000000.jsonl'), 'newest first');
    const first = await page.$eval('.sessions tbody tr td.first', td => td.textContent);
    check(first.startsWith('Question number 999'), 'shows the first message');
    await page.screenshot({ path: path.join(outDir, 'serve-list.png') });

    await page.type('#search', 'zebra');
    await page.waitForFunction(() => /^\d+ match$/.test(document.querySelector('.hits-info').textContent), { timeout: 30000 });
    const shown = await page.$$eval('.sessions tbody tr:not([hidden])', r => r.length);
    check(shown === 10, `search over messages finds the 10 sessions that mention "zebra" (${shown})`);
    await page.screenshot({ path: path.join(outDir, 'serve-search.png') });

    await Promise.all([page.waitForNavigation(), page.click('.sessions tbody tr:not([hidden]) a')]);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
    const cards = await page.$$eval('.list > article', a => a.length);
    check(cards === 2, `opening a session shows the export view (${cards} entries)`);
    const forbidden = await fetch(url + 'session?path=' + encodeURIComponent('/etc/passwd'));
    check(forbidden.status === 404, 'serves only listed sessions');
    check(problems.length === 0, 'no console errors' + (problems.length ? ': ' + problems.join(' | ') : ''));
    await page.close();
  } finally {
    server.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  for (const rel of FIXTURES) await exportTest(browser, rel);
  await serveTest(browser);
} finally {
  await browser.close();
}
fs.writeFileSync(path.join(outDir, 'timings.json'), JSON.stringify(timings, null, 2) + '\n');
console.log(failures ? `browser tests: ${failures} failed` : 'browser tests: all passed');
process.exit(failures ? 1 : 0);
