// The report viewer: filter, search, sort and open the scenario rows. No dependencies.
(function () {
  "use strict";
  var table = document.getElementById("runs");
  if (!table) { return; }
  var body = table.tBodies[0];
  var search = document.getElementById("search");
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var shown = document.getElementById("shown");
  var noMatch = document.getElementById("no-match");
  var filters = document.getElementById("filters");
  var SEP = "\u241f";

  function runRows() { return Array.prototype.slice.call(body.querySelectorAll("tr.run")); }
  function detailOf(row) { return row.nextElementSibling; }

  function setOpen(row, open) {
    detailOf(row).hidden = !open;
    row.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function matches(row, wanted, words) {
    for (var i = 0; i < wanted.length; i++) {
      var name = wanted[i][0], value = wanted[i][1];
      var have = row.getAttribute("data-" + name) || "";
      // tags and change hold several values, each between two separators
      var listed = name === "tags" || name === "change";
      if (listed ? have.indexOf(SEP + value + SEP) < 0 : have !== value) {
        return false;
      }
    }
    var text = row.getAttribute("data-search");
    for (var j = 0; j < words.length; j++) {
      if (text.indexOf(words[j]) < 0) { return false; }
    }
    return true;
  }

  function apply() {
    var wanted = selects.filter(function (s) { return s.value !== ""; })
      .map(function (s) { return [s.getAttribute("data-filter"), s.value]; });
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var rows = runRows(), count = 0;
    rows.forEach(function (row) {
      var ok = matches(row, wanted, words);
      row.hidden = !ok;
      if (!ok) { setOpen(row, false); }
      count += ok ? 1 : 0;
    });
    shown.textContent = count + " of " + rows.length + " scenario(s) shown";
    noMatch.hidden = count !== 0;
    var verdict = (selects.filter(function (s) {
      return s.getAttribute("data-filter") === "verdict";
    })[0] || {}).value || "";
    Array.prototype.forEach.call(document.querySelectorAll("button.total"), function (b) {
      b.classList.toggle("active", b.getAttribute("data-verdict") === verdict);
    });
    var change = filterValue("change");
    Array.prototype.forEach.call(document.querySelectorAll("button.change-total"), function (b) {
      b.classList.toggle("active", b.getAttribute("data-change") === change);
    });
    saveState();
  }

  // The filters and the search live in the address (#verdict=FAILED&q=deadline), so a view
  // can be bookmarked or sent; an unknown value in the address is ignored.
  function saveState() {
    var parts = selects.filter(function (s) { return s.value !== ""; }).map(function (s) {
      return encodeURIComponent(s.getAttribute("data-filter")) + "=" +
        encodeURIComponent(s.value);
    });
    if (search.value) { parts.push("q=" + encodeURIComponent(search.value)); }
    var hash = parts.length ? "#" + parts.join("&") : "";
    if (hash !== window.location.hash) {
      try {
        history.replaceState(null, "", hash || window.location.pathname);
      } catch (error) {
        // some browsers refuse to rewrite a file:// address; the view still works
      }
    }
  }

  function loadState() {
    var hash = window.location.hash.replace(/^#/, "");
    if (hash.indexOf("=") < 0) { return; }
    hash.split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at < 0) { return; }
      var name = decodeURIComponent(pair.slice(0, at));
      var value = decodeURIComponent(pair.slice(at + 1).replace(/\+/g, " "));
      if (name === "q") { search.value = value; return; }
      selects.forEach(function (s) {
        if (s.getAttribute("data-filter") === name &&
            Array.prototype.some.call(s.options, function (o) { return o.value === value; })) {
          s.value = value;
        }
      });
    });
  }

  function filterValue(name) {
    var select = selects.filter(function (s) {
      return s.getAttribute("data-filter") === name;
    })[0];
    return select ? select.value : "";
  }

  function setFilter(name, value) {
    selects.forEach(function (s) {
      if (s.getAttribute("data-filter") === name) { s.value = value; }
    });
  }

  function clearAll() {
    selects.forEach(function (s) { s.value = ""; });
    search.value = "";
  }

  body.addEventListener("click", function (event) {
    var row = event.target.closest("tr.run");
    if (!row || event.target.closest("a") || String(window.getSelection()) !== "") { return; }
    setOpen(row, detailOf(row).hidden);
  });
  body.addEventListener("keydown", function (event) {
    var row = event.target.closest("tr.run");
    if (row && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      setOpen(row, detailOf(row).hidden);
    }
  });

  var sortKey = null, ascending = true;
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) {
    th.addEventListener("click", function () {
      var key = th.getAttribute("data-sort");
      ascending = sortKey === key ? !ascending : true;
      sortKey = key;
      Array.prototype.forEach.call(table.tHead.querySelectorAll("th"), function (h) {
        h.classList.remove("asc", "desc");
      });
      th.classList.add(ascending ? "asc" : "desc");
      var numeric = ["verdict", "time", "calls", "problems"].indexOf(key) >= 0;
      var rows = runRows();
      rows.sort(function (a, b) {
        var x = a.getAttribute("data-k-" + key), y = b.getAttribute("data-k-" + key);
        var d = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        if (d === 0) {
          d = a.getAttribute("data-k-name").localeCompare(b.getAttribute("data-k-name"));
        }
        return ascending ? d : -d;
      });
      rows.forEach(function (row) {
        var detail = detailOf(row);
        body.appendChild(row);
        body.appendChild(detail);
      });
    });
  });

  search.addEventListener("input", apply);
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  document.getElementById("reset").addEventListener("click", function () {
    clearAll();
    apply();
  });
  document.getElementById("expand").addEventListener("click", function () {
    var visible = runRows().filter(function (row) { return !row.hidden; });
    var open = visible.some(function (row) { return detailOf(row).hidden; });
    visible.forEach(function (row) { setOpen(row, open); });
  });
  Array.prototype.forEach.call(document.querySelectorAll("button.total"), function (b) {
    b.addEventListener("click", function () {
      setFilter("verdict", b.getAttribute("data-verdict"));
      apply();
      filters.scrollIntoView({block: "start"});
    });
  });
  // The counts of the "compared with" header: each keeps the rows of its kind of change;
  // removed scenarios have no row, so theirs goes to the section that lists them.
  Array.prototype.forEach.call(document.querySelectorAll("button.change-total"), function (b) {
    b.addEventListener("click", function () {
      var target = b.getAttribute("data-target");
      if (target) {
        document.getElementById(target).scrollIntoView({block: "start"});
        return;
      }
      setFilter("change", b.getAttribute("data-change"));
      apply();
      filters.scrollIntoView({block: "start"});
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".seg"), function (seg) {
    seg.addEventListener("click", function () {
      clearAll();
      setFilter("dir", seg.getAttribute("data-dir"));
      setFilter("outcome", seg.getAttribute("data-outcome"));
      apply();
      filters.scrollIntoView({block: "start"});
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("a.repro"), function (link) {
    link.addEventListener("click", function (event) {
      var row = document.getElementById(link.getAttribute("data-target"));
      if (!row) { return; }
      event.preventDefault();
      if (row.hidden) { clearAll(); apply(); }
      setOpen(row, true);
      row.scrollIntoView({block: "center"});
      row.classList.remove("flash");
      void row.offsetWidth;
      row.classList.add("flash");
    });
  });

  // The filters and the table's header stay at the top; a row or a drill-down's part that
  // is scrolled to (a link, the keyboard, find in page) stops below both (--hl-sticky).
  function stickHeader() {
    var offset = filters.offsetHeight + "px";
    Array.prototype.forEach.call(table.tHead.querySelectorAll("th"), function (th) {
      th.style.top = offset;
    });
    document.documentElement.style.setProperty(
      "--hl-sticky", (filters.offsetHeight + table.tHead.offsetHeight) + "px");
  }
  window.addEventListener("resize", stickHeader);
  document.addEventListener("keydown", function (event) {
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement.tagName);
    if (event.key === "/" && !typing) {
      event.preventDefault();
      search.focus();
    } else if (event.key === "Escape" && document.activeElement === search) {
      search.value = "";
      apply();
    }
  });
  stickHeader();
  loadState();
  apply();
}());
