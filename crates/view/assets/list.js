(function () {
  var token = new URLSearchParams(location.search).get('token');
  function withToken(url) { return token ? url + (url.indexOf('?') < 0 ? '?' : '&') + 'token=' + encodeURIComponent(token) : url; }
  var form = document.getElementById('start-form'), status = document.getElementById('start-status');
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    status.textContent = 'starting…';
    fetch(withToken('/api/debates'), {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ toml: form.elements.toml.value })
    }).then(function (r) {
      return r.json().then(function (b) {
        if (!r.ok) { throw new Error(b.error || r.statusText); }
        location.href = withToken('/debates/' + encodeURIComponent(b.id));
      });
    }).catch(function (e) { status.textContent = e.message; });
  });
})();
