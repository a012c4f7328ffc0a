/* The course site's own script (workbench book build).

   In the syllabus table, an inline formula wider than its cell is put on a line of its own, where it scrolls
   sideways, instead of running past the cell: MathJax 2.7 breaks long display maths but never inline maths.
   Formulas that fit keep their place in the line (a scrolling box would lose their baseline).  Once done, the
   page's <html> element gets data-workbench-math="fitted" (the browser tests wait for it). */
(function () {
  "use strict";

  function fit() {
    document.querySelectorAll("table.workbench-syllabus td .MathJax").forEach(function (math) {
      var cell = math.closest("td");
      var style = window.getComputedStyle(cell);
      var room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      // MathJax clips a formula it could not break to the width it was given (its span.math hides the rest).
      var inner = math.querySelector("span.math") || math;
      if (Math.max(math.getBoundingClientRect().width, inner.scrollWidth) > room + 1) {
        math.classList.add("workbench-wide-math");
      }
    });
    document.documentElement.dataset.workbenchMath = "fitted";
  }

  function hook() {
    if (!(window.MathJax && window.MathJax.Hub && window.MathJax.Hub.Register)) {
      return false;
    }
    // "End" is signalled once MathJax has typeset the page; a hook registered later still hears it.
    window.MathJax.Hub.Register.StartupHook("End", fit);
    return true;
  }

  function start() {
    if (!document.querySelector("table.workbench-syllabus") || hook()) {
      return;
    }
    var tries = 0;
    var timer = window.setInterval(function () {
      tries += 1;
      if (hook() || tries > 600) {
        window.clearInterval(timer);
      }
    }, 100);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
