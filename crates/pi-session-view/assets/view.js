// pi-session's session page. Hand-written, no build step, no network.
//
// Rules this file keeps:
// - Session text reaches the document only through `textContent` (`el` in common.js, `textBlock`);
//   never innerHTML, never an attribute that runs code, no inline handlers.
// - The page holds no format rule: branches, totals, labels and the context come computed in the
//   data (see pi-session-view's `view_model`); this file only draws them.
// - Lazy: entries are drawn a chunk at a time as the reader scrolls; long texts, thinking,
//   tool arguments and pictures are drawn only when opened.
'use strict';
(function () {
  const D = JSON.parse(document.getElementById('data').textContent);
  const E = D.entries;
  const CHUNK = 60;
  const LONG_CHARS = 3000;
  const LONG_LINES = 40;
  const PREVIEW_CHARS = 800;

  // ---------- small helpers ----------
  function add(parent, ...children) {
    for (const child of children) if (child) parent.appendChild(child);
    return parent;
  }
  function utf8Size(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c < 0xdc00) ? (i++, 4) : 3;
    }
    return n;
  }
  function tokens(n) {
    if (!n) return '0';
    if (n >= 1e6) return (n / 1e6).toFixed(2) + 'M';
    if (n >= 1e4) return (n / 1e3).toFixed(1) + 'k';
    return String(Math.round(n));
  }
  function cost(n) { return '$' + (n || 0).toFixed(n >= 1 ? 2 : 4); }
  function str(v) { return typeof v === 'string' ? v : ''; }
  function json(v) {
    try { return JSON.stringify(v, null, 2); } catch (_) { return String(v); }
  }
  function time(ts) {
    const s = str(ts);
    return s.length >= 19 ? s.slice(0, 19).replace('T', ' ') : s;
  }
  function snippet(s, n) {
    const one = s.replace(/\s+/g, ' ').trim();
    return one.length > n ? one.slice(0, n - 1) + '…' : one;
  }
  function button(label, cls, onClick) {
    const b = el('button', cls, label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  // A <details> whose body is built only when first opened.
  function lazy(summary, build, cls) {
    const d = el('details', cls);
    add(d, el('summary', null, summary));
    let built = false;
    // Builds the body now (search opens details synchronously; `toggle` fires later).
    d.ensure = () => { if (!built) { built = true; add(d, build()); } };
    d.addEventListener('toggle', () => { if (d.open) d.ensure(); });
    return d;
  }
  // Text as a person reads it; long text shows a preview and a button for the rest.
  function textBlock(s, cls) {
    s = str(s);
    const pre = el('pre', 'text' + (cls ? ' ' + cls : ''));
    let lines = 0;
    for (let i = s.indexOf('\n'); i >= 0 && lines <= LONG_LINES; i = s.indexOf('\n', i + 1)) lines++;
    if (s.length <= LONG_CHARS && lines <= LONG_LINES) { pre.textContent = s; return pre; }
    let cut = Math.min(PREVIEW_CHARS, s.length);
    const nth = s.split('\n', 12).join('\n').length;
    cut = Math.min(cut, nth);
    pre.textContent = s.slice(0, cut) + '…';
    const wrap = el('div', 'long');
    const more = button('show all ' + bytes(utf8Size(s)), 'more', () => {
      pre.textContent = s;
      more.remove();
    });
    return add(wrap, pre, more);
  }
  function textOf(content) {
    if (typeof content === 'string') return content;
    if (!Array.isArray(content)) return '';
    return content.filter(b => b && b.type === 'text').map(b => str(b.text)).join('\n');
  }

  // ---------- pictures ----------
  const MIME = /^image\/[a-z0-9.+-]+$/i;
  function picture(block) {
    const data = str(block.data);
    const mime = str(block.mimeType) || str(block.mime_type);
    const box = el('div', 'picture');
    if (data.startsWith('blob:')) {
      add(box, el('span', 'warn', 'picture ' + data.slice(0, 24) + '… (blob not found)'));
      return box;
    }
    if (!MIME.test(mime) || !/^[A-Za-z0-9+/=\s]*$/.test(data.slice(0, 4096))) {
      add(box, el('span', 'warn', 'picture of an unknown kind (' + (mime || 'no type') + ')'));
      return box;
    }
    const size = Math.floor(data.length * 3 / 4);
    const show = button('show picture · ' + mime + ' · ' + bytes(size), 'more pic', () => {
      const img = el('img');
      img.alt = 'picture (' + mime + ')';
      img.src = 'data:' + mime + ';base64,' + data;
      show.replaceWith(img);
    });
    return add(box, show);
  }

  // ---------- message content ----------
  function blocks(content, into) {
    if (typeof content === 'string') { add(into, textBlock(content)); return; }
    if (!Array.isArray(content)) { if (content !== undefined) add(into, jsonBlock('content', content)); return; }
    for (const b of content) {
      if (!b || typeof b !== 'object') continue;
      switch (b.type) {
        case 'text': add(into, textBlock(b.text)); break;
        case 'thinking': {
          const t = str(b.thinking);
          add(into, lazy('thinking · ' + bytes(utf8Size(t)) + (b.redacted ? ' (redacted)' : ''),
            () => textBlock(t, 'thinking'), 'thinking'));
          break;
        }
        case 'redactedThinking': add(into, el('div', 'note', 'thinking (redacted)')); break;
        case 'image': add(into, picture(b)); break;
        case 'toolCall': add(into, toolCall(b)); break;
        default: add(into, jsonBlock(String(b.type || 'block'), b));
      }
    }
  }
  function jsonBlock(name, value) {
    const text = json(value);
    return lazy(name + ' · ' + bytes(utf8Size(text)), () => textBlock(text, 'json'), 'raw');
  }
  function toolCall(b) {
    const box = el('div', 'toolcall');
    const args = b.arguments === undefined ? b.input : b.arguments;
    const text = json(args === undefined ? {} : args);
    add(box, add(el('div', 'toolhead'), el('span', 'tool', '→ ' + str(b.name)), el('span', 'dim', ' ' + str(b.id))));
    if (text.length <= 400 && text.split('\n').length <= 12) add(box, textBlock(text, 'json'));
    else add(box, lazy('arguments · ' + bytes(utf8Size(text)), () => textBlock(text, 'json'), 'args'));
    return box;
  }

  // ---------- one entry ----------
  function usageLine(pos, message) {
    const u = D.usage[String(pos)];
    const parts = [];
    const model = [str(message.provider), str(message.model)].filter(Boolean).join('/');
    if (model) parts.push(model);
    if (u) parts.push(tokens(u.tokens) + ' tokens', tokens(u.output) + ' out', cost(u.cost));
    return parts.length ? el('div', 'usage', parts.join(' · ')) : null;
  }
  function messageBody(m, pos, card) {
    const body = el('div', 'body');
    const role = str(m.role);
    card.classList.add('role-' + (role || 'unknown').replace(/[^A-Za-z0-9_-]/g, ''));
    switch (role) {
      case 'user':
      case 'developer':
      case 'system':
        blocks(m.content, body);
        if (Array.isArray(m.attachments)) for (const a of m.attachments) add(body, el('div', 'note', 'attached: ' + str(a && a.name)));
        break;
      case 'assistant': {
        blocks(m.content, body);
        const reason = str(m.stopReason);
        if (reason === 'error') { card.classList.add('error'); add(body, el('div', 'flag error', 'error: ' + str(m.errorMessage))); }
        if (reason === 'aborted') { card.classList.add('aborted'); add(body, el('div', 'flag aborted', 'aborted' + (m.errorMessage ? ': ' + str(m.errorMessage) : ''))); }
        if (pos !== null) add(body, usageLine(pos, m));
        break;
      }
      case 'toolResult': {
        if (m.isError) { card.classList.add('error'); add(body, el('div', 'flag error', 'tool error')); }
        add(body, el('div', 'dim', str(m.toolCallId)));
        blocks(m.content, body);
        if (m.details !== undefined) add(body, jsonBlock('details', m.details));
        break;
      }
      case 'bashExecution':
      case 'pythonExecution': {
        const code = role === 'bashExecution' ? '$ ' + str(m.command) : str(m.code);
        add(body, textBlock(code, 'command'));
        add(body, textBlock(str(m.output), 'output'));
        const flags = [];
        if (m.exitCode !== undefined && m.exitCode !== null) flags.push('exit ' + m.exitCode);
        if (m.cancelled) flags.push('cancelled');
        if (m.truncated) flags.push('truncated' + (m.fullOutputPath ? ' (full output: ' + str(m.fullOutputPath) + ')' : ''));
        if (m.excludeFromContext) flags.push('not sent to the model');
        if (m.cancelled || (m.exitCode && m.exitCode !== 0)) card.classList.add('aborted');
        if (flags.length) add(body, el('div', 'usage', flags.join(' · ')));
        break;
      }
      case 'custom':
        add(body, el('div', 'dim', str(m.customType) + (m.display === false ? ' · hidden from the user' : '')));
        blocks(m.content, body);
        break;
      case 'branchSummary':
      case 'compactionSummary':
        add(body, textBlock(str(m.summary)));
        break;
      default:
        if (m.content !== undefined) blocks(m.content, body);
        add(body, jsonBlock('message', m));
    }
    return body;
  }
  function roleLabel(m) {
    const role = str(m.role) || 'message';
    if (role === 'toolResult') return 'tool result · ' + str(m.toolName);
    if (role === 'bashExecution') return 'bash';
    if (role === 'pythonExecution') return 'python';
    if (role === 'custom') return 'custom message';
    if (role === 'branchSummary') return 'branch summary';
    if (role === 'compactionSummary') return 'compaction summary';
    return role;
  }
  function head(kind, e, pos) {
    const h = el('div', 'head');
    add(h, el('span', 'kind', kind));
    if (e && e.id !== undefined) add(h, el('span', 'dim', String(e.id)));
    const label = e && typeof e.id === 'string' ? D.labels[e.id] : undefined;
    if (label !== undefined) add(h, el('span', 'label', str(label)));
    if (e && typeof e.id === 'string' && D.archived[e.id] !== undefined) add(h, el('span', 'label archived', 'archived'));
    if (e) add(h, el('span', 'time', time(e.timestamp)));
    if (pos !== null && pos !== undefined) add(h, el('span', 'pos', '#' + pos));
    return h;
  }
  function entryCard(pos) {
    const e = E[pos] || {};
    const card = el('article', 'entry');
    card.dataset.pos = String(pos);
    if (typeof e.id === 'string') card.dataset.id = e.id;
    const type = str(e.type);
    card.classList.add('type-' + type.replace(/[^A-Za-z0-9_-]/g, ''));
    if (e.message && typeof e.message === 'object') {
      add(card, head(roleLabel(e.message), e, pos), messageBody(e.message, pos, card));
      if (sent && !sent.has(pos)) { card.classList.add('unsent'); add(card, el('div', 'note', 'not in the context the model was sent (compacted away or left out)')); }
      return card;
    }
    const body = el('div', 'body');
    let kind = type || 'entry';
    switch (type) {
      case 'compaction':
        kind = 'compaction';
        add(body, el('div', 'usage', [
          typeof e.tokensBefore === 'number' ? tokens(e.tokensBefore) + ' tokens before' : '',
          e.firstKeptEntryId ? 'kept from ' + str(e.firstKeptEntryId) : 'nothing kept',
        ].filter(Boolean).join(' · ')));
        add(body, textBlock(str(e.summary)));
        if (e.details !== undefined) add(body, jsonBlock('details', e.details));
        break;
      case 'branch_summary':
        kind = 'branch summary';
        add(body, el('div', 'usage', 'from ' + str(e.fromId)));
        add(body, textBlock(str(e.summary)));
        break;
      case 'model_change':
        kind = 'model';
        add(body, el('div', 'change', '→ ' + (str(e.model) || [str(e.provider), str(e.modelId)].filter(Boolean).join('/')) + (e.role ? ' (' + str(e.role) + ')' : '')));
        break;
      case 'thinking_level_change':
        kind = 'thinking level';
        add(body, el('div', 'change', '→ ' + str(e.thinkingLevel)));
        break;
      case 'label':
        add(body, el('div', 'change', str(e.targetId) + ': ' + (e.label ? str(e.label) : '(label removed)')));
        break;
      case 'session_info':
        kind = 'session name';
        add(body, el('div', 'change', str(e.name)));
        break;
      case 'custom_message':
        kind = 'custom message · ' + str(e.customType);
        if (e.display === false) add(body, el('div', 'dim', 'hidden from the user'));
        blocks(e.content, body);
        if (e.details !== undefined) add(body, jsonBlock('details', e.details));
        break;
      case 'custom':
        kind = 'custom · ' + str(e.customType);
        if (e.data !== undefined) add(body, jsonBlock('data', e.data));
        break;
      default:
        add(body, jsonBlock('entry', e));
    }
    return add(card, head(kind, e, pos), body);
  }
  function contextCard(item, i) {
    if (item.e !== undefined) {
      const card = entryCard(item.e);
      card.classList.remove('unsent');
      for (const n of card.querySelectorAll(':scope > .note')) n.remove();
      return card;
    }
    const card = el('article', 'entry synthesized');
    const m = item.m || {};
    add(card, head(roleLabel(m) + ' · built for the model', null, null), messageBody(m, null, card));
    card.dataset.ctx = String(i);
    return card;
  }

  // ---------- layout ----------
  let current = D.leaf !== null && D.branches[String(D.leaf)] ? D.leaf : (D.tips.length ? D.tips[0].pos : null);
  let mode = 'entries';
  let sent = null;
  const app = el('div', 'app');
  const header = el('header');
  const aside = el('aside');
  const main = el('main');
  const status = el('div', 'status');
  add(document.body, add(app, header, aside, add(main, status)));

  const s = D.session;
  add(header, el('h1', null, s.title || s.file || 'session'));
  const meta = [s.dialect, s.id, s.cwd, time(s.created), bytes(s.bytes || 0), E.length + ' entries',
    'session total ' + tokens(D.totals.tokens) + ' tokens · ' + cost(D.totals.cost)].filter(Boolean);
  add(header, el('div', 'meta', meta.join(' · ')));
  if (s.parentSession) {
    const parent = el('div', 'meta', 'forked from ');
    // The link is the exporter's (serve's `/session?path=…`, or an exported page beside this
    // one), never the session's text; anything else shows as text only.
    if (typeof s.parentHref === 'string' && /^(\/session\?path=|[^:\/?#]+\.html$)/.test(s.parentHref)) {
      const a = el('a', 'parent', str(s.parentSession));
      a.href = s.parentHref;
      add(parent, a);
    } else {
      add(parent, document.createTextNode(str(s.parentSession)));
    }
    add(header, parent);
  }
  if (D.diagnostics.length) add(header, lazy(D.diagnostics.length + ' problem(s) reading the session', () => textBlock(D.diagnostics.join('\n')), 'problems'));
  const controls = el('div', 'controls');
  const modes = el('div', 'modes');
  const modeButtons = {};
  for (const [key, label] of [['entries', 'Entries'], ['agent', 'What the model saw'], ['llm', '… as sent (llm)']]) {
    modeButtons[key] = button(label, 'mode', () => { mode = key; show(); });
    modeButtons[key].dataset.mode = key;
    add(modes, modeButtons[key]);
  }
  const search = el('input', 'search');
  search.type = 'search';
  search.placeholder = 'Search this session';
  search.id = 'search';
  const hitsInfo = el('span', 'hits-info');
  add(header, add(controls, modes, search, hitsInfo));
  const results = el('div', 'results');
  add(header, results);

  // Branches and tree.
  const branchList = el('div', 'branches');
  add(aside, el('h2', null, 'Branches (' + D.tips.length + ')'), branchList);
  function lastUserText(positions) {
    for (let i = positions.length - 1; i >= 0; i--) {
      const m = E[positions[i]] && E[positions[i]].message;
      if (m && m.role === 'user') return textOf(m.content);
    }
    return '';
  }
  const tipButtons = new Map();
  D.tips.forEach((tip, n) => {
    const b = D.branches[String(tip.pos)];
    const item = el('button', 'tip');
    item.type = 'button';
    item.dataset.pos = String(tip.pos);
    add(item, el('span', 'tipname', (n === 0 && D.leaf === tip.pos ? 'leaf' : 'branch ' + (n + 1)) + (tip.label ? ' · “' + str(tip.label) + '”' : '') + (tip.archived ? ' · archived' : '')));
    if (b) {
      add(item, el('span', 'tipmeta', b.positions.length + ' entries · ' + tokens(b.totals.tokens) + ' tokens · ' + cost(b.totals.cost)));
      add(item, el('span', 'tiptext', snippet(lastUserText(b.positions), 90)));
    } else {
      item.disabled = true;
      add(item, el('span', 'tipmeta', 'not embedded: export with --leaf ' + str(tip.id)));
    }
    item.addEventListener('click', () => { if (b) { current = tip.pos; show(); } });
    tipButtons.set(tip.pos, item);
    add(branchList, item);
  });
  add(aside, el('h2', null, 'Tree'), treeOutline());

  function treeOutline() {
    const children = E.map(() => []);
    const roots = [];
    D.parents.forEach((p, i) => { if (p >= 0 && p < E.length && p !== i) children[p].push(i); else roots.push(i); });
    const seen = new Uint8Array(E.length);
    const box = el('div', 'tree');
    let budget = 3000;
    function describe(pos) {
      const e = E[pos] || {};
      if (e.message) return roleLabel(e.message) + ': ' + snippet(textOf(e.message.content) || str(e.message.command) || str(e.message.summary), 50);
      if (e.type === 'compaction') return '⊟ compaction';
      if (e.type === 'branch_summary') return '↳ branch summary: ' + snippet(str(e.summary), 40);
      return str(e.type);
    }
    function segment(start, into) {
      const stack = [[start, into]];
      while (stack.length) {
        const [first, parent] = stack.pop();
        if (budget-- <= 0) { add(parent, el('div', 'dim', '… (tree cut short)')); return; }
        let pos = first, count = 0;
        const marks = [];
        while (!seen[pos]) {
          seen[pos] = 1;
          count++;
          const e = E[pos] || {};
          if (typeof e.id === 'string' && D.labels[e.id] !== undefined) marks.push('“' + str(D.labels[e.id]) + '”');
          if (e.type === 'compaction') marks.push('⊟ compaction');
          if (e.type === 'branch_summary') marks.push('↳ summary');
          if (children[pos].length !== 1) break;
          pos = children[pos][0];
        }
        const node = el('div', 'seg');
        node.dataset.first = String(first);
        node.dataset.last = String(pos);
        const line = el('button', 'segline', describe(first) + (count > 1 ? '  (+' + (count - 1) + ')' : ''));
        line.type = 'button';
        line.addEventListener('click', () => goTo(pos));
        add(node, line);
        if (marks.length) add(node, el('span', 'marks', marks.join(' ')));
        const kids = el('div', 'kids');
        add(node, kids);
        add(parent, node);
        if (children[pos].length > 1) for (let k = children[pos].length - 1; k >= 0; k--) if (!seen[children[pos][k]]) stack.push([children[pos][k], kids]);
      }
    }
    for (const r of roots) segment(r, box);
    const lost = [];
    for (let i = 0; i < E.length; i++) if (!seen[i]) lost.push(i);
    if (lost.length) add(box, el('div', 'warn', lost.length + ' entries unreachable from a root (parent cycle)'));
    return box;
  }

  // ---------- the list, drawn lazily ----------
  let observer = null;
  let list = null;
  function renderList(count, draw) {
    if (observer) observer.disconnect();
    if (list) list.remove();
    list = el('div', 'list');
    list.dataset.count = String(count);
    add(main, list);
    let next = 0;
    const sentinel = el('div', 'sentinel');
    function more(n) {
      const frag = document.createDocumentFragment();
      const end = Math.min(count, next + n);
      for (; next < end; next++) frag.appendChild(draw(next));
      list.insertBefore(frag, sentinel.parentNode === list ? sentinel : null);
      list.dataset.rendered = String(next);
      if (next >= count) { sentinel.remove(); if (observer) observer.disconnect(); }
    }
    add(list, sentinel);
    more(CHUNK);
    if (next < count) {
      observer = new IntersectionObserver(es => { if (es.some(x => x.isIntersecting)) more(CHUNK); }, { rootMargin: '2000px' });
      observer.observe(sentinel);
    }
    list.renderUpTo = i => { if (i >= next) more(i - next + 1 + CHUNK); };
    return list;
  }

  function show() {
    const b = D.branches[String(current)];
    for (const [pos, item] of tipButtons) item.classList.toggle('current', pos === current);
    for (const [key, btn] of Object.entries(modeButtons)) btn.classList.toggle('current', key === mode);
    document.body.dataset.mode = mode;
    document.body.dataset.branch = String(current);
    for (const seg of document.querySelectorAll('.seg')) seg.classList.remove('on');
    if (!b) { status.textContent = 'No branch to show.'; renderList(0, () => el('div')); return; }
    const onBranch = new Set(b.positions);
    for (const seg of document.querySelectorAll('.seg')) if (onBranch.has(Number(seg.dataset.last))) seg.classList.add('on');
    sent = new Set(b.agent.filter(x => x.e !== undefined).map(x => x.e));
    const bt = b.totals;
    if (mode === 'entries') {
      status.textContent = 'Branch to ' + str(E[current] && E[current].id) + ': ' + b.positions.length + ' entries · ' +
        tokens(bt.tokens) + ' tokens · ' + cost(bt.cost) + '. Entries the model was not sent are faded.';
      renderList(b.positions.length, i => entryCard(b.positions[i]));
    } else {
      const items = b[mode];
      const m = b.meta || {};
      const facts = ['thinking ' + (m.thinkingLevel === undefined ? '—' : str(m.thinkingLevel) || 'off')];
      if (m.model) facts.push('model ' + (typeof m.model === 'string' ? m.model : [str(m.model.provider), str(m.model.modelId)].filter(Boolean).join('/')));
      status.textContent = (mode === 'agent' ? 'What the model saw (buildSessionContext, ' : 'What the model was sent (convertToLlm, ') +
        s.dialect + '): ' + items.length + ' messages of ' + b.positions.length + ' entries · ' + facts.join(' · ') + '.';
      renderList(items.length, i => contextCard(items[i], i));
    }
  }

  // ---------- search ----------
  let haystack = null;
  // Keys whose strings a person does not search for (picture bytes, signatures, ids, times).
  const SKIP = new Set(['data', 'thinkingSignature', 'signature', 'textSignature', 'id', 'parentId', 'timestamp', 'type', 'api', 'mimeType']);
  function strings(v, out, key) {
    if (typeof v === 'string') { if (!SKIP.has(key)) out.push(v); }
    else if (Array.isArray(v)) for (const x of v) strings(x, out, key);
    else if (v && typeof v === 'object') for (const k of Object.keys(v)) strings(v[k], out, k);
    return out;
  }
  function runSearch() {
    const q = search.value.trim().toLowerCase();
    results.textContent = '';
    hitsInfo.textContent = '';
    clearHighlights();
    if (q.length < 2) return;
    if (!haystack) haystack = E.map(e => strings(e, [], '').join('\n').toLowerCase());
    const hits = [];
    for (let i = 0; i < haystack.length && hits.length < 500; i++) if (haystack[i].includes(q)) hits.push(i);
    hitsInfo.textContent = hits.length + (hits.length === 500 ? '+' : '') + ' entries match';
    for (const pos of hits.slice(0, 100)) {
      const text = haystack[pos];
      const at = text.indexOf(q);
      const original = strings(E[pos], [], '').join('\n');
      const from = Math.max(0, at - 40);
      const r = el('button', 'hit');
      r.type = 'button';
      r.dataset.pos = String(pos);
      add(r, el('span', 'pos', '#' + pos + ' '), el('span', null, (from > 0 ? '…' : '') + original.slice(from, at).replace(/\s+/g, ' ')),
        el('mark', null, original.slice(at, at + q.length)), el('span', null, original.slice(at + q.length, at + q.length + 60).replace(/\s+/g, ' ')));
      r.addEventListener('click', () => goTo(pos, q));
      add(results, r);
    }
  }
  let timer = 0;
  search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(runSearch, 150); });
  search.addEventListener('keydown', ev => { if (ev.key === 'Enter') { clearTimeout(timer); runSearch(); const first = results.querySelector('.hit'); if (first) first.click(); } });

  function clearHighlights() { if (window.CSS && CSS.highlights) CSS.highlights.delete('search'); }
  function highlight(card, q) {
    if (!q || !(window.CSS && CSS.highlights && window.Highlight)) return;
    const ranges = [];
    const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const t = n.data.toLowerCase();
      for (let i = t.indexOf(q); i >= 0; i = t.indexOf(q, i + q.length)) {
        const r = new Range(); r.setStart(n, i); r.setEnd(n, i + q.length); ranges.push(r);
      }
    }
    CSS.highlights.set('search', new Highlight(...ranges));
  }
  // Shows entry `pos`: on the current branch if it is there, else on the first branch holding it.
  function goTo(pos, q) {
    let b = D.branches[String(current)];
    if (!b || !b.positions.includes(pos)) {
      const other = D.tips.find(t => D.branches[String(t.pos)] && D.branches[String(t.pos)].positions.includes(pos));
      if (!other) { status.textContent = 'Entry #' + pos + ' is on no embedded branch.'; return; }
      current = other.pos;
      b = D.branches[String(current)];
    }
    if (mode !== 'entries') mode = 'entries';
    show();
    const i = b.positions.indexOf(pos);
    list.renderUpTo(i);
    const card = list.querySelector('article[data-pos="' + pos + '"]');
    if (!card) return;
    for (const old of document.querySelectorAll('article.hit')) old.classList.remove('hit');
    card.classList.add('hit');
    const visible = () => !q || card.textContent.toLowerCase().includes(q);
    for (let round = 0; round < 3 && !visible(); round++) {
      for (const d of card.querySelectorAll('details')) { d.ensure(); d.open = true; }
    }
    if (!visible()) for (const m of card.querySelectorAll('button.more:not(.pic)')) m.click();
    card.scrollIntoView({ block: 'center' });
    highlight(card, q);
  }

  show();
  document.body.dataset.ready = '1';
})();
