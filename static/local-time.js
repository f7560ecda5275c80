// Dates are rendered as <time datetime="...Z">... UTC</time> (the local_time
// filter); this shows them in the reader's own time zone, with the zone named.
// Without JavaScript the UTC text stays, which is also correct.
(function () {
  "use strict";
  var format = new Intl.DateTimeFormat(undefined, {
    weekday: "long", day: "numeric", month: "long", year: "numeric",
    hour: "2-digit", minute: "2-digit", timeZoneName: "short"
  });

  function localTimes(root) {
    root.querySelectorAll("time.local-time[datetime]:not([data-local])").forEach(function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment.getTime())) { return; }
      el.setAttribute("data-local", "");
      el.title = el.textContent;
      el.textContent = format.format(moment);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { localTimes(document); });
  document.addEventListener("htmx:afterSwap", function (event) { localTimes(event.detail.target); });
})();
