// mcpbridge MCP Apps sandbox proxy (MCP Apps specification 2026-01-26, "Sandbox proxy").
//
// This page runs on its own origin (a second loopback port). It tells the host page it is
// ready, receives the View's HTML once in ui/notifications/sandbox-resource-ready, renders
// it in an inner srcdoc iframe (which inherits this page's Content-Security-Policy header,
// built by the server from the View's declared _meta.ui.csp), and relays JSON-RPC messages
// between the host page and the View, except the reserved ui/notifications/sandbox-* ones.
// The View's frame is sandboxed without allow-same-origin: it gets an opaque origin and can
// reach neither this page nor the host page except through postMessage.
"use strict";
(function () {
  const hostOrigin = document.querySelector('meta[name="mcpbridge-host-origin"]').content;
  const RESERVED = "ui/notifications/sandbox-";
  const MAX_HTML = 8 << 20; // characters
  let inner = null;

  function isMessage(d) {
    return d !== null && typeof d === "object" && !Array.isArray(d) && d.jsonrpc === "2.0";
  }
  function reserved(d) {
    return typeof d.method === "string" && d.method.startsWith(RESERVED);
  }
  function toHost(msg) {
    window.parent.postMessage(msg, hostOrigin);
  }

  // Permission Policy features a View may ask for (_meta.ui.permissions).
  const FEATURES = { camera: "camera", microphone: "microphone", geolocation: "geolocation", clipboardWrite: "clipboard-write" };

  function load(params) {
    if (inner !== null || !params || typeof params.html !== "string" || params.html.length > MAX_HTML) {
      return;
    }
    const allow = [];
    if (params.permissions && typeof params.permissions === "object") {
      for (const [k, f] of Object.entries(FEATURES)) {
        if (params.permissions[k] && typeof params.permissions[k] === "object") allow.push(f);
      }
    }
    inner = document.createElement("iframe");
    // params.sandbox (an optional override in the spec) is ignored: the View never gets
    // allow-same-origin, popups or top navigation here.
    inner.setAttribute("sandbox", "allow-scripts allow-forms");
    if (allow.length) inner.setAttribute("allow", allow.join("; "));
    inner.setAttribute("title", "MCP App");
    inner.style.cssText = "border:0;width:100%;height:100%;display:block";
    inner.srcdoc = params.html;
    document.body.style.cssText = "margin:0;overflow:hidden";
    document.documentElement.style.cssText = "height:100%";
    document.body.style.height = "100%";
    document.body.appendChild(inner);
  }

  window.addEventListener("message", (ev) => {
    const d = ev.data;
    if (!isMessage(d)) return;
    if (ev.source === window.parent && ev.origin === hostOrigin) {
      if (d.method === RESERVED + "resource-ready") {
        load(d.params);
        return;
      }
      if (reserved(d) || inner === null || !inner.contentWindow) return;
      // The View has an opaque origin, so "*" is the only target origin that reaches it.
      inner.contentWindow.postMessage(d, "*");
      return;
    }
    if (inner !== null && ev.source === inner.contentWindow) {
      if (reserved(d)) return;
      toHost(d);
    }
  });

  function ready() {
    toHost({ jsonrpc: "2.0", method: RESERVED + "proxy-ready", params: {} });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
