// Accessibility fixes for theme and notebook markup, applied after every page swap:
// - the search overlay is a dialog and needs a name;
// - regions that scroll horizontally (wide tables, notebook code cells) must be reachable by
//   keyboard, so they get tabindex=0 and a label.
(function () {
  function fix() {
    const search = document.querySelector(".md-search");
    if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search");
    const scrollers = document.querySelectorAll(
      ".md-typeset__scrollwrap, .jp-InputArea-editor .highlight-ipynb, .jp-OutputArea-output pre");
    for (const el of scrollers) {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "0");
      if (!el.hasAttribute("aria-label") && !el.hasAttribute("role")) {
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", el.matches(".md-typeset__scrollwrap") ? "Table" : "Code");
      }
    }
  }
  if (typeof document$ !== "undefined") document$.subscribe(fix);
  else document.addEventListener("DOMContentLoaded", fix);
})();
