(function () {
  var id = document.body.dataset.debate, last = Number(document.body.dataset.last);
  var names = JSON.parse(document.body.dataset.names || '{}');
  var token = new URLSearchParams(location.search).get('token');
  function withToken(url) { return token ? url + (url.indexOf('?') < 0 ? '?' : '&') + 'token=' + encodeURIComponent(token) : url; }
  var transcript = document.getElementById('transcript'), live = document.getElementById('live');
  var status = document.getElementById('status'), timer = null;
  function panels() {
    clearTimeout(timer);
    timer = setTimeout(function () {
      fetch(withToken('/debates/' + encodeURIComponent(id) + '/panels')).then(function (r) { return r.text(); })
        .then(function (html) { document.getElementById('panels').innerHTML = html; });
    }, 500);
  }
  function add(m) {
    var div = document.createElement('div'); div.className = 'msg';
    var who = document.createElement('span'); who.className = 'who'; who.textContent = m.persona_name || m.persona;
    var kind = document.createElement('span'); kind.className = 'kind'; kind.textContent = ' ' + m.kind_label + ' · round ' + m.round;
    // The server's rendering of the text (Markdown, escaped and stripped
    // of anything that runs or loads), as a reloaded page shows it.
    var text = document.createElement('div'); text.className = 'md';
    if (typeof m.html === 'string') { text.innerHTML = m.html; } else { text.textContent = m.content; }
    div.appendChild(who); div.appendChild(kind); div.appendChild(text); transcript.appendChild(div);
  }
  function note(n) {
    var div = document.createElement('div'); div.className = 'note';
    var who = document.createElement('span'); who.className = 'who'; who.textContent = 'Moderator' + (n.author ? ' (' + n.author + ')' : '') + ': ';
    var text = document.createElement('span'); text.textContent = n.text;
    div.appendChild(who); div.appendChild(text); transcript.appendChild(div);
  }
  var steerStatus = document.getElementById('steer-status');
  function post(path, body) {
    return fetch(withToken('/api/debates/' + encodeURIComponent(id) + path), {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body || {})
    }).then(function (r) {
      return r.json().then(function (b) { if (!r.ok) { throw new Error(b.error || r.statusText); } return b; });
    });
  }
  function said(text) { return function () { steerStatus.textContent = text; }; }
  function failed(e) { steerStatus.textContent = e.message; }
  var noteForm = document.getElementById('note-form');
  noteForm.addEventListener('submit', function (e) {
    e.preventDefault();
    var author = noteForm.elements.author.value.trim();
    post('/notes', { text: noteForm.elements.text.value, author: author || null })
      .then(function () { noteForm.elements.text.value = ''; steerStatus.textContent = 'note queued: every agent sees it from its next turn'; })
      .catch(failed);
  });
  function by() { var a = noteForm.elements.author.value.trim(); return a ? { by: a } : {}; }
  document.getElementById('pause').addEventListener('click', function () { post('/pause', by()).then(said('pause requested: the debate holds before its next turn')).catch(failed); });
  document.getElementById('resume').addEventListener('click', function () {
    post('/resume', by()).then(function (b) {
      // A stopped debate runs again: follow it from a fresh page.
      if (b.restarted || b.how === 'queued') { location.reload(); } else { steerStatus.textContent = 'resume requested'; }
    }).catch(failed);
  });
  document.getElementById('stop').addEventListener('click', function () { post('/stop').then(said('stopping after the current turn')).catch(failed); });
  var overrideForm = document.getElementById('override-form');
  overrideForm.addEventListener('submit', function (e) {
    e.preventDefault();
    var agent = overrideForm.elements.agent.value.trim();
    post('/override', { decision: overrideForm.elements.decision.value, agent: agent || null })
      .then(function (b) { document.getElementById('override-status').textContent = 'recorded in the trust memory of ' + b.agents.join(', '); })
      .catch(function (e) { document.getElementById('override-status').textContent = e.message; });
  });
  function rate(rating) {
    post('/feedback', { rating: rating })
      .then(function () { document.getElementById('rate-status').textContent = 'rated ' + rating; })
      .catch(function (e) { document.getElementById('rate-status').textContent = e.message; });
  }
  document.getElementById('fork').addEventListener('click', function () {
    post('/fork', {}).then(function (b) {
      // The fork waits for a resume: open its page to note and run it.
      location.href = withToken('/debates/' + encodeURIComponent(b.id));
    }).catch(function (e) { document.getElementById('fork-status').textContent = e.message; });
  });
  document.getElementById('rate-up').addEventListener('click', function () { rate('up'); });
  document.getElementById('rate-down').addEventListener('click', function () { rate('down'); });
  var source = new EventSource(withToken('/api/debates/' + encodeURIComponent(id) + '/events?after=' + last));
  source.addEventListener('event', function (e) {
    var event = JSON.parse(e.data);
    if (event.type === 'note_added') { note(event); }
    if (event.type === 'debate_paused') { status.textContent = 'paused'; }
    if (event.type === 'debate_resumed') { status.textContent = 'running'; }
    if (event.type === 'message_appended') {
      live.textContent = '';
      var m = event.message;
      add({ persona: m.persona, persona_name: names[m.persona], content: m.content, html: event.html,
            round: m.round, kind_label: typeof m.kind === 'string' ? m.kind : Object.keys(m.kind)[0] });
    }
    panels();
  });
  source.addEventListener('token', function (e) {
    var t = JSON.parse(e.data);
    if (live.dataset.turn !== t.turn) { live.dataset.turn = t.turn; live.textContent = (names[t.persona] || t.persona) + ': '; }
    live.textContent += t.delta;
  });
  // Clarifying questions the debate waits on: a form, posted as JSON.
  var section = document.getElementById('questions'), form = document.getElementById('answer-form');
  function questions() {
    fetch(withToken('/api/debates/' + encodeURIComponent(id) + '/questions'))
      .then(function (r) { return r.json(); })
      .then(function (q) {
        form.textContent = '';
        if (!q.questions || !q.questions.length) { section.hidden = true; return; }
        q.questions.forEach(function (question, i) {
          var label = document.createElement('label'); label.textContent = question.agent_name + ': ' + question.text;
          var answer = document.createElement('textarea'); answer.name = 'a' + i; answer.rows = 2; answer.style.width = '100%';
          form.appendChild(label); form.appendChild(answer);
        });
        var send = document.createElement('button'); send.type = 'submit'; send.textContent = 'Send the answers (blank: NA)';
        form.appendChild(send);
        section.hidden = false;
        status.textContent = 'waiting for answers to clarifying questions';
      });
  }
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    var answers = Array.prototype.map.call(form.querySelectorAll('textarea'), function (t) { return t.value; });
    fetch(withToken('/api/debates/' + encodeURIComponent(id) + '/answers'), {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answers: answers })
    }).then(function (r) {
      if (r.ok) { section.hidden = true; status.textContent = 'running'; }
      else { r.json().then(function (b) { status.textContent = b.error; }); }
    });
  });
  questions();
  source.addEventListener('questions', questions);
  source.addEventListener('end', function (e) {
    var end = JSON.parse(e.data).status;
    status.textContent = end; live.textContent = ''; source.close(); panels();
    document.getElementById('steer').hidden = end === 'finished';
    document.getElementById('override').hidden = end !== 'finished';
  });
})();
