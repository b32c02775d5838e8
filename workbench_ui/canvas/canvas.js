// The graph canvas: Model Explorer's web app in an iframe (same origin, served from static/), driven by
// its URL parameters and its postMessage API. Streamlit calls this function on every rerun with `data`
// (see component.py); the iframe is made once and reloaded only when the graphs or overlays change, and
// only once the canvas is in view: Model Explorer draws on the page's own main thread (a same-origin
// iframe), for seconds on a big graph with software WebGL, so a canvas below the fold would slow every
// chart, table and rerun above it. Until then a placeholder of the same height holds its place. For the
// same reason a load waits for the page's script run to end (the page's own tables and charts first).
//
//   Python -> canvas: the panes' graph JSON and node data, handed over in window.__geCanvas[token] (the
//     iframe's shim.js reads them there), the selected node (uiState on load, then
//     `model-explorer-select-node-by-node-id`, retried until the app has the graph).
//   canvas -> Python: `model-explorer-node-selected` becomes the trigger "clicked" (a node id); the
//     "Open in Model Explorer" button the trigger "open" (a token: the page answers with the data).
//
// Drawn ahead: with `data.ahead` (the panes the next pass shows), once the canvas has drawn and been calm
// for a while, a second iframe draws those beneath it, out of sight; when a later run asks for exactly
// those panes, that iframe is shown at once instead of a new one loaded (Model Explorer starts, lays the
// graphs out and draws them in 2-3 s here, which stepping to the next pass would otherwise wait for).
// `{coming: true}`: the page is still building them; once calm the canvas asks again (the trigger "ahead").

const STORE = (window.__geCanvas = window.__geCanvas || {});
const HIGHLIGHT_DIFFS = "sync_navigation_match_node_id_highlight_diffs"; // Model Explorer's own setting
const SELECT_RETRY_MS = 250;
const SELECT_TRIES = 120;
const VIEW_MARGIN = "200px"; // start loading just before the canvas scrolls into view
const APP = "[data-testid='stApp']";
const RUN_STATE = "data-test-script-state"; // Streamlit's own: "running" while the page's script runs
const AHEAD_CALM_MS = 500; // the canvas drawn, the page idle and no press in the canvas this long first
const AHEAD_POLL_MS = 250;
const AHEAD_ASKS = 3; // times a canvas asks again (a rerun) for panes ahead that were still being built,
const AHEAD_ASK_MS = 1000; // after 1, 3 and 5 calm seconds: the server builds them in the background meanwhile
// An ask is a rerun carrying the address the browser has: sent between a press elsewhere on the page and that
// press's run, it would run again on the old address and undo the step the press took. So no ask this soon
// after a press or key anywhere on the page, and only while the page's script is not running nor asked to.
const ASK_QUIET_MS = 3000;
const INPUTS = ["pointerdown", "keydown"];
const DRAWN_PANE = "webgl-renderer canvas.main"; // one per pane once Model Explorer has drawn its graph
const BUSY_TEXT = "Processing"; // Model Explorer's "Processing graph..." while its worker lays a graph out

function pageRunning() {
  const app = document.querySelector(APP);
  return Boolean(app) && app.getAttribute(RUN_STATE) === "running";
}

function pageIdle() {
  const app = document.querySelector(APP);
  return Boolean(app) && app.getAttribute(RUN_STATE) === "notRunning";
}
let counter = 0;

function newToken() {
  counter += 1;
  return `t${Date.now().toString(36)}${counter}${Math.random().toString(36).slice(2, 10)}`;
}

function urlData(panes, selected, sync, withUiState = true) {
  const nodeData = [];
  const targets = [];
  panes.forEach((pane) => pane.overlays.forEach(([name]) => {
    nodeData.push(`node_data://${name}/${nodeData.length}`);
    targets.push(pane.label);
  }));
  const data = {
    models: panes.map((pane, i) => ({ url: `graphs://${pane.label}/${i}` })),
    nodeData,
    nodeDataTargets: targets,
    uiState: {
      paneStates: panes.map((pane, i) => ({
        // each pane opens the layers holding what the pass changed ...
        deepestExpandedGroupNodeIds: focusOf(pane).layers,
        // ... and on the node the page selected (a pane without it ignores it: the panes start in step),
        // else on its first changed node (or first op): Model Explorer frames it at a readable zoom
        selectedNodeId: selected ? selected.id : focusOf(pane).node,
        selectedGraphId: pane.graph_id,
        selectedCollectionLabel: pane.label,
        widthFraction: 1 / panes.length,
        selected: i === (selected ? selected.pane : 0),
      })),
    },
  };
  if (panes.length === 2 && sync) data.sync = { mode: "match_node_id" };
  if (!withUiState) delete data.uiState; // Model Explorer then opens the collection's biggest graph
  return data;
}

function focusOf(pane) {
  return { node: (pane.focus && pane.focus.node) || "", layers: (pane.focus && pane.focus.layers) || [] };
}

// The nodes a load selects by itself (no node selected by the page): their echo is no click to report.
function focusEchoes(panes, selected) {
  return new Set(selected ? [] : panes.map((pane) => focusOf(pane).node).filter(Boolean));
}

function handOver(token, panes) {
  STORE[token] = {
    graphs: panes.map((pane) => pane.graphs),
    nodeData: panes.flatMap((pane) => pane.overlays.map(([, json]) => json)),
  };
}

class Canvas {
  constructor(root) {
    this.root = document.createElement("div");
    this.root.className = "ge-canvas";
    this.bar = document.createElement("div");
    this.bar.className = "ge-canvas-bar";
    this.status = document.createElement("span");
    this.status.className = "ge-canvas-status";
    this.openButton = document.createElement("button");
    this.openButton.type = "button";
    this.openButton.className = "ge-canvas-open";
    this.openButton.textContent = "Open in Model Explorer ↗";
    this.openButton.title = "This snapshot, with every detail and overlay, in a Model Explorer tab of its own";
    this.openButton.addEventListener("click", () => this.openTab());
    this.walker = new ChangeWalker((pane, id) => this.rendererFor(pane, id)); // changes.js
    this.bar.append(this.status, ...this.walker.controls(), this.openButton);
    this.frame = this.placeholder();
    this.stack = document.createElement("div"); // the frame shown, and the one drawn ahead beneath it
    this.stack.className = "ge-canvas-stack";
    this.stack.append(this.frame);
    this.root.append(this.bar, this.walker.strip, this.stack);
    root.appendChild(this.root);
    this.inView = false;
    this.waiting = null; // data whose graphs are loaded once the canvas is in view
    this.loadQueued = false; // a load waits for the next painted frame
    this.viewer = new IntersectionObserver((entries) => this.seen(entries), { rootMargin: VIEW_MARGIN });
    this.viewer.observe(this.root);
    this.runWatcher = new MutationObserver(() => this.loadWhenReady());
    const app = document.querySelector(APP);
    if (app) this.runWatcher.observe(app, { attributes: true, attributeFilter: [RUN_STATE] });
    this.version = null;
    this.token = null;
    this.shown = ""; // the node the canvas has selected
    this.reported = ""; // the last click sent to Python
    this.pending = null; // a selection asked of the canvas, not yet echoed
    this.echoes = new Set(); // nodes the shown frame selected on its own (each pane's focus), until a press
    this.timer = null;
    this.ahead = null; // {version, token, frame, selected}: the panes drawn out of sight
    this.aheadWanted = null; // data.ahead not yet drawn
    this.calmSince = null;
    this.aheadTimer = null;
    this.asked = { version: null, times: 0 }; // asks for panes ahead that were coming, for this version
    this.lastInput = -Infinity; // a press or key anywhere on the page
    this.onInput = () => {
      this.lastInput = performance.now();
      this.calmSince = null;
    };
    for (const kind of INPUTS) document.addEventListener(kind, this.onInput, true);
    this.onMessage = (event) => this.receive(event);
    window.addEventListener("message", this.onMessage);
    try {
      window.localStorage.setItem(HIGHLIGHT_DIFFS, "true"); // mark nodes only one side has
    } catch (err) {
      // storage refused: the canvas works, without the added/removed highlight
    }
  }

  update(data, trigger) {
    this.trigger = trigger;
    if (!this.data || data.version !== this.data.version) this.walker.list(data.panes);
    this.data = data;
    this.frame.style.height = `${data.height}px`;
    this.status.textContent = data.caption || "";
    this.openButton.hidden = !data.open;
    if (data.open_payload) STORE[data.open_payload.token] = data.open_payload.data;
    if (this.ahead) this.ahead.frame.style.height = this.frame.style.height;
    if (data.version !== this.version) {
      this.version = data.version;
      if (this.ahead && this.ahead.version === data.version) {
        this.promote(data);
      } else {
        this.waiting = data;
        this.loadWhenReady();
      }
    } else if (this.waiting) {
      this.waiting = data; // not drawn yet: it opens on the latest selection
    } else if (data.selected && data.selected.id !== this.shown && data.selected.id !== this.reported) {
      this.select(data.selected.id);
    }
    this.root.dataset.version = data.version;
    this.root.dataset.selected = data.selected ? data.selected.id : "";
    this.planAhead(data.ahead || null);
  }

  // A pane's renderer for a move to one of the pass's changes (the canvas's own: no click reported for it).
  rendererFor(pane, id) {
    try {
      const renderer = this.frame.contentWindow.me_test.renderers[pane];
      this.echoes.add(id);
      return renderer;
    } catch (err) {
      return null; // the pane has not drawn yet: the press does nothing
    }
  }

  // The panes drawn ahead become the ones shown; the selection follows the page's if it moved since.
  promote(data) {
    const ahead = this.ahead;
    this.ahead = null;
    this.waiting = null;
    if (this.token) delete STORE[this.token];
    this.token = ahead.token;
    this.stopSelecting();
    ahead.frame.className = "ge-canvas-frame";
    ahead.frame.title = "Graph canvas (Model Explorer)";
    ahead.frame.removeAttribute("aria-hidden");
    ahead.frame.removeAttribute("tabindex");
    this.frame.remove();
    this.frame = ahead.frame;
    this.shown = ahead.selected;
    this.reported = this.shown;
    this.echoes = ahead.echoes;
    const wanted = data.selected ? data.selected.id : "";
    if (wanted && wanted !== this.shown) this.select(wanted);
  }

  planAhead(ahead) {
    if (this.ahead && (!ahead || this.ahead.version !== ahead.version)) this.dropAhead();
    this.aheadWanted = ahead && !this.ahead ? ahead : null;
    this.calmSince = null;
    if (this.aheadWanted && this.aheadTimer === null) {
      this.aheadTimer = window.setInterval(() => this.drawAheadWhenCalm(), AHEAD_POLL_MS);
    } else if (!this.aheadWanted) {
      this.stopAheadTimer();
    }
  }

  drawAheadWhenCalm() {
    const now = performance.now();
    if (!this.aheadWanted || this.waiting || !this.inView || !pageIdle() || !this.drawn()) {
      this.calmSince = null;
      return;
    }
    if (this.calmSince === null) this.calmSince = now;
    if (this.asked.version !== this.version) this.asked = { version: this.version, times: 0 };
    const coming = Boolean(this.aheadWanted.coming);
    if (now - this.calmSince < (coming ? AHEAD_ASK_MS * (1 + 2 * this.asked.times) : AHEAD_CALM_MS)) return;
    if (coming && now - this.lastInput < ASK_QUIET_MS) return;
    const ahead = this.aheadWanted;
    this.aheadWanted = null;
    this.stopAheadTimer();
    if (coming) {
      if (this.asked.times < AHEAD_ASKS) {
        this.asked.times += 1;
        this.trigger("ahead", newToken());
      }
      return;
    }
    const token = newToken();
    handOver(token, ahead.panes);
    const selected = this.data && this.data.selected ? this.data.selected : null;
    const params = new URLSearchParams({ ge: token, embed: "1",
                                         data: JSON.stringify(urlData(ahead.panes, selected, this.data.sync)) });
    const frame = this.newFrame(`${this.data.src}?${params.toString()}`);
    frame.className = "ge-canvas-ahead";
    frame.title = "The next pass, drawn ahead (hidden)";
    frame.setAttribute("aria-hidden", "true");
    frame.setAttribute("tabindex", "-1");
    frame.style.height = this.frame.style.height;
    frame.dataset.version = ahead.version;
    this.stack.insertBefore(frame, this.frame);
    this.ahead = { version: ahead.version, token, frame, selected: selected ? selected.id : "",
                   echoes: focusEchoes(ahead.panes, selected) };
  }

  // The frame shown has drawn its graphs (Model Explorer's own elements, no pixels read).
  drawn() {
    try {
      const doc = this.frame.contentDocument;
      return Boolean(doc && doc.body) && doc.querySelectorAll(DRAWN_PANE).length > 0
        && !doc.body.textContent.includes(BUSY_TEXT);
    } catch (err) {
      return false;
    }
  }

  dropAhead() {
    if (!this.ahead) return;
    delete STORE[this.ahead.token];
    this.ahead.frame.remove();
    this.ahead = null;
  }

  stopAheadTimer() {
    if (this.aheadTimer !== null) window.clearInterval(this.aheadTimer);
    this.aheadTimer = null;
  }

  seen(entries) {
    this.inView = entries[entries.length - 1].isIntersecting;
    this.loadWhenReady();
  }

  loadWhenReady() {
    if (!this.inView || !this.waiting || pageRunning() || this.loadQueued) return;
    // After the next frame is painted: the page's finished run (its last tables, the status "done") is
    // on screen before Model Explorer starts, which holds the main thread for a second or more.
    this.loadQueued = true;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      this.loadQueued = false;
      if (this.inView && this.waiting && !pageRunning()) this.load(this.waiting);
    }));
  }

  load(data) {
    this.waiting = null;
    const token = newToken();
    handOver(token, data.panes);
    if (this.token) delete STORE[this.token];
    this.token = token;
    this.shown = data.selected ? data.selected.id : "";
    this.reported = this.shown;
    this.echoes = focusEchoes(data.panes, data.selected);
    this.stopSelecting();
    const params = new URLSearchParams({ ge: token, embed: "1",
                                         data: JSON.stringify(urlData(data.panes, data.selected, data.sync)) });
    // A new iframe, its address set before it joins the page: changing an iframe's src would add an entry
    // to the browser's history, and the Back button would step the canvas instead of leaving the page.
    const frame = this.newFrame(`${data.src}?${params.toString()}`);
    frame.style.height = this.frame.style.height;
    this.frame.replaceWith(frame);
    this.frame = frame;
  }

  placeholder() {
    const box = document.createElement("div");
    box.className = "ge-canvas-frame ge-canvas-waiting";
    box.textContent = "The graph is drawn when it scrolls into view.";
    return box;
  }

  newFrame(src) {
    const frame = document.createElement("iframe");
    frame.className = "ge-canvas-frame";
    frame.title = "Graph canvas (Model Explorer)";
    frame.src = src;
    return frame;
  }

  select(id) {
    this.stopSelecting();
    this.pending = id;
    let tries = 0;
    const ask = () => {
      tries += 1;
      if (this.pending !== id || tries > SELECT_TRIES) return this.stopSelecting();
      this.frame.contentWindow?.postMessage({ cmd: "model-explorer-select-node-by-node-id", nodeId: id }, window.location.origin);
      this.timer = window.setTimeout(ask, SELECT_RETRY_MS);
    };
    ask();
  }

  stopSelecting() {
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
  }

  receive(event) {
    if (event.source !== this.frame.contentWindow || event.origin !== window.location.origin) return;
    const message = event.data || {};
    if (message.cmd === "model-explorer-mousedown") {
      this.calmSince = null; // in use: draw ahead later
      this.echoes.clear(); // what it selects from now on is the user's
    }
    if (message.cmd !== "model-explorer-node-selected" || !message.nodeId) return;
    this.shown = message.nodeId;
    if (this.echoes.has(message.nodeId)) return; // the pane opening on its focus, not a click
    if (this.pending === message.nodeId) {
      this.stopSelecting(); // the canvas did what Python asked: nothing to report
      return;
    }
    const asked = this.data && this.data.selected ? this.data.selected.id : "";
    if (message.nodeId === this.reported || message.nodeId === asked) return;
    this.reported = message.nodeId;
    this.trigger("clicked", message.nodeId);
  }

  openTab() {
    const open = this.data && this.data.open;
    if (!open) return;
    const token = newToken();
    const panes = [{ label: open.label, graph_id: "", overlays: open.overlays.map((name) => [name, ""]) }];
    const params = new URLSearchParams({ ge: token, data: JSON.stringify(urlData(panes, null, false, false)) });
    window.open(`${this.data.src}?${params.toString()}`, "_blank");
    this.trigger("open", token); // the page answers with the data, under this token
  }

  destroy() {
    this.stopSelecting();
    this.stopAheadTimer();
    this.dropAhead();
    this.viewer.disconnect();
    this.runWatcher.disconnect();
    window.removeEventListener("message", this.onMessage);
    for (const kind of INPUTS) document.removeEventListener(kind, this.onInput, true);
    if (this.token) delete STORE[this.token];
    this.root.remove();
  }
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let canvas = parentElement.__geCanvas;
  if (!canvas) {
    canvas = parentElement.__geCanvas = new Canvas(parentElement);
  }
  canvas.update(data, setTriggerValue);
  return () => {
    canvas.destroy();
    delete parentElement.__geCanvas;
  };
}
