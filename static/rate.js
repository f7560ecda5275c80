// Progressive enhancement for the rater's pages; every page works without it.
// - a refused score is selected when its field takes the focus (typing replaces
//   it), and its field and message are scrolled into view;
// - the Score field gets a slider kept in sync with it (the field stays the
//   one that is submitted, and stays empty until the rater sets a value; the
//   slider shows no thumb until then, see style.css);
// - htmx swaps in a 422 response, which is the item again with its message;
// - after each swap the new item is announced ("Item 4 of 15", in the live
//   region of item.html), the page title names it, and the page is scrolled
//   so that the item and the Score field are in view together;
// - on a rubric study's item (one field per criterion) Enter in a field moves
//   to the next criterion's field, and Enter in the last submits the item.
(function () {
  "use strict";

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 422) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  function decimals(step) {
    var text = String(step);
    var dot = text.indexOf(".");
    return dot < 0 ? 0 : text.length - dot - 1;
  }

  function parse(text) {
    text = String(text).trim().replace(",", ".");
    return /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(text) ? Number(text) : NaN;
  }

  function fieldToSlider(field, slider) {
    var value = parse(field.value);
    if (!isNaN(value) && value >= Number(slider.min) && value <= Number(slider.max)) {
      slider.value = String(value);
      slider.classList.remove("untouched");
    }
  }

  function sliderToField(slider, field) {
    // Rounded to the step's decimals: range inputs can report 0.30000000000000004.
    var value = Number(slider.value).toFixed(decimals(slider.step));
    field.value = String(Number(value));
    slider.classList.remove("untouched");
  }

  function setup(root) {
    var field = root.querySelector("#score");
    var slider = root.querySelector("#score-slider");
    if (!field || !slider) { return; }
    slider.closest(".slider").hidden = false;
    fieldToSlider(field, slider);
    // Focus: the field has autofocus, which the browser honours on a page
    // load and htmx after settling a swap.
  }

  document.addEventListener("input", function (event) {
    var field = document.getElementById("score");
    var slider = document.getElementById("score-slider");
    if (!field || !slider) { return; }
    if (event.target === slider) {
      sliderToField(slider, field);
    } else if (event.target === field) {
      fieldToSlider(field, slider);
    }
  });

  // The field that takes the focus: the Score field, or on a rubric item the
  // first criterion's field (the first refused one after a refusal, which the
  // template marks with autofocus).
  function scoreField() {
    return document.getElementById("score") ||
      document.querySelector(".rubric-form [autofocus]");
  }

  document.addEventListener("keydown", function (event) {
    var field = event.target;
    if (event.key !== "Enter" || event.isComposing || event.shiftKey || event.altKey ||
        event.ctrlKey || event.metaKey || !field.classList ||
        !field.classList.contains("criterion-score")) { return; }
    var fields = Array.prototype.slice.call(field.form.querySelectorAll(".criterion-score"));
    var next = fields[fields.indexOf(field) + 1];
    // The last field: Enter submits the form, as in any form.
    if (!next) { return; }
    event.preventDefault();
    next.focus();
    next.select();
  });

  function top(element) {
    return element.getBoundingClientRect().top + window.scrollY;
  }

  function bottom(element) {
    return element.getBoundingClientRect().bottom + window.scrollY;
  }

  // Scroll as little as needed for the Score field (and, where they fit, the
  // slider and the Next button) to be in view, never past the top of the
  // item's text: on a phone the text and the field then share the screen.
  // An item too long for that shows from its first line.
  function placeItem() {
    var text = document.querySelector(".item-text");
    var field = scoreField();
    var form = field && field.form;
    if (!text || !field) { return; }
    var margin = 8;
    var view = window.innerHeight;
    var textTop = top(text) - margin;
    var target = Math.max(0, bottom(form.querySelector(".actions") || field) + margin - view);
    if (target > textTop) { target = Math.max(0, bottom(field) + margin - view); }
    if (target > textTop) { target = textTop; }
    window.scrollTo(0, target);
  }

  var announced = null;

  function announce(root) {
    var head = root.querySelector(".rating-head");
    var announcer = document.getElementById("item-announcer");
    if (!head) { return; }
    if (head.dataset.title) { document.title = head.dataset.title; }
    // A refused score swaps in the same item: its alert speaks, not this.
    if (announcer && head.dataset.announce && head.dataset.announce !== announced) {
      announced = head.dataset.announce;
      announcer.textContent = announced;
    }
  }

  function refused(field) {
    return field && field.getAttribute("aria-invalid") === "true";
  }

  function isScoreField(field) {
    return field && (field.id === "score" ||
      (field.classList && field.classList.contains("criterion-score")));
  }

  // A refused value is selected when its field takes the focus: typing replaces it
  // (a refused "9" and a typed "2" make "2", not "92").
  function selectRefused(field) {
    if (refused(field) && document.activeElement === field) { field.select(); }
  }

  document.addEventListener("focusin", function (event) { selectRefused(event.target); });

  // The browser refused the value itself (min, max, step): it focuses the field
  // with the caret at the end; select the value instead.
  document.addEventListener("invalid", function (event) {
    var field = event.target;
    if (!isScoreField(field)) { return; }
    window.setTimeout(function () {
      if (document.activeElement === field) { field.select(); }
    }, 0);
  }, true);

  // A refused score: its message and its field in view, scrolling as little as
  // needed (a rubric's last criterion is often below the fold), past the item's
  // text if it must.
  function placeRefused(field) {
    var message = document.getElementById(field.id + "-error") ||
      document.getElementById("score-error");
    var first = message && top(message) < top(field) ? message : field;
    var margin = 8;
    var lowest = bottom(field) + margin - window.innerHeight;
    var highest = top(first) - margin;
    var target = Math.min(Math.max(window.scrollY, lowest), highest);
    window.scrollTo(0, Math.max(0, target));
  }

  function focusField() {
    var field = scoreField();
    if (field) {
      field.focus({preventScroll: true});
      selectRefused(field);
    }
  }

  function place() {
    var field = scoreField();
    if (refused(field)) { placeRefused(field); } else { placeItem(); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    setup(document);
    var head = document.querySelector(".rating-head");
    // The page's own title and heading say where the rater is on a full load.
    if (head) { announced = head.dataset.announce || null; }
    // Focused here, before the browser's autofocus would scroll the field to
    // the middle of the screen and the item out of it.
    focusField();
    place();
  });
  document.addEventListener("htmx:afterSwap", function (event) { setup(event.detail.target); });
  // htmx has focused the [autofocus] field by now (scrolling it into view as
  // the browser pleased); place the page and say what arrived.
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!event.detail.target.querySelector(".rating-head")) { return; }
    focusField();
    place();
    announce(event.detail.target);
  });
})();
