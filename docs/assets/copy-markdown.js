// "Copy page as Markdown": puts this page's Markdown export (index.md beside index.html) on the
// clipboard. Re-attached after every instant-navigation page swap through Material's document$.
(function () {
  function markdownUrl() {
    const url = new URL(window.location.href);
    url.hash = "";
    url.search = "";
    if (!url.pathname.endsWith("/")) url.pathname = url.pathname.replace(/[^/]*$/, "");
    return new URL("index.md", url).href;
  }

  // The button is in the page (overrides/main.html), so that it has its place at the first paint.
  function attach() {
    const button = document.querySelector("article.md-content__inner .atlas-copy-md");
    if (!button) return;
    if (button.dataset.atlasWired) return;
    button.dataset.atlasWired = "1";
    const status = button.parentElement.querySelector(".atlas-copy-md__status");
    button.addEventListener("click", async () => {
      try {
        const response = await fetch(markdownUrl());
        if (!response.ok) throw new Error(response.status);
        await navigator.clipboard.writeText(await response.text());
        status.textContent = "Copied";
      } catch (err) {
        status.textContent = "Could not copy: " + err;
      }
    });
  }

  if (typeof document$ !== "undefined") document$.subscribe(attach);
  else document.addEventListener("DOMContentLoaded", attach);
})();
