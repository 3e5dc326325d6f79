/**
 * report.html's script, inlined: sorts, filters and pages the diff table held in the page's
 * `#diff-data` JSON block. Cells are filled with `textContent` only, never as markup, so no value
 * can become HTML. Plain ES2017 for any browser a reviewer may open the file in.
 */
export const REPORT_JS = String.raw`(function () {
  "use strict";
  var source = document.getElementById("diff-data");
  if (!source) return;
  var data = JSON.parse(source.textContent || "{}");
  var cols = data.columns || [];
  var rows = data.rows || [];
  var PAGE = 500;
  var col = function (key) { for (var i = 0; i < cols.length; i++) if (cols[i].key === key) return i; return -1; };
  var FINDING = col("finding");
  var OUTCOME = col("outcome");
  var key = function (v) { return v == null || v === "" ? "(none)" : String(v); };
  // An outcome without an action is the finding's detail ("duplicate_id: id appears on 2 rows"):
  // the filter offers its kind, the part before ": ".
  var kind = function (v) { v = key(v); var i = v.indexOf(": "); return i > 0 ? v.slice(0, i) : v; };
  var hay = rows.map(function (r) { return r.join("\u0001").toLowerCase(); });
  var state = { sort: -1, dir: 1, finding: "", outcome: "", text: "", page: 0 };
  var table = document.getElementById("diff");
  var tbody = table.tBodies[0];
  var status = document.getElementById("diff-status");
  var prev = document.getElementById("page-prev");
  var next = document.getElementById("page-next");

  function fillSelect(id, index, by) {
    var select = document.getElementById(id);
    var counts = {};
    rows.forEach(function (r) { var v = by(r[index]); counts[v] = (counts[v] || 0) + 1; });
    Object.keys(counts).sort().forEach(function (v) {
      var o = document.createElement("option");
      o.value = v;
      o.textContent = v + " (" + counts[v] + ")";
      select.appendChild(o);
    });
    select.addEventListener("change", function () { state[id === "filter-finding" ? "finding" : "outcome"] = select.value; state.page = 0; render(); });
    return select;
  }

  function matching() {
    var out = [];
    var text = state.text.toLowerCase();
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (state.finding && key(r[FINDING]) !== state.finding) continue;
      if (state.outcome && kind(r[OUTCOME]) !== state.outcome) continue;
      if (text && hay[i].indexOf(text) < 0) continue;
      out.push(i);
    }
    if (state.sort >= 0) {
      var k = state.sort, num = cols[k].num, dir = state.dir;
      out.sort(function (a, b) {
        var x = rows[a][k], y = rows[b][k];
        if (x == null || x === "") return y == null || y === "" ? a - b : 1;
        if (y == null || y === "") return -1;
        if (num) return (x - y) * dir || a - b;
        x = String(x); y = String(y);
        return (x < y ? -1 : x > y ? 1 : 0) * dir || a - b;
      });
    }
    return out;
  }

  function render() {
    var found = matching();
    var pages = Math.max(1, Math.ceil(found.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * PAGE;
    var slice = found.slice(start, start + PAGE);
    var frag = document.createDocumentFragment();
    slice.forEach(function (i) {
      var tr = document.createElement("tr");
      rows[i].forEach(function (v, c) {
        var td = document.createElement("td");
        td.textContent = v == null ? "" : String(v);
        // A wide cell is cut with an ellipsis: its full text on hover, and a click opens it.
        td.title = td.textContent;
        td.addEventListener("click", function () { td.classList.toggle("open"); });
        if (cols[c].num) td.className = "num";
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    tbody.textContent = "";
    tbody.appendChild(frag);
    status.textContent = found.length === 0
      ? "No row matches."
      : "Showing " + (start + 1) + "\u2013" + (start + slice.length) + " of " + found.length + " matching rows (" + rows.length + " in this page).";
    status.setAttribute("data-matching", String(found.length));
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
    var button = th.querySelector("button");
    button.addEventListener("click", function () {
      state.dir = state.sort === index ? -state.dir : 1;
      state.sort = index;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
      render();
    });
  });
  fillSelect("filter-finding", FINDING, key);
  fillSelect("filter-outcome", OUTCOME, kind);
  var text = document.getElementById("filter-text");
  var timer = 0;
  text.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = text.value; state.page = 0; render(); }, 120);
  });
  prev.addEventListener("click", function () { state.page -= 1; render(); });
  next.addEventListener("click", function () { state.page += 1; render(); });
  render();
})();`;
