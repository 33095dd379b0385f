// mcpbridge serve: the page. Lists servers and tools, calls tools from forms generated from
// their schemas (or a JSON editor), shows what the model reads and the raw result, and hosts
// MCP Apps Views as the MCP Apps specification (2026-01-26) describes for web hosts: the View
// runs in a sandbox proxy on another origin, talks JSON-RPC over postMessage, and reaches its
// own server only through the bridge's App proxy (/api/proxy), named by server hash.
//
// Nothing a server sends is ever inserted as HTML: every text goes through textContent (the
// page's CSP also requires Trusted Types with no policy, so an HTML sink would throw).
"use strict";

const APPS_PROTOCOL = "2026-01-26";
const MAX_INFLIGHT = 16; // App requests proxied at once, per View
const MAX_MESSAGE = 4 << 20; // characters of one JSON-RPC message from a View
const MAX_VIEW_HEIGHT = 4000;
const MAX_SHOWN = 200000; // characters of a raw result shown
const TEARDOWN_WAIT = 2000; // ms to wait for a View's teardown answer

let page = null; // GET /api/servers
let current = null; // the AppView on screen

// el builds an element; attrs never include event handlers or server-controlled URLs.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

function clip(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, n) + `… (${s.length - n} more characters)` : s;
}

function pretty(v) {
  try {
    return clip(JSON.stringify(v, null, 2), MAX_SHOWN);
  } catch (e) {
    return String(e);
  }
}

async function api(path, body, signal) {
  const init = { credentials: "same-origin", headers: {}, signal };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  let j = null;
  try {
    j = await r.json();
  } catch (e) {
    j = { error: `HTTP ${r.status}` };
  }
  if (!r.ok) {
    const err = new Error((j && j.error) || `HTTP ${r.status}`);
    err.status = r.status;
    throw err;
  }
  return j;
}

// ---- server list -------------------------------------------------------------------------

let searchBox = null; // the search input and its hits, kept across renders
let searchSeq = 0; // the latest search; older answers are dropped

// renderSearch puts the search box at the top of the server list: it ranks the
// model-visible tools with the Set's index, the search a model gets with deferred loading.
function renderSearch(nav) {
  if (!searchBox) {
    const input = el("input", { type: "search", id: "search", placeholder: "Search tools as the model would", "aria-label": "Search tools", autocomplete: "off" });
    const hits = el("ol", { class: "hits", id: "hits" });
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => runSearch(input.value, hits), 150);
    });
    searchBox = el("div", { class: "search" }, input, hits);
  }
  nav.prepend(searchBox);
}

async function runSearch(q, hits) {
  const seq = ++searchSeq;
  if (!q.trim()) {
    hits.replaceChildren();
    return;
  }
  let res;
  try {
    res = await api("/api/search?k=8&q=" + encodeURIComponent(q));
  } catch (e) {
    if (seq === searchSeq) hits.replaceChildren(el("li", { class: "error", text: e.message }));
    return;
  }
  if (seq !== searchSeq) return;
  const items = [];
  for (const h of res.results) {
    const s = page.servers.find((x) => x.id === h.server);
    const t = s && s.tools.find((x) => x.name === h.name);
    if (!t) continue;
    const b = el("button", { class: "tool", type: "button", "data-tool": t.remoteName },
      el("code", { text: t.name }), el("span", { class: "muted", text: s.id }));
    b.addEventListener("click", () => selectTool(s, t, b));
    items.push(el("li", {}, b));
  }
  hits.replaceChildren(...(items.length ? items : [el("li", { class: "muted", text: "no tool matches" })]));
}

function renderServers() {
  const nav = document.getElementById("servers");
  nav.replaceChildren();
  renderSearch(nav);
  let ok = 0;
  let tools = 0;
  let tokens = 0;
  for (const s of page.servers) {
    if (s.status === "ok") ok++;
    const facts = [];
    if (s.transport) facts.push(s.transport);
    if (s.serverName) facts.push(s.serverName + (s.serverVersion ? " " + s.serverVersion : ""));
    if (s.protocolVersion) facts.push("protocol " + s.protocolVersion);
    for (const t of s.timings || []) facts.push(`${t.phase} ${t.ms}ms`);
    if (s.tokens) {
      facts.push(`${s.tokens.toLocaleString("en")} tokens`);
      tokens += s.tokens;
    }
    const box = el("div", { class: "server", "data-server": s.id },
      el("h2", {}, el("span", { text: s.id }), el("span", { class: "badge " + s.status, text: s.status })),
      el("div", { class: "facts", text: facts.join(" · ") }));
    if (s.error) {
      box.append(el("div", { class: "error", text: `${s.error.phase}: ${s.error.message}` }));
      if (s.stderr) box.append(el("pre", { text: s.stderr }));
    }
    if (s.instructions) {
      // The server's own words: shown as text, never as markup.
      box.append(el("details", { class: "instructions" },
        el("summary", { text: `instructions · ${(s.instructionsTokens || 0).toLocaleString("en")} tokens` }),
        el("pre", { text: s.instructions })));
    }
    if (s.skills && s.skills.length) {
      // The server's own words: shown as text, never as markup.
      const items = s.skills.map((k) => el("li", {},
        el("code", { text: k.name }), el("span", { text: ` ${k.description} · ${(k.indexTokens || 0).toLocaleString("en")} tokens · ` +
          (k.dynamic ? "no manifest" : (k.files || []).map((f) => `${f.path} (${f.size.toLocaleString("en")} B)`).join(", ")) })));
      box.append(el("details", { class: "skills" },
        el("summary", { text: `skills · ${s.skills.length}` }), el("ul", {}, ...items)));
    }
    const probs = [];
    for (const r of s.renamed || []) probs.push(`renamed ${r.remote} → ${r.name}: ${r.reason}`);
    for (const p of s.problems || []) probs.push(`${p.tool}: ${p.problem}${p.skipped ? " (skipped)" : ""}`);
    if (probs.length) box.append(el("ul", { class: "problems" }, ...probs.map((p) => el("li", { text: p }))));
    const list = el("ul", { class: "tools" });
    for (const t of s.tools) {
      if (!t.appOnly) tools++;
      const tip = (t.title ? t.title + "\n" : "") + (t.description || "").split("\n")[0];
      const b = el("button", { class: "tool", type: "button", "data-tool": t.remoteName, title: clip(tip, 300) },
        el("code", { text: t.appOnly ? t.remoteName : t.name }),
        t.uiResource ? el("span", { class: "badge app", text: "App" }) : null,
        t.appOnly ? el("span", { class: "badge apponly", text: "app-only" }) : null,
        t.tokens ? el("span", { class: "tokens", text: `${t.tokens.toLocaleString("en")} tok` }) : null);
      b.addEventListener("click", () => selectTool(s, t, b));
      list.append(el("li", {}, b));
    }
    box.append(list);
    nav.append(box);
  }
  document.getElementById("summary").textContent =
    `${page.servers.length} servers, ${ok} ok, ${tools} model-visible tools` +
    (tokens ? `, ${tokens.toLocaleString("en")} tokens of definitions` : "") + (page.version ? ` · ${page.version}` : "");
}

// ---- forms from schemas -------------------------------------------------------------------

function mainType(schema) {
  let t = schema && schema.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null");
  return typeof t === "string" ? t : "";
}

// buildForm returns null when the schema is not an object with plain properties; the JSON
// editor is then the only input.
function buildForm(schema, prefix = "f-") {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return null;
  const props = schema.properties;
  if (props !== undefined && (typeof props !== "object" || props === null || Array.isArray(props))) return null;
  if (schema.oneOf || schema.anyOf || schema.allOf || schema.$ref) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = [];
  const node = el("div", { class: "form" });
  for (const [name, ps] of Object.entries(props || {})) {
    const p = ps && typeof ps === "object" ? ps : {};
    const type = mainType(p);
    const id = prefix + fields.length;
    let input;
    let kind;
    // A titled choice (oneOf of consts, as elicitation schemas write enums) is a choice too.
    const titled = Array.isArray(p.oneOf) && p.oneOf.length > 0 && p.oneOf.length <= 200 &&
      p.oneOf.every((o) => o && typeof o === "object" && "const" in o);
    const choices = titled ? p.oneOf.map((o) => o.const) : p.enum;
    if (Array.isArray(choices) && choices.length > 0 && choices.length <= 200) {
      kind = "enum";
      input = el("select", { id });
      input.append(el("option", { value: "", text: required.has(name) ? "(choose)" : "(unset)" }));
      choices.forEach((v, i) => input.append(el("option", { value: String(i),
        text: titled && typeof p.oneOf[i].title === "string" ? `${p.oneOf[i].title} (${JSON.stringify(v)})` : JSON.stringify(v) })));
    } else if (type === "string") {
      kind = "string";
      input = el("input", { id, type: "text", placeholder: p.default !== undefined ? String(p.default) : "" });
    } else if (type === "integer" || type === "number") {
      kind = "number";
      input = el("input", { id, type: "number", step: type === "integer" ? "1" : "any", placeholder: p.default !== undefined ? String(p.default) : "" });
    } else if (type === "boolean") {
      kind = "boolean";
      input = el("select", { id }, el("option", { value: "", text: "(unset)" }), el("option", { value: "true", text: "true" }), el("option", { value: "false", text: "false" }));
    } else {
      kind = "json";
      input = el("textarea", { id, placeholder: "JSON" + (type ? " " + type : "") });
    }
    const help = [type || "any", required.has(name) ? "required" : "optional"];
    if (p.default !== undefined) help.push("default " + JSON.stringify(p.default));
    node.append(el("div", { class: "field" },
      el("label", { for: id, text: name + (required.has(name) ? " *" : "") }),
      input,
      el("div", { class: "help", text: help.join(", ") + (p.description ? "\n" + p.description : "") })));
    fields.push({ name, kind, input, enumValues: choices });
  }
  return {
    node,
    empty: fields.length === 0,
    read() {
      const args = {};
      for (const f of fields) {
        const v = f.input.value;
        if (v === "") continue;
        switch (f.kind) {
          case "enum": args[f.name] = f.enumValues[Number(v)]; break;
          case "string": args[f.name] = v; break;
          case "number": {
            const n = Number(v);
            if (!Number.isFinite(n)) throw new Error(`${f.name}: not a number`);
            args[f.name] = n;
            break;
          }
          case "boolean": args[f.name] = v === "true"; break;
          default:
            try {
              args[f.name] = JSON.parse(v);
            } catch (e) {
              throw new Error(`${f.name}: not valid JSON (${e.message})`);
            }
        }
      }
      return args;
    },
    write(args) {
      for (const f of fields) {
        const v = args ? args[f.name] : undefined;
        if (v === undefined) { f.input.value = ""; continue; }
        switch (f.kind) {
          case "enum": {
            const i = f.enumValues.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
            f.input.value = i >= 0 ? String(i) : "";
            break;
          }
          case "string": f.input.value = typeof v === "string" ? v : JSON.stringify(v); break;
          case "number": f.input.value = String(v); break;
          case "boolean": f.input.value = v === true ? "true" : v === false ? "false" : ""; break;
          default: f.input.value = JSON.stringify(v, null, 2);
        }
      }
    },
  };
}

// ---- the workbench ------------------------------------------------------------------------

async function selectTool(server, tool, button) {
  for (const b of document.querySelectorAll(".tool[aria-current]")) b.removeAttribute("aria-current");
  button.setAttribute("aria-current", "true");
  await closeApp("another tool was selected");
  const wb = document.getElementById("workbench");
  wb.replaceChildren();
  let schema = null;
  if (tool.parameters) schema = tool.parameters;
  wb.append(
    el("h2", {}, el("code", { text: tool.appOnly ? tool.remoteName : tool.name })),
    el("div", { class: "facts" },
      `server ${server.id}`,
      tool.name && tool.name !== tool.remoteName ? ` · on the server: ${tool.remoteName}` : "",
      tool.title ? ` · ${tool.title}` : "",
      tool.uiResource ? ` · MCP App ${tool.uiResource}` : "",
      tool.appOnly ? " · app-only: hidden from the model, callable by its App" : ""));
  if (tool.description) wb.append(el("div", { class: "desc", text: tool.description }));
  if (schema) {
    const det = el("details", {}, el("summary", { text: "Parameters (as the model sees them)" }), el("pre", { text: pretty(schema) }));
    wb.append(det);
  }
  if (tool.annotations) wb.append(el("div", { class: "facts", text: "annotations " + JSON.stringify(tool.annotations) }));

  const form = schema ? buildForm(schema) : null;
  const json = el("textarea", { class: "json", spellcheck: "false", "aria-label": "Arguments as JSON" });
  json.value = "{}";
  let mode = form ? "form" : "json";
  const inputBox = el("div", {});
  const toggle = el("button", { class: "secondary", type: "button" });
  const show = () => {
    inputBox.replaceChildren(mode === "form" ? (form.empty ? el("p", { class: "muted", text: "No arguments." }) : form.node) : json);
    toggle.textContent = mode === "form" ? "Edit as JSON" : "Edit as form";
    toggle.hidden = !form;
  };
  toggle.addEventListener("click", () => {
    if (mode === "form") {
      try {
        json.value = JSON.stringify(form.read(), null, 2);
      } catch (e) {
        json.value = "{}";
      }
      mode = "json";
    } else {
      try {
        form.write(JSON.parse(json.value));
      } catch (e) {
        // keep the form as it was
      }
      mode = "form";
    }
    show();
  });
  show();
  const callBtn = el("button", { class: "primary", type: "button", id: "call", text: "Call" });
  const status = el("span", { class: "muted", id: "call-status" });
  const out = el("div", { id: "call-output" });
  // Stop abandons the call: the bridge then cancels it on the server (an MCP task with
  // tasks/cancel).
  const stopBtn = el("button", { class: "secondary", type: "button", id: "stop-call", text: "Stop", hidden: true });
  let running = null;
  stopBtn.addEventListener("click", () => running && running.abort());
  wb.append(el("h3", { text: "Arguments" }), inputBox, el("div", { class: "actions" }, callBtn, stopBtn, toggle, status), out);

  callBtn.addEventListener("click", async () => {
    let args;
    try {
      args = mode === "form" ? form.read() : JSON.parse(json.value || "{}");
    } catch (e) {
      status.textContent = "Arguments: " + e.message;
      status.className = "result-bad";
      return;
    }
    callBtn.disabled = true;
    status.className = "muted";
    status.textContent = "calling…";
    await closeApp("the tool was called again");
    out.replaceChildren();
    const live = followCall(out);
    running = new AbortController();
    stopBtn.hidden = false;
    try {
      const r = await api("/api/call", { server: server.id, tool: tool.remoteName, arguments: args, callId: live.id }, running.signal);
      status.textContent = `${r.error ? "failed" : r.toolError ? "tool error" : "ok"} in ${r.durationMs}ms`;
      status.className = r.error || r.toolError ? "result-bad" : "result-ok";
      renderResult(out, r, server, tool);
    } catch (e) {
      status.textContent = e.name === "AbortError" ? "stopped: the call was cancelled" : e.message;
      status.className = "result-bad";
    } finally {
      live.stop();
      running = null;
      stopBtn.hidden = true;
      callBtn.disabled = false;
    }
  });
}

// followCall shows, while a call runs, what the server reports (progress, the status of an
// MCP task) and its requests for input, which the user answers here (GET /api/calls/{id},
// POST /api/calls/{id}/input). Everything shown is the server's text: textContent only.
function followCall(out) {
  const id = (crypto.randomUUID ? crypto.randomUUID() : Date.now() + "-" + Math.random().toString(16).slice(2)).replace(/[^A-Za-z0-9-]/g, "");
  const lines = el("pre", { id: "call-lines", hidden: true });
  const inputBox = el("div", { id: "call-input" });
  out.append(lines, inputBox);
  let stopped = false;
  let shownInput = "";
  const render = (v) => {
    if (v.lines && v.lines.length) {
      lines.hidden = false;
      lines.textContent = clip(v.lines.join("\n"), MAX_SHOWN);
    }
    const inp = v.input;
    if (!inp) {
      if (shownInput) inputBox.replaceChildren();
      shownInput = "";
      return;
    }
    if (inp.id === shownInput) return;
    shownInput = inp.id;
    inputBox.replaceChildren(renderInput(id, inp, () => { shownInput = ""; inputBox.replaceChildren(); }));
  };
  (async () => {
    while (!stopped) {
      await new Promise((res) => setTimeout(res, 400));
      if (stopped) break;
      try {
        render(await api("/api/calls/" + id));
      } catch (e) {
        // not started yet, or ended
      }
    }
  })();
  return {
    id,
    stop() {
      stopped = true;
      inputBox.replaceChildren();
    },
  };
}

// renderInput is the form answering one request for input (elicitation).
function renderInput(callId, inp, done) {
  const box = el("div", { class: "input-request", role: "group", "aria-label": "The server asks for input" },
    el("h3", { text: inp.taskId ? `The server asks for input (task ${inp.taskId})` : "The server asks for input" }),
    el("div", { class: "desc", id: "input-message", text: inp.message || "" }));
  let form = null;
  if (inp.mode === "url") {
    box.append(el("p", { text: "It asks you to open this URL yourself (it is not a link here):" }), el("pre", { text: inp.url || "" }));
  } else {
    form = buildForm(inp.schema, "e-");
    if (form && !form.empty) box.append(form.node);
  }
  const note = el("span", { class: "muted" });
  const send = async (action) => {
    let content;
    try {
      if (action === "accept" && form) content = form.read();
    } catch (e) {
      note.textContent = e.message;
      return;
    }
    try {
      await api(`/api/calls/${callId}/input`, { input: inp.id, action, content });
      done();
    } catch (e) {
      note.textContent = e.message;
    }
  };
  const btn = (action, cls) => {
    const b = el("button", { class: cls, type: "button", id: "input-" + action, text: action[0].toUpperCase() + action.slice(1) });
    b.addEventListener("click", () => send(action));
    return b;
  };
  box.append(el("div", { class: "actions" }, btn("accept", "primary"), btn("decline", "secondary"), btn("cancel", "secondary"), note));
  return box;
}

function renderResult(out, r, server, tool) {
  out.append(
    el("h3", { text: r.appOnly ? "What the model would read (it never sees this app-only tool)" : "What the model reads" }),
    el("pre", { id: "model-text", class: r.error || r.toolError ? "result-bad" : "", text: clip(r.modelText || "", MAX_SHOWN) }));
  if (r.error) out.append(el("div", { class: "error", id: "call-error", text: r.error }));
  if (r.app) {
    const appBox = el("div", { id: "app-box" });
    out.append(el("h3", { text: "MCP App" }), appBox);
    openApp(appBox, r.app, server, tool).catch((e) => {
      appBox.append(el("div", { class: "error", text: "The App could not be shown: " + e.message }));
    });
  }
  if (r.result !== undefined) {
    out.append(el("h3", { text: "Raw result (tools/call)" }), el("pre", { id: "raw-result", text: pretty(r.result) }));
  }
}

// ---- MCP Apps host ------------------------------------------------------------------------

async function closeApp(reason) {
  if (current) {
    const v = current;
    current = null;
    await v.teardown(reason);
  }
}

function decodeBlob(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

// proxyBody names the server by hash, the credential-free handle frontends use; by ID only
// when two servers share the hash (the proxy refuses an ambiguous hash).
function proxyBody(server, activity, method, params) {
  const b = { serverHash: activity.serverHash, method, params };
  if (server.hashShared || !activity.serverHash) b.serverId = activity.serverId;
  return b;
}

async function openApp(box, activity, server, tool) {
  const read = await api("/api/proxy", proxyBody(server, activity, "resources/read", { uri: activity.resourceUri }));
  const c = read && Array.isArray(read.contents) ? read.contents[0] : null;
  if (!c) throw new Error("resources/read returned no contents");
  let html;
  if (typeof c.text === "string") html = c.text;
  else if (typeof c.blob === "string") html = decodeBlob(c.blob);
  else throw new Error("the UI resource has neither text nor blob");
  const ui = c._meta && typeof c._meta === "object" && c._meta.ui && typeof c._meta.ui === "object" ? c._meta.ui : {};
  const csp = ui.csp && typeof ui.csp === "object" && !Array.isArray(ui.csp) ? ui.csp : {};
  const permissions = ui.permissions && typeof ui.permissions === "object" && !Array.isArray(ui.permissions) ? ui.permissions : {};
  const view = new AppView({ box, activity, server, tool, html, csp, permissions, mimeType: c.mimeType, prefersBorder: ui.prefersBorder, domain: ui.domain });
  current = view;
  view.start();
}

class AppView {
  constructor(o) {
    Object.assign(this, o);
    this.sandboxURL = new URL(page.sandbox);
    this.sandboxOrigin = this.sandboxURL.origin;
    this.initialized = false;
    this.loaded = false;
    this.torn = false;
    this.nextId = 1;
    this.pending = new Map();
    this.inflight = 0;
    this.displayMode = "inline";
    this.appModes = null;
    this.onMessage = this.onMessage.bind(this);
  }

  start() {
    const allow = [];
    const features = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };
    for (const [k, f] of Object.entries(features)) if (this.permissions[k] && typeof this.permissions[k] === "object") allow.push(f);
    this.granted = {};
    for (const [k] of Object.entries(features)) if (this.permissions[k] && typeof this.permissions[k] === "object") this.granted[k] = {};

    const src = new URL(this.sandboxURL);
    src.searchParams.set("csp", JSON.stringify(this.csp));
    this.frame = el("iframe", {
      class: "view",
      title: "MCP App " + this.activity.resourceUri,
      sandbox: "allow-scripts allow-same-origin allow-forms",
      allow: allow.length ? allow.join("; ") : null,
      referrerpolicy: "no-referrer",
    });
    this.frame.src = src.toString();
    this.closeBtn = el("button", { class: "secondary", type: "button", text: "Close" });
    this.closeBtn.addEventListener("click", () => closeApp("closed by the user"));
    const cspText = Object.keys(this.csp).length ? "CSP " + JSON.stringify(this.csp) : "CSP: restrictive default (no external origins)";
    this.notices = el("div", { class: "notices" });
    this.logList = el("ul", { class: "log", id: "app-log", "aria-label": "App messages" });
    this.root = el("div", { class: "app-view" + (this.prefersBorder === false ? " borderless" : "") },
      el("header", {},
        el("code", { text: this.activity.resourceUri }),
        el("span", { text: `server ${this.activity.serverId} · hash ${this.activity.serverHash}` }),
        el("span", { text: cspText }),
        el("span", { class: "spacer" }),
        this.closeBtn),
      this.frame, this.notices, this.logList);
    if (this.mimeType && this.mimeType !== "text/html;profile=mcp-app") {
      this.notice(`The resource's MIME type is ${this.mimeType}, not text/html;profile=mcp-app.`);
    }
    if (typeof this.domain === "string" && this.domain) {
      this.notice(`The App asks for the dedicated origin ${this.domain}; this host gives every View the same sandbox origin.`);
    }
    window.addEventListener("message", this.onMessage);
    this.box.append(this.root);
    this.log("host", "sandbox " + this.sandboxOrigin);
  }

  log(dir, text, bad) {
    const li = el("li", { class: bad ? "bad" : "", text: `${new Date().toLocaleTimeString()} ${dir} ${text}` });
    this.logList.append(li);
    while (this.logList.childElementCount > 500) this.logList.firstElementChild.remove();
    this.logList.scrollTop = this.logList.scrollHeight;
  }

  notice(text, link) {
    const n = el("div", { class: "notice", text });
    if (link) {
      n.append(" ");
      n.append(link);
    }
    this.notices.append(n);
  }

  post(msg) {
    if (this.frame && this.frame.contentWindow) this.frame.contentWindow.postMessage(msg, this.sandboxOrigin);
  }

  reply(id, result) {
    this.post({ jsonrpc: "2.0", id, result });
  }

  fail(id, code, message) {
    this.post({ jsonrpc: "2.0", id, error: { code, message: String(message).slice(0, 1000) } });
  }

  notify(method, params) {
    if (!this.initialized) return; // nothing goes to the View before it said initialized
    this.post({ jsonrpc: "2.0", method, params });
  }

  request(method, params, timeout) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(method + " timed out"));
      }, timeout);
      this.pending.set(id, { resolve, reject, t });
      this.post({ jsonrpc: "2.0", id, method, params });
    });
  }

  onMessage(ev) {
    if (this.torn || !this.frame || ev.source !== this.frame.contentWindow || ev.origin !== this.sandboxOrigin) return;
    const m = ev.data;
    if (m === null || typeof m !== "object" || Array.isArray(m) || m.jsonrpc !== "2.0") {
      this.log("app→host", "dropped a message that is not JSON-RPC 2.0", true);
      return;
    }
    let size = 0;
    try {
      size = JSON.stringify(m).length;
    } catch (e) {
      size = Infinity;
    }
    const hasId = typeof m.id === "string" || (typeof m.id === "number" && Number.isFinite(m.id));
    if (size > MAX_MESSAGE) {
      this.log("app→host", `dropped a message of ${size} characters`, true);
      if (hasId && typeof m.method === "string") this.fail(m.id, -32600, "message too large");
      return;
    }
    if (m.method === "ui/notifications/sandbox-proxy-ready") {
      if (!this.loaded) {
        this.loaded = true;
        this.post({
          jsonrpc: "2.0",
          method: "ui/notifications/sandbox-resource-ready",
          params: { html: this.html, csp: this.csp, permissions: this.granted },
        });
        this.log("host→sandbox", "sandbox-resource-ready");
      }
      return;
    }
    if (typeof m.method === "string") {
      if (m.method.startsWith("ui/notifications/sandbox-")) return;
      if (m.method.length > 200) return;
      if (hasId) this.onRequest(m);
      else if (m.id === undefined) this.onNotification(m);
      return;
    }
    if (hasId && this.pending.has(m.id)) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      clearTimeout(p.t);
      if (m.error) p.reject(new Error(String(m.error.message || "error")));
      else p.resolve(m.result);
    }
  }

  hostContext() {
    const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    const t = this.tool;
    let description = t.description || "";
    const suffix = "\n[UI Resource: " + (t.uiResource || "") + "]";
    if (t.uiResource && description.endsWith(suffix)) description = description.slice(0, -suffix.length);
    const tool = { name: t.remoteName, inputSchema: t.parameters || { type: "object" } };
    if (description) tool.description = description;
    if (t.title) tool.title = t.title;
    if (t.annotations) tool.annotations = t.annotations;
    if (t.outputSchema) tool.outputSchema = t.outputSchema;
    let timeZone;
    try {
      timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    } catch (e) {
      timeZone = undefined;
    }
    const ctx = {
      toolInfo: { tool },
      theme: dark ? "dark" : "light",
      styles: {
        variables: {
          "--color-background-primary": "light-dark(#ffffff, #1b1b1b)",
          "--color-text-primary": "light-dark(#1b1c1f, #ececec)",
          "--color-border-primary": "light-dark(#dcdfe4, #34363b)",
          "--font-sans": 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
          "--font-mono": "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
        },
      },
      displayMode: this.displayMode,
      availableDisplayModes: ["inline", "fullscreen"],
      containerDimensions: { width: Math.max(1, Math.round(this.frame.clientWidth)), maxHeight: MAX_VIEW_HEIGHT },
      locale: navigator.language || "en",
      userAgent: "mcpbridge-serve" + (page.version ? "/" + page.version : ""),
      platform: "web",
      deviceCapabilities: {
        touch: !!(window.matchMedia && window.matchMedia("(pointer: coarse)").matches),
        hover: !!(window.matchMedia && window.matchMedia("(hover: hover)").matches),
      },
      safeAreaInsets: { top: 0, right: 0, bottom: 0, left: 0 },
    };
    if (timeZone) ctx.timeZone = timeZone;
    return ctx;
  }

  async onRequest(m) {
    const p = m.params && typeof m.params === "object" && !Array.isArray(m.params) ? m.params : {};
    switch (m.method) {
      case "ui/initialize": {
        const caps = p.appCapabilities && typeof p.appCapabilities === "object" ? p.appCapabilities : {};
        this.appModes = Array.isArray(caps.availableDisplayModes) ? caps.availableDisplayModes.filter((x) => typeof x === "string") : null;
        const appInfo = p.appInfo && typeof p.appInfo === "object" ? `${p.appInfo.name} ${p.appInfo.version}` : "";
        this.log("app→host", `ui/initialize ${appInfo} (protocol ${p.protocolVersion})`);
        this.reply(m.id, {
          protocolVersion: APPS_PROTOCOL,
          hostInfo: { name: "mcpbridge", version: page.version || "devel" },
          hostCapabilities: {
            openLinks: {},
            serverTools: {},
            serverResources: {},
            logging: {},
            message: { text: {} },
            updateModelContext: { text: {}, structuredContent: {} },
            sandbox: { permissions: this.granted, csp: this.csp },
          },
          hostContext: this.hostContext(),
        });
        return;
      }
      case "ping":
        this.reply(m.id, {});
        return;
      case "tools/call":
      case "resources/read":
        await this.proxied(m, p);
        return;
      case "ui/open-link":
        this.openLink(m, p);
        return;
      case "ui/message":
        this.message(m, p);
        return;
      case "ui/update-model-context": {
        const text = blocksText(p.content) + (p.structuredContent ? "\n" + JSON.stringify(p.structuredContent) : "");
        this.log("app→host", "ui/update-model-context");
        if (!this.contextNotice) {
          this.contextNotice = el("div", { class: "notice" });
          this.notices.append(this.contextNotice);
        }
        this.contextNotice.textContent = "Model context from the App (a chat host would give it to the model next turn):\n" + clip(text, 20000);
        this.reply(m.id, {});
        return;
      }
      case "ui/request-display-mode": {
        const want = p.mode;
        const ok = (want === "inline" || want === "fullscreen") && (this.appModes === null || this.appModes.includes(want));
        if (ok && want !== this.displayMode) this.setDisplayMode(want);
        this.log("app→host", `ui/request-display-mode ${want} → ${this.displayMode}`);
        this.reply(m.id, { mode: this.displayMode });
        return;
      }
      default:
        this.log("app→host", `${m.method}: method not found`, true);
        this.fail(m.id, -32601, "method not found: " + m.method);
    }
  }

  async proxied(m, p) {
    const what = m.method === "tools/call" ? p.name : p.uri;
    if (this.inflight >= MAX_INFLIGHT) {
      this.log("app→host", `${m.method} ${what}: refused, ${MAX_INFLIGHT} requests already in flight`, true);
      this.fail(m.id, -32000, "too many requests in flight");
      return;
    }
    this.inflight++;
    try {
      const result = await api("/api/proxy", proxyBody(this.server, this.activity, m.method, p));
      if (this.torn) return;
      const err = m.method === "tools/call" && result && result.isError ? " (tool error)" : "";
      this.log("app→host", `${m.method} ${what} → ok${err}`);
      this.reply(m.id, result);
    } catch (e) {
      if (this.torn) return;
      this.log("app→host", `${m.method} ${what} → refused (${e.status || "error"}): ${e.message}`, true);
      this.fail(m.id, -32000, e.message);
    } finally {
      this.inflight--;
    }
  }

  openLink(m, p) {
    let u = null;
    try {
      u = new URL(String(p.url));
    } catch (e) {
      u = null;
    }
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:")) {
      this.log("app→host", "ui/open-link refused: not an http(s) URL", true);
      this.fail(m.id, -32000, "Invalid URL");
      return;
    }
    const a = el("a", { target: "_blank", rel: "noopener noreferrer", text: clip(u.href, 300) });
    a.href = u.href;
    this.notice("The App asks to open a link:", a);
    this.log("app→host", "ui/open-link " + clip(u.href, 200));
    this.reply(m.id, {});
  }

  message(m, p) {
    const text = blocksText(p.content);
    this.notice(`Message from the App (role ${p.role || "user"}; a chat host would add it to the conversation):\n` + clip(text, 20000));
    this.log("app→host", "ui/message");
    this.reply(m.id, {});
  }

  onNotification(m) {
    const p = m.params && typeof m.params === "object" && !Array.isArray(m.params) ? m.params : {};
    switch (m.method) {
      case "ui/notifications/initialized":
        if (this.initialized) return;
        this.initialized = true;
        this.log("app→host", "initialized");
        this.notify("ui/notifications/tool-input", { arguments: this.activity.toolInput || {} });
        this.notify("ui/notifications/tool-result", this.activity.result);
        this.log("host→app", "tool-input, tool-result");
        return;
      case "ui/notifications/size-changed": {
        const h = Number(p.height);
        if (Number.isFinite(h) && h > 0 && this.displayMode === "inline") {
          this.frame.style.height = Math.min(Math.ceil(h), MAX_VIEW_HEIGHT) + "px";
        }
        return;
      }
      case "notifications/message":
        this.log("app→host", `log ${p.level || ""}: ${clip(typeof p.data === "string" ? p.data : JSON.stringify(p.data), 300)}`);
        api("/api/proxy", proxyBody(this.server, this.activity, "notifications/message", p)).catch(() => {});
        return;
      case "ui/notifications/request-teardown":
        this.log("app→host", "request-teardown");
        closeApp("the App asked to close");
        return;
      default:
        this.log("app→host", `${m.method} (ignored)`);
    }
  }

  setDisplayMode(mode) {
    this.displayMode = mode;
    this.root.classList.toggle("fullscreen", mode === "fullscreen");
    this.notify("ui/notifications/host-context-changed", { displayMode: mode });
    if (mode === "fullscreen" && !this.escHandler) {
      this.escHandler = (e) => {
        if (e.key === "Escape" && this.displayMode === "fullscreen") this.setDisplayMode("inline");
      };
      document.addEventListener("keydown", this.escHandler);
    }
  }

  async teardown(reason) {
    if (this.torn) return;
    let how = "before it initialized";
    if (this.initialized) {
      try {
        await this.request("ui/resource-teardown", { reason }, TEARDOWN_WAIT);
        how = "the View acknowledged ui/resource-teardown";
      } catch (e) {
        how = `the View did not answer ui/resource-teardown within ${TEARDOWN_WAIT / 1000}s`; // torn down anyway
      }
    }
    this.box.append(el("p", { class: "muted app-closed", text: `The App was closed (${reason}; ${how}).` }));
    this.torn = true;
    window.removeEventListener("message", this.onMessage);
    if (this.escHandler) document.removeEventListener("keydown", this.escHandler);
    for (const p of this.pending.values()) clearTimeout(p.t);
    this.pending.clear();
    this.root.remove();
    this.frame = null;
  }
}

// blocksText renders content blocks (one or a list) as text for a notice: text as is,
// anything else as a label.
function blocksText(content) {
  const list = Array.isArray(content) ? content : content ? [content] : [];
  return list
    .map((b) => {
      if (!b || typeof b !== "object") return "";
      if (b.type === "text") return String(b.text);
      return `[${b.type}${b.mimeType ? " " + b.mimeType : ""}]`;
    })
    .join("\n");
}

// ---- start --------------------------------------------------------------------------------

async function boot() {
  try {
    page = await api("/api/servers");
  } catch (e) {
    document.getElementById("summary").textContent = "Could not load the servers: " + e.message;
    return;
  }
  renderServers();
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (current && current.frame) {
        current.notify("ui/notifications/host-context-changed", {
          containerDimensions: { width: Math.max(1, Math.round(current.frame.clientWidth)), maxHeight: MAX_VIEW_HEIGHT },
        });
      }
    }, 200);
  });
}

boot();
