// The TypeScript SDK 2.x side of integration's BenchmarkVsSDKs: the client of
// @modelcontextprotocol/client (the SDK's 2.x package, pinned in integration/package.json)
// calling "add" on N stdio servers (testdata/benchserver), driven by the Go benchmark over
// stdin/stdout (run.mjs):
//
//   node client2.mjs BENCHSERVER N MODE → MODE "legacy" (the SDK's default: 2025-11-25) or
//                                          "auto" (versionNegotiation auto: server/discover,
//                                          2026-07-28 with go-sdk servers); prints
//                                          "ready PROTOCOL" once N sessions are up
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { serve } from "./run.mjs";

const [bin, nArg, mode] = process.argv.slice(2);
if (mode !== "legacy" && mode !== "auto") {
  throw new Error(`mode ${mode}: want legacy or auto`);
}
const n = Number(nArg);
const clients = [];
for (let i = 0; i < n; i++) {
  const client = new Client({ name: "ts2-raw", version: "1" }, { versionNegotiation: { mode } });
  await client.connect(new StdioClientTransport({ command: bin, args: [], stderr: "ignore" }));
  clients.push(client);
}
await serve(clients, `ready ${clients[0].getNegotiatedProtocolVersion()}`);
