// The TypeScript SDK 2.x side of integration's BenchmarkVsSDKs: the client of
// @modelcontextprotocol/client (the SDK's 2.x package, pinned in integration/package.json)
// calling "add" on N stdio servers (testdata/benchserver). Same protocol as client.mjs:
//
//   node client2.mjs BENCHSERVER N MODE → MODE "legacy" (the SDK's default: 2025-11-25) or
//                                          "auto" (versionNegotiation auto: server/discover,
//                                          2026-07-28 with go-sdk servers); prints
//                                          "ready PROTOCOL" once N sessions are up
//   "seq CALLS" / "par CALLS WIDTH"     → runs the calls, round-robin over the servers, and
//                                          prints "ok NANOSECONDS" (or "error MESSAGE")
//   stdin EOF                           → closes every session and exits
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createInterface } from "node:readline";

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

let next = 0;
async function call() {
  const client = clients[next++ % clients.length];
  const res = await client.callTool({ name: "add", arguments: { a: 40, b: 2 } });
  if (res.isError || res.content.length !== 1 || res.content[0].text !== "42") {
    throw new Error("unexpected result " + JSON.stringify(res));
  }
}

async function run(calls, width) {
  let left = calls;
  const worker = async () => {
    while (left > 0) {
      left--;
      await call();
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: width }, worker));
  return process.hrtime.bigint() - start;
}

process.stdout.write(`ready ${clients[0].getNegotiatedProtocolVersion()}\n`);
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const [cmd, callsArg, widthArg] = line.trim().split(/\s+/);
  try {
    const ns = await run(Number(callsArg), cmd === "seq" ? 1 : Number(widthArg));
    process.stdout.write(`ok ${ns}\n`);
  } catch (e) {
    process.stdout.write(`error ${String(e?.message ?? e).replace(/\s+/g, " ")}\n`);
  }
}
await Promise.all(clients.map((c) => c.close()));
