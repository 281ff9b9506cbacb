// Helpers shared by pi-session's pages (view.js, list.js); the page puts this file before its
// own script, in the same <script> element. Session text goes in with textContent only.
'use strict';
/** A new element; `text`, when given, is set as text (never parsed as markup). */
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
/** A size for people: 512 B, 1.5 KB, 12.0 MB. */
function bytes(n) {
  if (n < 1024) return n + ' B';
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return v.toFixed(1) + ' ' + units[u];
}
