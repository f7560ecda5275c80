// The page after a block of an MTurk study posts the assignment back to
// MTurk by itself; without JavaScript the participant presses the button.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.querySelector("form[data-auto-submit]");
    if (form) { form.submit(); }
  });
})();
