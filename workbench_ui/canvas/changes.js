// What the pass changed, walked node by node ("◀ change  k of n  change ▶") and shown whole on a strip: one
// mark per changed node at its place in the graph's order (inputs left, outputs right), so a learner sees
// at once whether a pass touched one spot or the whole graph, and clicks a mark to go there. Prepended to
// canvas.js (component.py): the canvas makes one ChangeWalker and hands it each run's panes.
//
// A move is Model Explorer's own "locate" (opens the layers down to the node, selects and frames it) through
// its test hook `me_test.renderers[pane]`; the canvas is told (onMove) so it reports no click for it.

class ChangeWalker {
  constructor(onMove) {
    this.onMove = onMove; // (pane index, node id) => the renderer of that pane, or null while not drawn
    this.changes = []; // [pane index, node id, place 0..1] of what the pass changed: after's, then before's only
    this.at = 0;
    this.last = 0;
    this.buttons = [this.button("◀ change", "The previous node this pass changed", -1),
                    this.button("change ▶", "The next node this pass changed", 1)];
    this.count = document.createElement("span");
    this.count.className = "ge-canvas-change-count";
    this.strip = document.createElement("div");
    this.strip.className = "ge-canvas-strip";
    this.strip.title = "Where the pass changed the graph, from its inputs (left) to its outputs (right): "
      + "click a mark to go to that node";
    this.strip.hidden = true;
  }

  // The bar's controls, in order, and the strip (shown under the bar).
  controls() {
    return [this.buttons[0], this.count, this.buttons[1]];
  }

  button(text, title, step) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "ge-canvas-change";
    button.textContent = text;
    button.title = title;
    button.hidden = true;
    button.addEventListener("click", () => this.go((this.at + step + this.changes.length) % this.changes.length));
    return button;
  }

  list(panes) {
    const lists = panes.map((pane) => changesOf(pane));
    const last = lists.length - 1;
    const inLast = new Set((lists[last] || []).map(([id]) => id));
    this.last = last; // the "after" pane (or the only one)
    this.changes = (lists[last] || []).map(([id, place]) => [last, id, place]);
    lists.slice(0, last).forEach((pairs, i) => pairs.forEach(([id, place]) => {
      if (!inLast.has(id)) this.changes.push([i, id, place]);
    }));
    this.at = 0;
    this.drawStrip();
    this.show();
  }

  drawStrip() {
    this.strip.replaceChildren(...this.changes.map(([pane, id, place], k) => {
      const mark = document.createElement("button");
      mark.type = "button";
      mark.className = pane === this.last ? "ge-canvas-mark" : "ge-canvas-mark ge-canvas-mark-before";
      mark.style.left = `${(100 * place).toFixed(3)}%`;
      mark.title = id;
      mark.addEventListener("click", () => this.go(k));
      return mark;
    }));
    this.strip.hidden = this.changes.length === 0;
  }

  show() {
    const some = this.changes.length > 0;
    this.buttons.forEach((button) => { button.hidden = !some; });
    this.count.textContent = some ? `${this.at + 1} of ${this.changes.length}` : "";
    [...this.strip.children].forEach((mark, k) => mark.classList.toggle("ge-canvas-mark-at", k === this.at));
  }

  go(k) {
    if (!this.changes.length) return;
    this.at = k;
    this.show();
    const [pane, id] = this.changes[k];
    const renderer = this.onMove(pane, id);
    if (renderer) renderer.sendLocateNodeRequest(id, renderer.rendererId, false, true);
  }
}

// [node id, place] of a pane's changed nodes (place: the node's position in graph order, 0 first, 1 last).
function changesOf(pane) {
  const focus = pane.focus || {};
  const ids = focus.changes || [];
  const places = focus.places || [];
  const spread = (k) => (ids.length > 1 ? k / (ids.length - 1) : 0); // no places given: evenly
  return ids.map((id, k) => [id, places.length === ids.length ? places[k] : spread(k)]);
}
