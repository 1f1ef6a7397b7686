// report.html's item explorer: type in the box, and only the rows holding every word (any case) stay shown.
const search = document.getElementById("explorer-search");
if (search) search.addEventListener("input", () => {
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  for (const row of document.querySelectorAll("#explorer tbody tr")) {
    const text = row.textContent.toLowerCase();
    row.hidden = !words.every((word) => text.includes(word));
  }
});
