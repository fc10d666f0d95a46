(function () {
  "use strict";
  var state = {outcome: "", profile: "", binding: ""};
  var KEYS = [["outcome", "data-set-outcome"], ["profile", "data-set-profile"], ["binding", "data-set-binding"]];
  var CONTROLS = "[data-set-outcome],[data-set-profile],[data-set-binding]";
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-status][data-profile]"));
  var rows = items.filter(function (el) { return el.tagName === "TR"; });
  // With a binding chosen, a requirement is read by its status over it; one that does not run over it is hidden.
  function statusOf(el) {
    return state.binding ? el.getAttribute("data-b-" + state.binding) : el.getAttribute("data-status");
  }
  function matches(el) {
    var status = statusOf(el);
    return status !== null && (!state.outcome || status === state.outcome) &&
      (!state.profile || el.getAttribute("data-profile") === state.profile);
  }
  function apply() {
    var shown = 0;
    items.forEach(function (el) {
      el.hidden = !matches(el);
      if (!el.hidden && el.tagName === "TR") { shown += 1; }
    });
    ["root", "section"].forEach(function (kind) {
      document.querySelectorAll("[data-group=" + kind + "]").forEach(function (g) {
        g.hidden = !g.querySelector("[data-status][data-profile]:not([hidden])");
      });
    });
    document.querySelectorAll(CONTROLS).forEach(function (b) {
      var on = KEYS.every(function (k) { var v = b.getAttribute(k[1]); return v === null || v === state[k[0]]; });
      b.setAttribute("aria-pressed", on ? "true" : "false");
    });
    var none = document.getElementById("no-match");
    if (none) { none.hidden = shown > 0; }
    var note = document.getElementById("filter-state");
    if (note) {
      var what = [state.outcome, state.profile, state.binding && "over " + state.binding].filter(Boolean).join(" · ");
      note.textContent = "showing " + shown + " of " + rows.length + " requirements" + (what ? " (" + what + ")" : "");
    }
  }
  document.addEventListener("click", function (ev) {
    var target = ev.target instanceof Element ? ev.target : null;
    if (!target) { return; }
    var open = target.closest("[data-open]");
    if (open) {
      var details = document.getElementById(open.getAttribute("data-open"));
      if (details) { details.open = true; details.scrollIntoView({block: "start"}); }
      return;
    }
    var control = target.closest(CONTROLS);
    var rowHead = target.closest("tr[data-row-profile] > th");
    if (control) {
      // A control sets what it names (a matrix cell: an outcome and a profile or binding); the same again clears it.
      var named = KEYS.filter(function (k) { return control.getAttribute(k[1]) !== null; });
      var same = named.every(function (k) { return state[k[0]] === control.getAttribute(k[1]); });
      named.forEach(function (k) { state[k[0]] = same ? "" : control.getAttribute(k[1]); });
    } else if (rowHead) {
      var row = rowHead.parentElement.getAttribute("data-row-profile");
      state.profile = state.profile === row ? "" : row;
    } else {
      return;
    }
    apply();
  });
  apply();
})();
