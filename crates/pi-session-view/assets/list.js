// pi-session serve's session list. Hand-written, no build step. Session text goes into the page
// with textContent only; it asks only its own server (/api/sessions for the details,
// /api/search for sessions whose messages match).
'use strict';
(function () {
  const D = JSON.parse(document.getElementById('data').textContent);
  const app = el('div', 'app');
  const header = el('header');
  const main = el('main', 'listing');
  document.body.appendChild(app);
  app.append(header, main);
  header.append(el('h1', null, 'Sessions'));
  header.append(el('div', 'meta', D.sessions.length + ' sessions · ' + D.roots.map(r => r.kind + ': ' + r.path).join(' · ')));
  const controls = el('div', 'controls');
  const search = el('input', 'search');
  search.type = 'search';
  search.id = 'search';
  search.placeholder = 'Search titles and messages';
  const info = el('span', 'hits-info');
  controls.append(search, info);
  header.append(controls);

  const table = el('table', 'sessions');
  const head = el('tr');
  for (const h of ['Session', 'First message', 'Modified', 'Size', 'Entries', 'Model', 'Cost']) head.append(el('th', null, h));
  const thead = el('thead');
  thead.append(head);
  table.append(thead);
  const body = el('tbody');
  table.append(body);
  main.append(table);

  // One row; `fill` (re)writes its cells when the server's details arrive.
  function fill(tr, s) {
    tr.textContent = '';
    const link = el('a', null, s.title || s.id || s.path.split('/').pop());
    link.href = '/session?path=' + encodeURIComponent(s.path);
    const name = el('td');
    name.append(link, el('div', 'dim', s.path.split('/').pop()));
    const pending = s.pending ? '…' : '';
    tr.append(name, el('td', 'first', s.first || pending), el('td', 'num', (s.modified || '').slice(0, 16).replace('T', ' ')),
      el('td', 'num', bytes(s.size || 0)), el('td', 'num', s.entries === undefined ? pending : s.entries),
      el('td', null, s.model || pending), el('td', 'num', s.pending ? pending : '$' + (s.cost || 0).toFixed(4)));
    tr.hay = ((s.title || '') + '\n' + (s.first || '')).toLowerCase();
  }
  const byPath = new Map();
  const rows = D.sessions.map(s => {
    const tr = el('tr');
    tr.dataset.path = s.path;
    fill(tr, s);
    byPath.set(s.path, tr);
    return tr;
  });
  // The details (first message, entries, model, cost) of sessions the server had not read yet.
  async function details() {
    if (D.sessions.some(s => s.pending)) {
      try {
        const answer = await fetch('/api/sessions');
        for (const s of (await answer.json()).sessions) {
          const tr = byPath.get(s.path);
          if (tr) fill(tr, s);
        }
      } catch (e) {
        info.textContent = 'could not read the details: ' + e;
      }
    }
    document.body.dataset.details = '1';
  }
  // Rows are added in chunks so a list of thousands paints at once.
  let next = 0;
  function more() {
    const frag = document.createDocumentFragment();
    for (const end = Math.min(rows.length, next + 200); next < end; next++) frag.append(rows[next]);
    body.append(frag);
    if (next < rows.length) requestAnimationFrame(more);
    else { document.body.dataset.ready = '1'; details(); }
  }
  more();

  function filter(extra) {
    const q = search.value.trim().toLowerCase();
    let shown = 0;
    for (const tr of rows) {
      const on = q.length < 2 || tr.hay.includes(q) || (extra && extra.has(tr.dataset.path));
      tr.hidden = !on;
      if (on) shown++;
    }
    info.textContent = q.length < 2 ? '' : shown + ' match' + (extra ? '' : ' (searching messages…)');
    return shown;
  }
  let timer = 0, asked = 0;
  search.addEventListener('input', () => {
    filter(null);
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const q = search.value.trim();
      if (q.length < 2) return;
      const mine = ++asked;
      try {
        const answer = await fetch('/api/search?q=' + encodeURIComponent(q));
        const found = await answer.json();
        if (mine === asked) filter(new Set(found.paths));
      } catch (e) {
        info.textContent = 'search failed: ' + e;
      }
    }, 250);
  });
})();
