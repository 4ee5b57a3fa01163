// The console's own script, a static file so that the Content-Security-Policy can forbid inline script.
(function () {
  'use strict';
  // <form data-confirm="question">: ask before submitting (in place of an inline onsubmit handler).
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  }, true);
  // The inventory page: a chosen file fills the document text area.
  document.addEventListener('change', function (event) {
    if (event.target.id !== 'inventory-file') {
      return;
    }
    var file = event.target.files[0];
    if (file) {
      file.text().then(function (text) { document.getElementById('inventory-yaml').value = text; });
    }
  });
})();
