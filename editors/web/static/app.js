// The agentd page: sessions, a blocked one's question with its options as
// buttons, the agent's screen. It talks only to its own server (/api/*);
// every change it asks for carries the CSRF token /api/hello gave.
'use strict';

const $ = (id) => document.getElementById(id);
const order = { blocked: 0, error: 1, done: 2, working: 3, idle: 4, exited: 5 };
let csrf = '';
let allowInput = false;
let sessions = new Map();
let selected = '';
let source = null;
let shownPrompt = ''; // the promptId whose buttons are on the page
let connected = false;
const seenSent = new Set();

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function shortPath(p) {
  if (!p) return '';
  const parts = p.split('/').filter(Boolean);
  return parts.length > 2 ? '…/' + parts.slice(-2).join('/') : p;
}

function stateLabel(s) {
  return s.state === 'done' && s.outcome && s.outcome !== 'completed' ? 'done · ' + s.outcome : s.state;
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  let data = null;
  try { data = await r.json(); } catch (_) { /* an empty body */ }
  if (!r.ok) {
    const e = new Error((data && data.error) || r.status + ' ' + r.statusText);
    e.code = data && data.code;
    e.prompt = data && data.prompt;
    e.status = r.status;
    throw e;
  }
  return data;
}

function notice(text, ok) {
  const n = $('notice');
  n.textContent = text;
  n.className = ok ? 'ok' : '';
  n.hidden = !text;
}

function renderList() {
  const list = $('list');
  list.replaceChildren();
  const all = [...sessions.values()].sort((a, b) =>
    (order[a.state] ?? 9) - (order[b.state] ?? 9) || (a.since < b.since ? 1 : -1));
  if (all.length === 0) {
    list.append(el('p', 'empty', connected ? 'No sessions. Start an agent from your editor or with agentd run.' : 'Not connected to the agentd daemon.'));
    return;
  }
  for (const s of all) {
    const b = el('button', 'card st-' + s.state + (s.sessionId === selected ? ' sel' : ''));
    b.type = 'button';
    b.dataset.session = s.sessionId;
    const top = el('div', 'top');
    top.append(el('span', 'name', s.name || s.sessionId), el('span', 'badge b-' + s.state, stateLabel(s)));
    b.append(top, el('div', 'sub', (s.agent || '?') + ' · ' + shortPath(s.cwd)));
    if (s.state === 'blocked' && s.prompt && s.prompt.question) b.append(el('div', 'q', s.prompt.question));
    b.addEventListener('click', () => select(s.sessionId));
    list.append(b);
  }
}

function renderInfo() {
  const info = $('info');
  info.replaceChildren();
  const s = sessions.get(selected);
  if (!s) {
    info.append(el('p', 'empty', selected ? 'This session is gone.' : 'Pick a session.'));
    $('prompt').replaceChildren();
    shownPrompt = '';
    $('sendform').hidden = true;
    return;
  }
  const h = el('h2');
  h.append(el('span', '', s.name || s.sessionId), el('span', 'badge b-' + s.state, stateLabel(s)));
  info.append(h, el('div', 'sub', s.agent + ' · ' + s.cwd + ' · ' + s.sessionId));
  if (s.message) info.append(el('div', 'sub', s.message));
  $('sendform').hidden = !(allowInput && s.state !== 'exited');
  renderPrompt(s);
  // The person is looking at it: a finished turn is seen (done → idle).
  const key = s.sessionId + '@' + s.since;
  if (s.state === 'done' && !seenSent.has(key)) {
    seenSent.add(key);
    post('/api/seen', { sessionId: s.sessionId }).catch((e) => notice('Could not mark it seen: ' + e.message));
  }
}

// renderPrompt draws the question and its buttons, and leaves them as
// they are while the same prompt stays: a button does not move under a
// finger because a spinner turned.
function renderPrompt(s) {
  const box = $('prompt');
  const p = s.state === 'blocked' ? s.prompt : null;
  const id = p ? p.promptId : '';
  if (id === shownPrompt && box.childElementCount > 0 === !!p) return;
  shownPrompt = id;
  box.replaceChildren();
  if (!p) return;
  const card = el('div', 'prompt');
  card.dataset.promptId = p.promptId;
  card.append(el('p', 'question', p.question || 'The agent is waiting on you.'));
  if (p.tool && (p.tool.input || p.tool.title)) card.append(el('p', 'tool', p.tool.input || p.tool.title));
  const opts = el('div', 'options');
  for (const o of p.options || []) {
    const b = el('button', o.kind || '', o.label);
    b.type = 'button';
    b.dataset.option = o.id;
    b.addEventListener('click', () => answer(s.sessionId, p.promptId, { optionId: o.id }, card));
    opts.append(b);
  }
  card.append(opts);
  if (p.freeform || !(p.options || []).length) {
    const f = el('form', 'freeform');
    const input = el('input');
    input.type = 'text';
    input.placeholder = 'Your answer…';
    input.maxLength = 4000;
    const b = el('button', '', 'Answer');
    b.type = 'submit';
    f.append(input, b);
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (input.value) answer(s.sessionId, p.promptId, { text: input.value }, card);
    });
    card.append(f);
  }
  box.append(card);
}

// answer sends the promptId the buttons were drawn for: if the agent has
// moved on, the daemon refuses and nothing is typed.
async function answer(sessionId, promptId, choice, card) {
  const buttons = card.querySelectorAll('button');
  buttons.forEach((b) => { b.disabled = true; });
  notice('');
  try {
    const res = await post('/api/answer', { sessionId, promptId, ...choice });
    notice('Answered. The agent is now ' + res.state + '.', true);
    // The same question still up (the keys did not take): let the person try again.
    if (res.state === 'blocked' && res.prompt && res.prompt.promptId === promptId) buttons.forEach((b) => { b.disabled = false; });
  } catch (e) {
    const why = e.code === -32021 || e.code === -32025
      ? 'Not answered: this question is no longer the one on screen (answered elsewhere or changed). Nothing was typed.'
      : 'Not answered: ' + e.message;
    notice(why + (e.code ? ' [' + e.code + ': ' + e.message + ']' : ''));
    buttons.forEach((b) => { b.disabled = false; });
    // This page missed what changed: show the sessions as they are now,
    // and open its live feed again in case that is what failed.
    if (e.code === -32021 || e.code === -32025) { refresh(); connect(); }
  }
}

async function refresh() {
  try {
    const r = await fetch('/api/sessions', { credentials: 'same-origin' });
    if (!r.ok) return;
    const d = await r.json();
    sessions = new Map(d.sessions.map((s) => [s.sessionId, s]));
    renderList();
    renderInfo();
  } catch (_) { /* the live feed will catch up */ }
}

function renderScreen(f) {
  if (f.sessionId !== selected) return;
  const pre = $('screen');
  const frag = document.createDocumentFragment();
  f.lines.forEach((line, y) => {
    let col = 0;
    for (const r of line || []) {
      const span = el('span', '', r.t);
      const cls = [];
      if (r.a & 4) cls.push('bo');
      if (r.a & 16) cls.push('it');
      if (r.a & 2) cls.push('un');
      if (cls.length) span.className = cls.join(' ');
      if (r.f) span.style.color = r.f;
      if (r.b) span.style.backgroundColor = r.b;
      if (f.cursor && y === f.cursorRow && f.cursorCol >= col && f.cursorCol < col + r.t.length) span.classList.add('cur');
      col += r.t.length;
      frag.append(span);
    }
    frag.append('\n');
  });
  pre.replaceChildren(frag);
}

function select(id) {
  selected = id;
  shownPrompt = '';
  $('prompt').replaceChildren();
  notice('');
  $('screen').replaceChildren();
  document.body.classList.toggle('open', !!id);
  $('back').hidden = !id;
  if (id) history.replaceState(null, '', '#' + encodeURIComponent(id));
  else history.replaceState(null, '', '/');
  renderList();
  renderInfo();
  connect();
}

function setConn(up, err) {
  connected = up;
  // A screen that is not live any more is shown as such.
  document.body.classList.toggle('offline', !up);
  const c = $('conn');
  c.className = 'conn ' + (up ? 'up' : 'down');
  c.textContent = up ? 'live' : (err ? 'daemon not connected' : 'reconnecting…');
  c.title = err || '';
}

function connect() {
  if (source) source.close();
  const url = '/api/events' + (selected ? '?watch=' + encodeURIComponent(selected) : '');
  source = new EventSource(url);
  source.addEventListener('sessions', (ev) => {
    const d = JSON.parse(ev.data);
    sessions = new Map(d.sessions.map((s) => [s.sessionId, s]));
    setConn(d.connected, d.error);
    renderList();
    renderInfo();
  });
  source.addEventListener('update', (ev) => {
    const d = JSON.parse(ev.data);
    for (const s of d.sessions) sessions.set(s.sessionId, s);
    renderList();
    if (d.sessions.some((s) => s.sessionId === selected)) renderInfo();
  });
  source.addEventListener('screen', (ev) => renderScreen(JSON.parse(ev.data)));
  source.addEventListener('screen-error', (ev) => {
    const d = JSON.parse(ev.data);
    if (d.sessionId === selected) $('screen').replaceChildren(el('span', 'screennote', 'No screen: ' + d.error));
  });
  source.onerror = () => setConn(false, '');
}

async function start() {
  const r = await fetch('/api/hello', { credentials: 'same-origin' });
  if (!r.ok) { location.href = '/'; return; }
  const h = await r.json();
  csrf = h.csrf;
  allowInput = h.allowInput;
  $('back').addEventListener('click', () => select(''));
  $('sendform').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = $('sendtext');
    if (!input.value || !selected) return;
    try {
      await post('/api/send', { sessionId: selected, text: input.value, submit: true });
      input.value = '';
      notice('Sent.', true);
    } catch (e) {
      notice('Not sent: ' + e.message);
    }
  });
  const want = decodeURIComponent(location.hash.slice(1));
  if (want) select(want); else { renderInfo(); connect(); }
}

start();
