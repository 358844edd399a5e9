// The agentd page: sessions, a blocked one's question with its options as
// buttons, the agent's screen. It talks only to its own server (/api/*);
// every change it asks for carries the CSRF token /api/hello gave.
'use strict';

const $ = (id) => document.getElementById(id);
const order = { blocked: 0, error: 1, done: 2, working: 3, idle: 4, exited: 5 };
let csrf = '';
let allowInput = false;
let sessions = new Map();
// With agentd web --hosts the page shows several hosts: each session is
// keyed by its host and its id (two hosts may both have an "s1"), and the
// list is grouped under a header per host saying whether it is up.
let multi = false;
let hostOrder = [];
let hosts = new Map(); // name → {name, state, error, retryInMs}
let selected = ''; // the selected session's key
let selHost = '';
let selId = '';
let source = null;
let shownPrompt = ''; // the promptId whose buttons are on the page
let connected = false;
const seenSent = new Set();
// The live feed's health: the server sends a ping every keepAliveMs; a
// page that heard nothing for three of them is stale (a sleeping phone's
// feed goes quiet without an error) and its answer buttons are off.
let keepAliveMs = 10000;
let heardAt = Date.now();
let triedAt = 0;
let stale = false;
let signedOut = false;

// key names a session on the page: its id, or host and id with --hosts.
function key(host, id) { return multi ? host + '\n' + id : id; }
function skey(s) { return key(s.host, s.sessionId); }
function hostUp(name) { return !multi || (hosts.get(name) || {}).state === 'up'; }
function setHosts(list) {
  if (!multi || !list) return;
  hosts = new Map(list.map((h) => [h.name, h]));
}
// hostWords says a host's state, and why it is not up (its error is the
// host's or ssh's text: it goes in as text only).
function hostWords(h) {
  if (!h || h.state === 'up') return '';
  let w = h.error || '';
  if (h.retryInMs > 0) w += (w ? ' · ' : '') + 'next try in ' + Math.max(1, Math.round(h.retryInMs / 1000)) + ' s';
  return w;
}

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
  if (multi) {
    // A group per host, in config.toml's order, each under its header.
    for (const name of hostOrder) {
      const h = hosts.get(name) || { name, state: 'connecting' };
      const group = el('div', 'group' + (h.state === 'up' ? '' : ' off'));
      group.dataset.host = name;
      const head = el('div', 'hosthead');
      head.append(el('span', 'hostname', name), el('span', 'hoststate hs-' + h.state.replace(/ /g, '-'), h.state));
      group.append(head);
      const why = hostWords(h);
      if (why) group.append(el('div', 'hosterr', why));
      const mine = all.filter((s) => s.host === name);
      if (mine.length === 0 && h.state === 'up') group.append(el('p', 'empty hostempty', 'No sessions.'));
      for (const s of mine) group.append(card(s));
      list.append(group);
    }
    return;
  }
  if (all.length === 0) {
    list.append(el('p', 'empty', connected ? 'No sessions. Start an agent from your editor or with agentd run.' : 'Not connected to the agentd daemon.'));
    return;
  }
  for (const s of all) list.append(card(s));
}

// card is a session's button in the list.
function card(s) {
  const b = el('button', 'card st-' + s.state + (skey(s) === selected ? ' sel' : ''));
  b.type = 'button';
  b.dataset.session = s.sessionId;
  if (multi) b.dataset.host = s.host;
  const top = el('div', 'top');
  top.append(el('span', 'name', s.name || s.sessionId), el('span', 'badge b-' + s.state, stateLabel(s)));
  b.append(top, el('div', 'sub', (s.agent || '?') + ' · ' + shortPath(s.cwd)));
  if (s.state === 'blocked' && s.prompt) {
    const sub = s.prompt.subject;
    if (sub && sub.text) b.append(el('div', 'q subj', `${sub.kind}: ${sub.text}`));
    else if (s.prompt.question) b.append(el('div', 'q', s.prompt.question));
  }
  b.addEventListener('click', () => select(s.host, s.sessionId));
  return b;
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
  info.append(h, el('div', 'sub', (multi ? s.host + ' · ' : '') + s.agent + ' · ' + s.cwd + ' · ' + s.sessionId));
  if (s.message) info.append(el('div', 'sub', s.message));
  if (multi) {
    const up = hostUp(s.host);
    document.body.classList.toggle('offline', !up);
    if (!up) {
      const hi = hosts.get(s.host) || { state: 'not connected' };
      info.append(el('div', 'hostnote', 'Host ' + s.host + ' is ' + hi.state + (hostWords(hi) ? ': ' + hostWords(hi) : '') +
        '. This is what it showed last; answers are off until it is back.'));
    }
  }
  $('sendform').hidden = !(allowInput && s.state !== 'exited');
  renderPrompt(s);
  // The person is looking at it: a finished turn is seen (done → idle).
  const seenKey = skey(s) + '@' + s.since;
  if (s.state === 'done' && hostUp(s.host) && !seenSent.has(seenKey)) {
    seenSent.add(seenKey);
    post('/api/seen', withHost(s.host, { sessionId: s.sessionId })).catch((e) => notice('Could not mark it seen: ' + e.message));
  }
}

// renderPrompt draws the question and its buttons, and leaves them as
// they are while the same prompt stays: a button does not move under a
// finger because a spinner turned.
function renderPrompt(s) {
  const box = $('prompt');
  const p = s.state === 'blocked' ? s.prompt : null;
  const up = hostUp(s.host);
  // A host going down or coming back redraws the buttons (off, or on).
  const id = p ? p.promptId + (up ? '' : '|off') : '';
  if (id === shownPrompt && box.childElementCount > 0 === !!p) return;
  shownPrompt = id;
  box.replaceChildren();
  if (!p) return;
  const card = el('div', 'prompt');
  card.dataset.promptId = p.promptId;
  card.append(el('p', 'question', p.question || 'The agent is waiting on you.'));
  if (p.subject) card.append(renderSubject(p.subject));
  const opts = el('div', 'options');
  for (const o of p.options || []) {
    const b = el('button', o.kind || '', o.label);
    b.type = 'button';
    b.dataset.option = o.id;
    if (!up) b.disabled = true;
    b.addEventListener('click', () => answer(s.host, s.sessionId, p.promptId, { optionId: o.id }, card));
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
    if (!up) b.disabled = true;
    f.append(input, b);
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (input.value) answer(s.host, s.sessionId, p.promptId, { text: input.value }, card);
    });
    card.append(f);
  }
  box.append(card);
}

// renderSubject shows what the prompt approves: its kind, the command or
// path in monospace, and the rest (a diff, a long command) to expand. It
// is an agent's text: it goes in as text nodes only, never as markup.
function renderSubject(sub) {
  const box = el('div', 'subject');
  const head = el('div', 'subject-head');
  head.append(el('span', 'subject-kind', sub.kind));
  if (sub.text) head.append(el('code', 'subject-text', sub.text));
  else head.append(el('span', 'subject-unread', 'agentd could not read what this approves: look at the screen below before you answer.'));
  if (sub.truncated && sub.text) head.append(el('span', 'subject-cut', 'cut: not all of it could be read'));
  box.append(head);
  if (sub.detail && sub.detail !== sub.text) {
    const more = el('details', 'subject-detail');
    const diff = sub.kind === 'edit' || sub.kind === 'write';
    more.append(el('summary', '', diff ? 'Show the change' : 'Show all of it'));
    const pre = el('pre');
    for (const line of sub.detail.split('\n')) {
      let cls = '';
      if (diff && /^\+(?!\+\+ )/.test(line)) cls = 'add';
      else if (diff && /^-(?!-- )/.test(line)) cls = 'del';
      else if (diff && /^@@/.test(line)) cls = 'hunk';
      pre.append(el('span', cls, line + '\n'));
    }
    more.append(pre);
    box.append(more);
  }
  return box;
}

// answer sends the promptId the buttons were drawn for: if the agent has
// moved on, the daemon refuses and nothing is typed.
// With --hosts it goes to the host it was shown for, and no other.
async function answer(host, sessionId, promptId, choice, card) {
  if (stale || !hostUp(host)) return; // the buttons are off while the page may show an old prompt
  const buttons = card.querySelectorAll('button');
  buttons.forEach((b) => { b.disabled = true; });
  notice('');
  try {
    const res = await post('/api/answer', withHost(host, { sessionId, promptId, ...choice }));
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

// withHost adds the host to a request's body with --hosts.
function withHost(host, body) { return multi ? { host, ...body } : body; }

async function refresh() {
  try {
    const r = await fetch('/api/sessions', { credentials: 'same-origin' });
    if (!r.ok) return;
    const d = await r.json();
    setHosts(d.hosts);
    sessions = new Map(d.sessions.map((s) => [skey(s), s]));
    renderList();
    renderInfo();
  } catch (_) { /* the live feed will catch up */ }
}

function renderScreen(f) {
  if (f.sessionId !== selId || (multi && f.host !== selHost)) return;
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

function select(host, id) {
  selHost = id ? host || '' : '';
  selId = id || '';
  selected = id ? key(selHost, id) : '';
  shownPrompt = '';
  $('prompt').replaceChildren();
  notice('');
  $('screen').replaceChildren();
  document.body.classList.toggle('open', !!id);
  $('back').hidden = !id;
  if (id) history.replaceState(null, '', '#' + encodeURIComponent(multi ? selHost + ':' + id : id));
  else history.replaceState(null, '', '/');
  renderList();
  renderInfo();
  connect();
}

function setConn(up, err) {
  connected = up;
  // A screen that is not live any more is shown as such.
  document.body.classList.toggle('offline', !up);
  renderConn(err);
}

function renderConn(err) {
  const c = $('conn');
  if (signedOut) {
    c.className = 'conn down';
    c.textContent = 'signed out';
  } else if (stale) {
    c.className = 'conn stale';
    c.textContent = 'stale';
  } else {
    c.className = 'conn ' + (connected ? 'up' : 'down');
    c.textContent = connected ? 'live' : (err ? 'daemon not connected' : 'reconnecting…');
  }
  c.title = err || '';
}

// setStale turns the answer buttons off (or on again) and says why.
function setStale(on, why) {
  stale = on;
  document.body.classList.toggle('stale', on);
  document.querySelectorAll('#prompt button').forEach((b) => { b.disabled = on || !hostUp(selHost); });
  const banner = $('banner');
  banner.textContent = on ? why : '';
  banner.hidden = !on;
  renderConn();
}

// heard: something came on the feed, so what the page shows is current.
function heard() {
  heardAt = Date.now();
  if (stale && !signedOut) setStale(false);
}

// watchdog: silence for three keep-alives marks the page stale; while
// stale it opens the feed again once per keep-alive.
function watchdog() {
  if (signedOut || !source) return;
  const quiet = Date.now() - heardAt;
  if (!stale && quiet > 3 * keepAliveMs) {
    setStale(true, 'No news from agentd web for ' + Math.round(quiet / 1000) + ' s, so what this page shows may be old. ' +
      'The answer buttons are off until it is live again. Reconnecting…');
  }
  if (stale && Date.now() - triedAt >= keepAliveMs) connect();
}

function connect() {
  if (signedOut) return;
  if (source) source.close();
  triedAt = Date.now();
  const url = '/api/events' + (selId ? '?watch=' + encodeURIComponent(selId) + (multi ? '&host=' + encodeURIComponent(selHost) : '') : '');
  source = new EventSource(url);
  source.addEventListener('sessions', (ev) => {
    heard();
    const d = JSON.parse(ev.data);
    setHosts(d.hosts);
    sessions = new Map(d.sessions.map((s) => [skey(s), s]));
    setConn(d.connected, d.error);
    renderList();
    renderInfo();
  });
  source.addEventListener('update', (ev) => {
    heard();
    const d = JSON.parse(ev.data);
    for (const s of d.sessions) sessions.set(skey(s), s);
    renderList();
    if (d.sessions.some((s) => skey(s) === selected)) renderInfo();
  });
  source.addEventListener('screen', (ev) => { heard(); renderScreen(JSON.parse(ev.data)); });
  source.addEventListener('screen-error', (ev) => {
    heard();
    const d = JSON.parse(ev.data);
    if (d.sessionId === selId && (!multi || d.host === selHost)) $('screen').replaceChildren(el('span', 'screennote', 'No screen: ' + d.error));
  });
  source.addEventListener('ping', heard);
  // The token was rotated or the sign-in expired: reconnecting would only
  // meet 401s, so the page stops and says what to do.
  source.addEventListener('signed-out', (ev) => {
    const d = JSON.parse(ev.data);
    signedOut = true;
    source.close();
    setStale(true, 'Signed out: ' + d.error + '.');
  });
  source.onerror = () => {
    setConn(false, '');
    if (!stale && !signedOut) setStale(true, 'Lost the connection to agentd web. The answer buttons are off until the page is live again. Reconnecting…');
  };
}

// linkDevice shows a one-time link, and its QR code, for another device.
async function linkDevice() {
  try {
    const d = await post('/api/link', {});
    drawQR($('linkqr'), d.qr);
    $('linktext').textContent = d.link;
    $('linkmins').textContent = String(Math.round(d.expiresInSeconds / 60));
    $('linkdlg').showModal();
  } catch (e) {
    notice('Could not make a link: ' + e.message);
  }
}

function drawQR(canvas, rows) {
  const n = rows.length;
  const px = Math.max(2, Math.floor(232 / n));
  canvas.width = canvas.height = n * px;
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, n * px, n * px);
  g.fillStyle = '#000';
  rows.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) if (row[x] === '1') g.fillRect(x * px, y * px, px, px);
  });
}

async function start() {
  const r = await fetch('/api/hello', { credentials: 'same-origin' });
  if (!r.ok) { location.href = '/'; return; }
  const h = await r.json();
  csrf = h.csrf;
  allowInput = h.allowInput;
  if (h.keepAliveMs > 0) keepAliveMs = h.keepAliveMs;
  if (Array.isArray(h.hosts)) {
    multi = true;
    hostOrder = h.hosts;
    document.body.classList.add('multi');
  }
  setInterval(watchdog, 1000);
  $('back').addEventListener('click', () => select('', ''));
  $('linkbtn').addEventListener('click', linkDevice);
  $('linkclose').addEventListener('click', () => $('linkdlg').close());
  $('sendform').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = $('sendtext');
    if (!input.value || !selId) return;
    try {
      await post('/api/send', withHost(selHost, { sessionId: selId, text: input.value, submit: true }));
      input.value = '';
      notice('Sent.', true);
    } catch (e) {
      notice('Not sent: ' + e.message);
    }
  });
  const want = decodeURIComponent(location.hash.slice(1));
  if (want && multi && want.includes(':')) select(want.slice(0, want.indexOf(':')), want.slice(want.indexOf(':') + 1));
  else if (want) select('', want);
  else { renderInfo(); connect(); }
}

start();
