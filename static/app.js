// Progressive enhancement only: every page works without this file.
// htmx requests carry the CSRF token from the <meta> tag.
document.addEventListener("htmx:configRequest", function (event) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) { event.detail.headers["X-CSRFToken"] = meta.content; }
});
