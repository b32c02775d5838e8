// The canvas's server API, answered inside the page: Model Explorer's web app asks its own Python server
// for a few things (extensions, version, graph and node-data JSON). The workbench runs no such server: the
// bundle is served as static files by Streamlit, and this script (first in canvas.html's <head>) answers
// those requests from the data the workbench page handed over, under the token in the address (`?ge=`).
// Nothing else leaves the page: a request outside the bundle's own folder, or to another origin, fails.
// There is no file-reading call (`read_text_file` and the like are refused like any unknown path).
(() => {
  "use strict";
  const params = new URLSearchParams(window.location.search);
  const token = params.get("ge") || "";
  const bundleDir = new URL(".", window.location.href).pathname;
  const host = window.parent !== window ? window.parent : window.opener;
  const JSON_ADAPTER = {
    fileExts: ["json"], type: "adapter", id: "builtin_json", name: "JSON adapter",
    description: "Graph JSON from the GE Workbench (or a file of yours)."
  };
  const NO_NEW_VERSION = { version: "", runningVersion: "", releaseUrl: "", desktopAppUrl: "" };

  function handed() {
    try {
      const store = host && host.__geCanvas;
      return (store && store[token]) || null;
    } catch (err) {
      return null; // the page that opened this one is gone or not ours
    }
  }

  // A tab opened by "Open in Model Explorer" starts before the workbench has sent its data: wait a while.
  function waitForData(timeoutMs = 120000) {
    const started = Date.now();
    return new Promise((resolve) => {
      const look = () => {
        const data = handed();
        if (data || Date.now() - started > timeoutMs) return resolve(data);
        window.setTimeout(look, 100);
      };
      look();
    });
  }

  // What the page handed over: JSON text, or {url} of the text in Streamlit's media storage (the page's
  // own session's in-memory files, `/media/<hash>.json`: big graphs go there, not through the websocket).
  async function content(item) {
    if (typeof item === "string") return item;
    const url = new URL(item.url, window.location.href);
    if (url.origin !== window.location.origin) throw new TypeError("the workbench canvas reads only its own site");
    const response = await realFetch(url.href);
    if (!response.ok) throw new Error(`the workbench page's data is gone (${response.status}): open it again`);
    return response.text();
  }

  function reply(body, status = 200) {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return Promise.resolve(new Response(text, { status, headers: { "Content-Type": "application/json" } }));
  }

  async function answer(url) {
    const index = (name) => Number(url.searchParams.get(name));
    switch (url.pathname) {
      case "/api/v1/get_extensions":
        return reply([JSON_ADAPTER]);
      case "/api/v1/check_new_version":
        return reply(NO_NEW_VERSION);
      case "/api/v1/notify_user_provided_model_path":
        return reply({ status: "ok" });
      case "/api/v1/load_graphs_json": {
        const data = await waitForData();
        const graphs = data && data.graphs[index("graph_index")];
        return graphs === undefined || graphs === null
          ? reply({ error: "The workbench page that opened this canvas is gone: open it again from there." })
          : reply(await content(graphs));
      }
      case "/api/v1/load_node_data": {
        const data = await waitForData();
        const nodeData = data && data.nodeData[index("node_data_index")];
        return nodeData === undefined || nodeData === null
          ? reply({ error: "no such node data" })
          : reply({ content: await content(nodeData) });
      }
      default:
        return reply({ error: "The workbench canvas has no server API: " + url.pathname + " is not served." }, 404);
    }
  }

  const realFetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? String(input) : input.url,
                        document.baseURI);
    if (url.origin !== window.location.origin) {
      return Promise.reject(new TypeError("the workbench canvas makes no requests to other sites"));
    }
    if (url.pathname.startsWith(bundleDir)) {
      return realFetch(input, init); // the bundle's own files (scripts, fonts, icons)
    }
    return answer(url);
  };

  // Embedded beside the workbench's own inspector (`?embed=1`), the graph gets the whole pane: Model
  // Explorer's info panel (370 px a pane) and its title and documentation links are hidden.
  if (params.get("embed") === "1") {
    const style = document.createElement("style");
    style.textContent = "info-panel { display: none !important; }\n"
      + "title-bar .title, title-bar .icons-container { display: none !important; }";
    document.head.appendChild(style);
  }

  // The app keeps its state in its own address (Angular's router), one history entry per change: in the
  // workbench's page those entries would be the browser's, and Back would step the canvas, not the page.
  // They replace the current entry instead (the state is the workbench's, in the page's own address).
  const realReplaceState = window.history.replaceState.bind(window.history);
  window.history.pushState = (state, title, url) => realReplaceState(state, title, url);

  // Drawn in software (no GPU: SwiftShader, llvmpipe), every frame of a WebGL canvas is read back for the
  // page's compositor, and that readback costs with the pixels and their samples: at the app's own 1.5x
  // resolution with 4x multisampling, seconds per graph drawn on this 2-core machine (GLES2::ReadPixels in a
  // Chrome trace). With a software renderer the canvas draws at the screen's own resolution without
  // multisampling: a resnet50 pass step 5.1 s -> 3.2 s in bench/bench_canvas.py. With a GPU nothing changes.
  if (softwareWebGL()) {
    if (window.devicePixelRatio === 1) {
      // the app turns a ratio of exactly 1 into 1.5 (crisper text on a GPU); just above 1 it keeps it
      Object.defineProperty(window, "devicePixelRatio", { get: () => 1.000001, configurable: true });
    }
    const realGetContext = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (type, attributes) {
      const webgl = typeof type === "string" && type.startsWith("webgl");
      return realGetContext.call(this, type, webgl ? { ...attributes, antialias: false } : attributes);
    };
  }

  // Asked once per workbench page and kept in its store: the question makes a WebGL context and waits for the
  // GPU process, which is busy drawing the other canvas for seconds in software (a 7 s main-thread task on
  // densenet121 in a Chrome trace); every later canvas of the page reads the answer.
  function softwareWebGL() {
    try {
      const store = host && host.__geCanvas;
      if (store && typeof store.softwareWebGL === "boolean") return store.softwareWebGL;
      const answer = askSoftwareWebGL();
      if (store) store.softwareWebGL = answer;
      return answer;
    } catch (err) {
      return askSoftwareWebGL(); // the host's store is out of reach (another origin): ask here
    }
  }

  function askSoftwareWebGL() {
    try {
      const gl = document.createElement("canvas").getContext("webgl");
      if (!gl) return false; // no WebGL at all: the app says so itself
      const info = gl.getExtension("WEBGL_debug_renderer_info");
      const renderer = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
      const lose = gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
      return /swiftshader|llvmpipe|softpipe|software|basic render driver/i.test(renderer);
    } catch (err) {
      return false;
    }
  }

  // The app listens for its server's "refresh the page" directives; there is no server to send them.
  const RealEventSource = window.EventSource;
  window.EventSource = function (url, options) {
    if (new URL(String(url), document.baseURI).pathname.startsWith(bundleDir)) {
      return new RealEventSource(url, options);
    }
    return { addEventListener() {}, removeEventListener() {}, close() {}, readyState: 2 };
  };
})();
