/* Gatehouse hosted pages: progressive enhancement only (every page works as HTML first), no framework.
 * - passkey sign-in with browser autofill (conditional mediation) on /login when the passkeys module is on;
 * - on the two-factor step, the "send me a code" button shown only for methods that send one, and a passkey as second step;
 * - adding a passkey on /account (the passkeys module's /auth/passkeys/register/*, @simplewebauthn/browser).
 * Destinations come from data-* attributes the server wrote after checking them (return_to rules). */
(function () {
  'use strict';

  function b64urlToBuf(s) {
    var str = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    var out = new Uint8Array(str.length);
    for (var i = 0; i < str.length; i++) out[i] = str.charCodeAt(i);
    return out.buffer;
  }
  function bufToB64url(buf) {
    var bytes = new Uint8Array(buf);
    var s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body || {}),
    }).then(function (r) {
      return r.json().then(
        function (j) { return { status: r.status, body: j }; },
        function () { return { status: r.status, body: {} }; }
      );
    });
  }
  function show(el, text) {
    if (!el) return;
    if (text !== undefined) el.textContent = text;
    el.hidden = false;
  }

  // ---- Passkeys ----
  function requestOptions(o) {
    var pk = { challenge: b64urlToBuf(o.challenge) };
    if (o.timeout) pk.timeout = o.timeout;
    if (o.rpId) pk.rpId = o.rpId;
    if (o.userVerification) pk.userVerification = o.userVerification;
    pk.allowCredentials = (o.allowCredentials || []).map(function (c) {
      return { type: c.type, id: b64urlToBuf(c.id), transports: c.transports };
    });
    return pk;
  }
  function credentialJson(c) {
    var r = c.response;
    return {
      id: c.id,
      rawId: bufToB64url(c.rawId),
      type: c.type,
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
      authenticatorAttachment: c.authenticatorAttachment || undefined,
      response: {
        clientDataJSON: bufToB64url(r.clientDataJSON),
        authenticatorData: bufToB64url(r.authenticatorData),
        signature: bufToB64url(r.signature),
        userHandle: r.userHandle ? bufToB64url(r.userHandle) : undefined,
      },
    };
  }
  function passkeys(box) {
    if (!window.PublicKeyCredential || !navigator.credentials) return;
    var button = box.querySelector('[data-passkey-button]');
    var errorBox = box.querySelector('[data-passkey-error]');
    var pending = null;
    function signIn(mediation) {
      if (pending) pending.abort();
      var ctl = (pending = new AbortController());
      return postJson('/auth/passkeys/login/options', {})
        .then(function (r) {
          if (!r.body || !r.body.options) throw new Error('no options');
          var req = { publicKey: requestOptions(r.body.options), signal: ctl.signal };
          if (mediation) req.mediation = mediation;
          return navigator.credentials.get(req);
        })
        .then(function (cred) {
          if (!cred) throw new Error('no credential');
          return postJson('/auth/passkeys/login/verify', { credential: credentialJson(cred) });
        })
        .then(function (r) {
          if (r.body && r.body.requires_2fa) return window.location.assign(box.getAttribute('data-two-factor'));
          if (r.status === 200 && r.body && r.body.success) return window.location.assign(box.getAttribute('data-return'));
          throw new Error('refused');
        })
        .catch(function (err) {
          if (err && err.name === 'AbortError') return;
          show(errorBox, box.getAttribute('data-error'));
        });
    }
    if (button) {
      button.hidden = false;
      button.addEventListener('click', function () { signIn(null); });
    }
    if (PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (ok) {
        if (ok) signIn('conditional');
      });
    }
  }

  // ---- Two-factor step: "send me a code" only where the chosen method sends one (the form posts itself) ----
  function twoFactor(form) {
    var send = form.querySelector('[data-send-code]');
    if (!send) return;
    function sync() {
      var m = form.querySelector('input[name="method_id"]:checked');
      var kind = m ? m.getAttribute('data-kind') : '';
      send.hidden = !(kind === 'email' || kind === 'sms');
    }
    form.addEventListener('change', sync);
    sync();
  }

  // ---- Two-factor step with a passkey: options from the page's own route, the assertion posted with the form ----
  function passkeyStep(form) {
    if (!window.PublicKeyCredential || !navigator.credentials) return;
    var button = form.querySelector('[data-passkey-step-button]');
    var errorBox = form.querySelector('[data-passkey-step-error]');
    form.hidden = false;
    button.addEventListener('click', function () {
      errorBox.hidden = true;
      button.disabled = true;
      fetch(form.getAttribute('data-start'), {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: new URLSearchParams(new FormData(form)).toString(),
      })
        .then(function (r) { return r.json(); })
        .then(function (j) {
          if (!j || !j.options) throw new Error('no options');
          return navigator.credentials.get({ publicKey: requestOptions(j.options) });
        })
        .then(function (cred) {
          if (!cred) throw new Error('no credential');
          form.querySelector('input[name="credential"]').value = JSON.stringify(credentialJson(cred));
          form.submit();
        })
        .catch(function () {
          button.disabled = false;
          show(errorBox, form.getAttribute('data-error'));
        });
    });
  }

  // ---- Adding a passkey on the account page: the passkeys module's API, with @simplewebauthn/browser ----
  function passkeyAdd(box) {
    var button = box.querySelector('[data-passkey-add-button]');
    var errorBox = box.querySelector('[data-passkey-add-error]');
    var lib = window.SimpleWebAuthnBrowser;
    if (!lib || !lib.browserSupportsWebAuthn()) return;
    box.querySelector('[data-passkey-needs-js]').hidden = true;
    button.disabled = false;
    button.addEventListener('click', function () {
      errorBox.hidden = true;
      button.disabled = true;
      var name = box.querySelector('[data-passkey-name]').value.trim();
      postJson('/auth/passkeys/register/options', {})
        .then(function (r) {
          if (!r.body || !r.body.options) throw new Error((r.body && r.body.error) || 'no options');
          return lib.startRegistration({ optionsJSON: r.body.options });
        })
        .then(function (cred) {
          return postJson('/auth/passkeys/register/verify', name ? { credential: cred, name: name } : { credential: cred });
        })
        .then(function (r) {
          if (r.status === 200 && r.body && r.body.success) return window.location.assign('/account?done=passkey_added#passkey-list');
          throw new Error((r.body && r.body.error) || 'refused');
        })
        .catch(function () {
          button.disabled = false;
          show(errorBox, box.getAttribute('data-error'));
        });
    });
  }

  /** Moments (`<time data-local>`, written in UTC by the server) in the viewer's own locale and time zone; the ISO value stays in the title. */
  function localTimes() {
    var fmt;
    try { fmt = new Intl.DateTimeFormat(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'short' }); } catch (e) { return; }
    document.querySelectorAll('time[data-local]').forEach(function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (!isNaN(d.getTime())) el.textContent = fmt.format(d);
    });
  }
  function start() {
    localTimes();
    var add = document.querySelector('[data-passkey-add]');
    // The bundle is a deferred script after this one: it is there by the window's load at the latest.
    if (add && window.SimpleWebAuthnBrowser) passkeyAdd(add);
    else if (add) window.addEventListener('load', function () { passkeyAdd(add); });
    var box = document.querySelector('[data-passkey]');
    if (box) passkeys(box);
    var tf = document.querySelector('form[data-form="second-factor"]');
    if (tf) twoFactor(tf);
    var pkStep = document.querySelector('form[data-passkey-step]');
    if (pkStep) passkeyStep(pkStep);
    var live = document.querySelector('form[data-live-search]');
    if (live) liveSearch(live);
  }

  // ---- Console: search as you type (the form works without it: a GET to the same page) ----
  // The server answers ?fragment=1 with the results table alone (escaped HTML from this origin).
  function liveSearch(form) {
    var input = form.querySelector('input[type="search"]');
    var target = document.querySelector(form.getAttribute('data-live-search'));
    if (!input || !target) return;
    var timer = null;
    var seq = 0;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var mine = ++seq;
        var q = input.value.trim();
        var url = form.getAttribute('action') + (q ? '?q=' + encodeURIComponent(q) : '');
        fetch(url + (q ? '&' : '?') + 'fragment=1', { credentials: 'same-origin', headers: { Accept: 'text/html' } })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (html === null || mine !== seq) return;
            target.innerHTML = html;
            history.replaceState(null, '', url);
          })
          .catch(function () { /* the submit button still works */ });
      }, 200);
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
