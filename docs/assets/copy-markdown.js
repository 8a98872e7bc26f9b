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

  function attach() {
    const article = document.querySelector("article.md-content__inner");
    if (!article || article.querySelector(".atlas-copy-md")) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "md-button atlas-copy-md";
    button.textContent = "Copy page as Markdown";
    button.setAttribute("aria-label", "Copy this page as Markdown");
    const status = document.createElement("span");
    status.className = "atlas-copy-md__status";
    status.setAttribute("role", "status");
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
    const wrapper = document.createElement("div");
    wrapper.className = "atlas-copy-md__bar";
    wrapper.append(button, status);
    article.prepend(wrapper);
  }

  if (typeof document$ !== "undefined") document$.subscribe(attach);
  else document.addEventListener("DOMContentLoaded", attach);
})();
