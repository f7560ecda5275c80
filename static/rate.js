// Progressive enhancement for the rater's pages; every page works without it.
// - the Score field gets a slider kept in sync with it (the field stays the
//   one that is submitted, and stays empty until the rater sets a value; the
//   slider shows no thumb until then, see style.css);
// - htmx swaps in a 422 response, which is the item again with its message;
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

  document.addEventListener("DOMContentLoaded", function () { setup(document); });
  document.addEventListener("htmx:afterSwap", function (event) { setup(event.detail.target); });
})();
