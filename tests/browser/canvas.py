"""Driving the graph canvas (Model Explorer in an iframe, workbench_ui.canvas) in Chromium, as a user does:
wait until a pane has drawn its graph, find the node boxes it drew, click one, read what each pane and the
workbench's inspector then show. Used by the browser tests and by bench/bench_canvas.py.

Model Explorer draws with WebGL: its nodes are no DOM elements. A node box is found where a user finds it,
on the screen: a screenshot of the pane, the boxes in the colours of the overlay shown (with the op
category overlay every op has one: `?colour=category` on the Graph page, the default on the Model page).
What a pane has selected is read from Model Explorer's own node panel (kept in the page, hidden beside the
workbench's inspector), the node the page heard from the canvas element's `data-selected`.
"""

from __future__ import annotations

import io
import re
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Locator, Page

CANVAS = ".ge-canvas"  # the component's root: data-version (the panes' fingerprint), data-selected (a node id)
FRAME = "iframe.ge-canvas-frame"
RENDERER = "webgl-renderer canvas.main"  # one per pane
# Model Explorer's parts drawn over a pane's canvas: left out when looking for what the graph drew.
OVER_THE_CANVAS = ("div.toolbar", "legends-panel", "div.sync-navigation-container")
BUSY_TEXTS = ("Processing",)  # Model Explorer's "Processing graph..." while its worker lays the graph out
ERROR_TEXTS = ("is not served", "page that opened this canvas is gone", "Failed to")
SELECTED_IDS_JS = """
() => Array.from(document.querySelectorAll('info-panel')).map(panel => {
  for (const row of panel.querySelectorAll('table.info-attrs tr')) {
    const key = row.querySelector('td.key');
    if (key && key.textContent.trim() === 'id') {
      const value = row.querySelector('td.value .text-content');
      return value ? value.textContent.trim() : '';
    }
  }
  return '';
})
"""
# The function the two readers below run on the canvas root: `files(key)` are the texts of the files the page
# handed the shown pane (canvas.js's store: key 'graphs' or 'nodeData'), null before it has handed any.
SHOWN_FILES_JS = """
async (root) => {
  const files = async (key) => {
    const store = window.__geCanvas || {};
    const frame = root.querySelector('iframe.ge-canvas-frame');  // the one shown, not the next pass drawn ahead
    const token = frame ? new URL(frame.src, location.href).searchParams.get('ge') : null;
    const data = token ? store[token] : null;
    return data ? Promise.all(data[key].map(f => typeof f === 'string' ? f : fetch(f.url).then(r => r.text())))
                : null;
  };
%s
}
"""
# Each pane's op nodes as [id, namespace, label].
PANE_OPS_JS = SHOWN_FILES_JS % """
  const texts = await files('graphs');
  if (!texts) return null;
  return texts.map(text => JSON.parse(text).graphs[0].nodes
    .filter(n => !n.id.startsWith('input:') && !n.id.startsWith('output:'))
    .map(n => [n.id, n.namespace || '', n.label]));"""
# The fill colours of the overlays (node data: `bgColor` per node).
OVERLAY_COLOURS_JS = SHOWN_FILES_JS % """
  const colours = new Set();
  for (const text of (await files('nodeData')) || [])
    for (const value of Object.values(JSON.parse(text).results || {}))
      if (value.bgColor) colours.add(value.bgColor);
  return Array.from(colours);"""
COLOUR_DISTANCE = 24  # a box's median fill against an overlay colour (antialiasing, the label's pixels)


@dataclass(frozen=True)
class Box:
    """Something drawn on a pane, in page pixels: its bounding box and its median colour."""

    x: float
    y: float
    width: float
    height: float
    colour: tuple[int, int, int]

    @property
    def centre(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2


def canvas_root(page: Page, index: int = 0) -> Locator:
    return page.locator(CANVAS).nth(index)


def canvas_frame(page: Page, index: int = 0) -> Frame:
    """The canvas's Model Explorer frame, scrolled into view first as a user would (the canvas loads its
    graphs only once it is in view)."""
    root = canvas_root(page, index)
    root.scroll_into_view_if_needed()
    handle = root.locator(FRAME).element_handle()  # not the frame drawing the next pass ahead
    frame = handle.content_frame() if handle is not None else None
    assert frame is not None, "the canvas has no iframe"
    return frame


def pane_canvases(page: Page, index: int = 0) -> Locator:
    return canvas_frame(page, index).locator(RENDERER)


def version(page: Page, index: int = 0) -> str:
    return canvas_root(page, index).get_attribute("data-version") or ""


def page_selected(page: Page, index: int = 0) -> str:
    """The node the page selected (what the canvas element was last given)."""
    return canvas_root(page, index).get_attribute("data-selected") or ""


def pane_selected(page: Page, index: int = 0) -> list[str]:
    """The node each pane has selected ("" for none), from Model Explorer's own node panel."""
    return cast(list[str], canvas_frame(page, index).evaluate(SELECTED_IDS_JS))


def pane_ops(page: Page, index: int = 0) -> list[list[tuple[str, str, str]]] | None:
    """Each pane's op nodes as (id, layer, op type), as the page handed them over (None before it has)."""
    panes = canvas_root(page, index).evaluate(PANE_OPS_JS)
    return None if panes is None else [[(n[0], n[1], n[2]) for n in ops] for ops in panes]


def pane_nodes(page: Page, index: int = 0) -> list[list[str]] | None:
    """The op node ids of each pane's graph (None before the page handed them over)."""
    panes = pane_ops(page, index)
    return None if panes is None else [[n[0] for n in ops] for ops in panes]


def node_among_others(page: Page, index: int = 0) -> tuple[str, str]:
    """(id, op type) of a node both panes hold, in the layer holding most such nodes (so when the canvas
    opens on it, other op boxes are drawn around it, not only collapsed layers)."""
    panes = pane_ops(page, index) or []
    shared = set.intersection(*({n[0] for n in ops} for ops in panes)) if panes else set()
    layers: dict[str, list[tuple[str, str, str]]] = {}
    for node in panes[-1] if panes else []:
        if node[0] in shared:
            layers.setdefault(node[1], []).append(node)
    assert layers, "the panes share no node"
    crowd = max(layers.values(), key=len)
    node = crowd[len(crowd) // 2]
    return node[0], node[2]


def drawn_pixels(page: Page, pane: Locator) -> tuple[np.ndarray, dict[str, float]]:
    """A pane's canvas as RGB pixels (Model Explorer's toolbar, legend and sync button blanked) and where
    it is on the page."""
    pane.scroll_into_view_if_needed()
    box = pane.bounding_box()
    assert box is not None, "the pane is not on the page"
    pixels = np.asarray(Image.open(io.BytesIO(pane.screenshot(animations="disabled"))).convert("RGB")).astype(int)
    frame = canvas_frame(page)
    frame_box = page.locator(FRAME).first.bounding_box() or {"x": 0.0, "y": 0.0}
    offset_x, offset_y = box["x"] - frame_box["x"], box["y"] - frame_box["y"]
    for selector in OVER_THE_CANVAS:
        covers = cast(list[dict[str, float]], frame.locator(selector).evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect();"
            " return {x: r.x, y: r.y, width: r.width, height: r.height}; })"))
        for c in covers:
            x0, y0 = int(c["x"] - offset_x), int(c["y"] - offset_y)
            x1, y1 = int(c["x"] + c["width"] - offset_x) + 1, int(c["y"] + c["height"] - offset_y) + 1
            pixels[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)] = 255
    return pixels, box


def ink(pixels: np.ndarray) -> int:
    """How many pixels are not background: 0 while the pane is blank."""
    return int(((pixels < 235).any(axis=2)).sum())


def coloured_boxes(pixels: np.ndarray, origin: dict[str, float], *, min_width: int = 14,
                   min_height: int = 12) -> list[Box]:
    """The filled coloured rectangles drawn on a pane, in page coordinates: node boxes in their overlay's
    pastel fill (the strong colours of borders and highlighted edges are left out, so a highlighted box is
    not joined to its edges; a layer's thin colour strip is lower than `min_height`)."""
    saturation = pixels.max(axis=2) - pixels.min(axis=2)
    mask = (saturation > 30) & (pixels.min(axis=2) >= 95)
    height, width = mask.shape
    seen = np.zeros_like(mask)
    found = []
    for y, x in zip(*(a.tolist() for a in np.nonzero(mask)), strict=True):
        if seen[y, x]:
            continue
        seen[y, x] = True
        queue, count = deque([(y, x)]), 0
        x0 = x1 = x
        y0 = y1 = y
        while queue:
            cy, cx = queue.popleft()
            count += 1
            x0, x1, y0, y1 = min(x0, cx), max(x1, cx), min(y0, cy), max(y1, cy)
            for ny, nx in ((cy + 1, cx), (cy - 1, cx), (cy, cx + 1), (cy, cx - 1)):
                if 0 <= ny < height and 0 <= nx < width and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    queue.append((ny, nx))
        w, h = x1 - x0 + 1, y1 - y0 + 1
        if w >= min_width and h >= min_height and count >= 0.35 * w * h:
            inside = pixels[y0:y1 + 1, x0:x1 + 1][mask[y0:y1 + 1, x0:x1 + 1]]
            r, g, b = (int(c) for c in np.median(inside, axis=0))
            found.append(Box(origin["x"] + x0, origin["y"] + y0, w, h, (r, g, b)))
    return found


# In the canvas's frame: resolves once the page has drawn `quiet` ms of frames none longer than `long` ms
# (Model Explorer draws a graph in a few long frames after its worker laid it out, then the overlays), with
# how long ago the last long frame ended. A screenshot forces a software-GL readback that slows drawing
# down by seconds on a big graph, so the drawing is waited for this way and looked at once, after.
SETTLED_JS = """
([quiet, long]) => new Promise((resolve) => {
  let last = performance.now(), calm = performance.now();
  const tick = (t) => {
    if (t - last > long) calm = t;
    last = t;
    if (t - calm >= quiet) resolve(t - calm); else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})
"""
STATE_JS = "(renderer) => [document.body.textContent, document.querySelectorAll(renderer).length]"
QUIET_MS = 600
LONG_FRAME_MS = 100


def wait_rendered(page: Page, panes: int | None = None, index: int = 0, timeout: float = 90) -> float:
    """Wait until the canvas shows `panes` panes (any number when None), each with its graph drawn;
    returns when it finished drawing (time.monotonic()). Fails on an error the canvas shows."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            frame = canvas_frame(page, index)
            text, count = frame.evaluate(STATE_JS, RENDERER)  # no layout forced (textContent), no screenshot
        except Exception:
            text, count = "", 0
        assert not any(e in text for e in ERROR_TEXTS), f"the canvas shows an error: {text[:500]}"
        if count and (panes is None or count == panes) and not any(b in text for b in BUSY_TEXTS):
            try:
                calm_ms = float(frame.evaluate(SETTLED_JS, [QUIET_MS, LONG_FRAME_MS]))
                done = time.monotonic() - calm_ms / 1000
                still_busy = any(b in frame.evaluate(STATE_JS, RENDERER)[0] for b in BUSY_TEXTS)
                canvases = frame.locator(RENDERER)
                if not still_busy and all(ink(drawn_pixels(page, canvases.nth(i))[0]) > 200 for i in range(count)):
                    return done
            except Exception:
                pass
        if time.monotonic() > deadline:
            raise AssertionError(f"the canvas did not draw {panes or 'its'} pane(s) within {timeout:.0f} s "
                                 f"(it shows {count} pane(s); its text: {text[:300]!r})")
        time.sleep(0.1)


def node_boxes(page: Page, pane: int = -1, index: int = 0, settle: float = 10) -> list[Box]:
    """The node boxes drawn on pane `pane` (the last, "after", by default), once the picture stands still
    (Model Explorer animates its moves to a node: two screenshots in a row the same, or `settle` s)."""
    canvases = pane_canvases(page, index)
    target = canvases.nth(pane if pane >= 0 else canvases.count() + pane)
    deadline = time.monotonic() + settle
    pixels, origin = drawn_pixels(page, target)
    while time.monotonic() < deadline:
        time.sleep(0.25)
        again, origin = drawn_pixels(page, target)
        if np.array_equal(again, pixels):
            break
        pixels = again
    boxes = coloured_boxes(pixels, origin)
    fills = overlay_colours(page, index)
    if not fills:
        return boxes
    return [b for b in boxes if min(sum(abs(c - f) for c, f in zip(b.colour, fill, strict=True))
                                    for fill in fills) <= COLOUR_DISTANCE]


def overlay_colours(page: Page, index: int = 0) -> list[tuple[int, int, int]]:
    """The overlays' fill colours (what a node box is filled with; a layer is filled otherwise)."""
    texts = cast(list[str], canvas_root(page, index).evaluate(OVERLAY_COLOURS_JS))
    return [(int(t[1:3], 16), int(t[3:5], 16), int(t[5:7], 16)) for t in texts
            if re.fullmatch(r"#[0-9a-fA-F]{6}", t)]


def pick_in_finder(page: Page, node: str, op: str) -> None:
    """Select `node` with the page's "Go to a node" box (typing filters its list of every node)."""
    box = page.get_by_role("combobox", name=re.compile(r"^Go to a node"))
    box.click()
    box.fill(node)
    page.get_by_role("option", name=f"{op} · {node}", exact=True).click()
    wait_selected(page, lambda selected: selected == node)


def click_a_node(page: Page, pane: int = -1, index: int = 0, avoid: Sequence[Box] = ()) -> str:
    """Click a node box of pane `pane` (away from the pane's centre, where a node the page selected sits,
    and from the boxes in `avoid`) and return the node the page then selects."""
    before = page_selected(page, index)
    boxes = node_boxes(page, pane, index)
    assert boxes, "no node box is drawn on the pane"
    canvases = pane_canvases(page, index)
    area = canvases.nth(pane if pane >= 0 else canvases.count() + pane).bounding_box()
    assert area is not None
    middle = (area["x"] + area["width"] / 2, area["y"] + area["height"] / 2)
    far = sorted(boxes, key=lambda b: -abs(b.centre[1] - middle[1]) - abs(b.centre[0] - middle[0]))
    choices = [b for b in far if b not in avoid and abs(b.centre[1] - middle[1]) > b.height] or far
    box = choices[len(choices) // 2] if before else boxes[len(boxes) // 2]
    page.mouse.click(*box.centre)
    return wait_selected(page, lambda node: node != before and node != "", index)


def wait_selected(page: Page, wanted: Any, index: int = 0, timeout: float = 60) -> str:
    """The page's selected node once `wanted(node)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        node = page_selected(page, index)
        if wanted(node):
            return node
        if time.monotonic() > deadline:
            raise AssertionError(f"the page did not select the node expected (it has {node!r})")
        time.sleep(0.1)


def wait_panes_selected(page: Page, node: str, index: int = 0, timeout: float = 60) -> list[str]:
    """Every pane whose graph holds `node` has it selected (the panes in step); returns what each shows."""
    deadline = time.monotonic() + timeout
    known: dict[str, list[list[str]]] = {}  # version -> the panes' node ids (parsed once: MBs on big models)
    while True:
        at = version(page, index)
        nodes = known.get(at) or pane_nodes(page, index) or []
        known[at] = nodes
        shown = pane_selected(page, index)
        expected = [node if node in ids else "" for ids in nodes]
        holding = [i for i, ids in enumerate(nodes) if node in ids]
        if nodes and not holding:  # the passes so far removed it: nothing to be in step on
            return shown
        if holding and len(shown) == len(nodes) and all(shown[i] == node for i in holding):
            return shown
        if time.monotonic() > deadline:
            raise AssertionError(f"the panes are not in step on {node!r}: they select {shown}, "
                                 f"expected {expected}")
        time.sleep(0.2)


# A label is readable when its ink is at least this many screen pixels high: a label's ink spans its capitals
# (about 0.7 em), so 8 px is a 11-12 px font, the smallest size UI text is set in (Streamlit's captions are
# 14 px). At the fit-the-whole-graph zoom of a 176-node graph the same label is 1-3 px: specks.
READABLE_TEXT_PX = 8
TEXT_DARKNESS = 110  # a label's pixels (Model Explorer writes them near-black) against the pastel fill


def label_height(pixels: np.ndarray, box: Box, origin: dict[str, float]) -> int:
    """The height in screen pixels of the dark ink (the label) inside a node box found on `pixels`."""
    x0, y0 = int(box.x - origin["x"]) + 2, int(box.y - origin["y"]) + 2
    inside = pixels[y0:y0 + int(box.height) - 4, x0:x0 + int(box.width) - 4]
    rows = np.nonzero((inside.max(axis=2) < TEXT_DARKNESS).sum(axis=1) >= 1)[0]
    return int(rows[-1] - rows[0] + 1) if rows.size else 0


def readable_boxes(page: Page, pane: int, index: int = 0) -> list[tuple[Box, int]]:
    """The overlay-coloured node boxes on pane `pane`, entirely on screen, each with its label's height
    (node_boxes, then the label measured on one more screenshot of the settled pane)."""
    boxes = node_boxes(page, pane, index)
    target = pane_canvases(page, index).nth(pane)
    pixels, origin = drawn_pixels(page, target)
    viewport = page.viewport_size or {"width": 0, "height": 0}
    shown = [b for b in boxes if b.y >= 0 and b.y + b.height <= viewport["height"]]
    return [(b, label_height(pixels, b, origin)) for b in shown]
