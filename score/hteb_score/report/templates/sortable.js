// report.html's sortable tables: click a header to sort by it, again to reverse. Numbers numerically;
// cells without data-value (undefined) stay last either way. Array.prototype.sort is stable, so ties keep their order.
for (const button of document.querySelectorAll("table.sortable th button")) {
  button.addEventListener("click", () => {
    const th = button.parentElement, table = th.closest("table"), column = th.cellIndex;
    const direction = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    for (const other of table.tHead.rows[0].cells) other.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", direction);
    const sign = direction === "ascending" ? 1 : -1, numeric = th.dataset.type === "number";
    const key = (row) => {
      const value = row.cells[column].dataset.value;
      return value === undefined ? null : numeric ? Number(value) : value;
    };
    const rows = Array.from(table.tBodies[0].rows).sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === null || y === null) return (x === null) - (y === null);
      return sign * (numeric ? x - y : x.localeCompare(y));
    });
    table.tBodies[0].append(...rows);
  });
}
