// The live page (docs/observe.md): polls /status.json, the JSON Lines of
// `daolease status --json` (a line a lease, the summary) and one
// {"observe": ...} line, and draws them. Nothing is fetched from elsewhere;
// every text from the ledger goes in through textContent, never as HTML.
'use strict';
(function () {
  const POLL_MS = 1000, PAGE = 50, SPAN_S = 120;
  const COLORS = { grant: '#9e9e9e', release: '#43a047', cap: '#fb8c00', policy: '#8e24aa',
                   silence: '#1e88e5' };
  const CAUSES = ['release', 'cap', 'policy', 'silence'];
  const $ = (id) => document.getElementById(id);
  const state = { offset: 0, filter: '', history: [], polls: 0, shown: new Map() };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function subjectText(v) { return typeof v === 'string' ? v : JSON.stringify(v); }
  // an event's subject comes as its JSON text (cut when long)
  function eventSubject(t) { try { return subjectText(JSON.parse(t)); } catch (e) { return t; } }
  function secs(ns) { return (ns / 1e9).toFixed(3) + ' s'; }

  // The newest renewal the judge counted, which the pass's mark confirmed:
  // its seq and how long before the judge's now (docs/observe.md, The page).
  function confirmed(l, now) {
    if (l.last_renewal === null) return 'none yet';
    return '#' + l.seq + ', ' + secs(Math.max(0, now - l.last_renewal)) + ' ago';
  }

  function parse(text) {
    const out = { leases: [], summary: null, observe: null };
    for (const line of text.split('\n')) {
      if (!line) continue;
      const v = JSON.parse(line);
      if (v.summary === true) out.summary = v;
      else if (v.observe === true) out.observe = v;
      else if (v.lease !== undefined) out.leases.push(v);
    }
    return out;
  }

  function showAlive(s, o) {
    const b = $('alive');
    if (o.alive === true) {
      b.className = 'badge alive';
      b.textContent = 'judge alive · pass ' + s.pass + ' · last pass ' + o.last_pass_age_s.toFixed(1) + ' s ago';
    } else if (o.alive === false) {
      b.className = 'badge dead';
      b.textContent = 'judge silent for ' + o.last_pass_age_s.toFixed(1) + ' s · pass ' + s.pass;
    } else {
      b.className = 'badge unknown';
      b.textContent = 'from the files · pass ' + s.pass;
    }
  }

  function showCounts(s, o) {
    const c = $('counts');
    c.replaceChildren();
    const items = [['live leases', s.live], ['granted', o.granted], ['refused', o.refused]];
    for (const k of CAUSES) items.push(['lapsed ' + k, o.lapsed[k]]);
    for (const [name, v] of items) {
      const d = el('div', 'count');
      d.appendChild(el('b', '', String(v)));
      d.appendChild(el('span', '', name));
      c.appendChild(d);
    }
  }

  function showRows(r) {
    const tb = $('rows');
    tb.replaceChildren();
    for (const l of r.leases) {
      const tr = el('tr', l.released ? 'released' : (l.remaining_ns < 1e9 ? 'soon' : ''));
      tr.dataset.lease = l.lease;
      tr.appendChild(el('td', '', String(l.lease)));
      tr.appendChild(el('td', '', subjectText(l.subject)));
      tr.appendChild(el('td', '', l.holder));
      tr.appendChild(el('td', 'num rem', l.released ? 'released' : secs(l.remaining_ns)));
      tr.appendChild(el('td', '', l.mode));
      tr.appendChild(el('td', 'num', confirmed(l, r.summary.now)));
      tb.appendChild(tr);
    }
    const o = r.observe, first = o.matched ? o.offset + 1 : 0;
    $('matched').textContent = o.matched + (o.filter ? ' matching' : '') + ' of ' + r.summary.live;
    $('page').textContent = first + '–' + (o.offset + o.listed) + ' of ' + o.matched;
    $('prev').disabled = o.offset === 0;
    $('next').disabled = o.offset + o.listed >= o.matched;
  }

  function showEvents(o) {
    const ol = $('events');
    ol.replaceChildren();
    const ev = o.events.slice(-200).reverse();
    for (const e of ev) {
      const kind = e.kind === 'grant' ? 'grant' : e.cause || 'lapse';
      const li = el('li', 'event ' + e.kind + ' ' + kind);
      li.dataset.lease = e.lease;
      // when this page first showed the event (tests measure the lag)
      const key = e.kind + ':' + e.lease;
      if (!state.shown.has(key)) state.shown.set(key, Date.now() / 1000);
      li.dataset.shownUnix = state.shown.get(key).toFixed(3);
      if (e.at_unix) li.dataset.atUnix = e.at_unix.toFixed(3);
      li.appendChild(el('span', 'chip c-' + kind, e.kind === 'grant' ? 'granted' : 'lapsed ' + kind));
      li.appendChild(document.createTextNode('lease ' + e.lease + ' · ' + eventSubject(e.subject) + ' · ' + e.holder));
      ol.appendChild(li);
    }
  }

  // The timeline: the events of the last SPAN_S seconds of judge ticks in
  // one bar a second (stacked by kind), the live count of each poll a line.
  function showTimeline(r) {
    const svg = $('timeline'), W = 960, H = 180, top = 8, base = 150;
    const now = r.summary.now, NS = 1e9;
    const bins = [];
    for (let i = 0; i < SPAN_S; i++) bins.push({ grant: 0, release: 0, cap: 0, policy: 0, silence: 0 });
    for (const e of r.observe.events) {
      const ago = (now - e.at) / NS;
      if (ago < 0 || ago >= SPAN_S) continue;
      const k = e.kind === 'grant' ? 'grant' : e.cause;
      if (k) bins[SPAN_S - 1 - Math.floor(ago)][k]++;
    }
    let max = 1;
    for (const b of bins) max = Math.max(max, b.grant + b.release + b.cap + b.policy + b.silence);
    const ns = 'http://www.w3.org/2000/svg', bw = W / SPAN_S;
    svg.replaceChildren();
    const axis = document.createElementNS(ns, 'line');
    axis.setAttribute('x1', 0); axis.setAttribute('x2', W);
    axis.setAttribute('y1', base); axis.setAttribute('y2', base);
    axis.setAttribute('stroke', '#424242');
    svg.appendChild(axis);
    bins.forEach((b, i) => {
      let y = base;
      for (const k of ['grant'].concat(CAUSES)) {
        if (!b[k]) continue;
        const h = (base - top) * b[k] / max;
        const rect = document.createElementNS(ns, 'rect');
        rect.setAttribute('x', (i * bw + 1).toFixed(1)); rect.setAttribute('width', (bw - 2).toFixed(1));
        rect.setAttribute('y', (y - h).toFixed(1)); rect.setAttribute('height', h.toFixed(1));
        rect.setAttribute('fill', COLORS[k]);
        svg.appendChild(rect);
        y -= h;
      }
    });
    state.history.push({ now: now, live: r.summary.live });
    state.history = state.history.filter((p) => now - p.now < SPAN_S * NS);
    let lmax = 1;
    for (const p of state.history) lmax = Math.max(lmax, p.live);
    const pts = state.history.map((p) => {
      const x = W - (now - p.now) / NS * bw, y = base - (base - top) * p.live / lmax;
      return x.toFixed(1) + ',' + y.toFixed(1);
    });
    if (pts.length) {
      const pl = document.createElementNS(ns, 'polyline');
      pl.setAttribute('points', pts.join(' '));
      pl.setAttribute('fill', 'none'); pl.setAttribute('stroke', '#212121'); pl.setAttribute('stroke-width', '2');
      svg.appendChild(pl);
    }
    for (let s = 0; s <= SPAN_S; s += 20) {
      const t = document.createElementNS(ns, 'text');
      t.setAttribute('x', Math.min(W - 30, Math.max(2, W - s * bw)));
      t.setAttribute('y', H - 10); t.setAttribute('font-size', '11'); t.setAttribute('fill', '#757575');
      t.textContent = s ? '-' + s + ' s' : 'now';
      svg.appendChild(t);
    }
    const lab = document.createElementNS(ns, 'text');
    lab.setAttribute('x', 4); lab.setAttribute('y', 18); lab.setAttribute('font-size', '11');
    lab.setAttribute('fill', '#757575');
    lab.textContent = 'max ' + max + ' events/s · ' + lmax + ' live';
    svg.appendChild(lab);
  }

  async function poll() {
    try {
      const q = '/status.json?limit=' + PAGE + '&offset=' + state.offset +
                (state.filter ? '&q=' + encodeURIComponent(state.filter) : '');
      const res = await fetch(q, { cache: 'no-store' });
      if (!res.ok) throw new Error(res.status + ' ' + (await res.text()));
      const r = parse(await res.text());
      if (!r.summary || !r.observe) throw new Error('not a status.json');
      if (r.observe.matched && state.offset >= r.observe.matched) { state.offset = 0; }
      showAlive(r.summary, r.observe);
      showCounts(r.summary, r.observe);
      showRows(r);
      showEvents(r.observe);
      showTimeline(r);
      state.polls++;
      document.body.dataset.polls = state.polls;
      $('foot').textContent = 'source: ' + r.observe.source + ' · polled every ' + POLL_MS / 1000 +
        ' s · ' + state.polls + ' polls · ' + (r.summary.verified ? 'verified' : 'not verified');
    } catch (err) {
      $('alive').className = 'badge dead';
      $('alive').textContent = 'no answer: ' + err.message;
    }
    setTimeout(poll, POLL_MS);
  }

  $('filter').addEventListener('input', (e) => { state.filter = e.target.value; state.offset = 0; });
  $('prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - PAGE); });
  $('next').addEventListener('click', () => { state.offset += PAGE; });
  $('span').textContent = SPAN_S;
  poll();
})();
