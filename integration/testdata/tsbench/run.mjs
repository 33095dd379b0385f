// The stdin/stdout protocol shared by client.mjs and client2.mjs (integration's
// BenchmarkVsSDKs drives them): after "ready…" is printed, each line "seq CALLS" or
// "par CALLS WIDTH" runs the calls, round-robin over the clients, and prints "ok NANOSECONDS"
// (or "error MESSAGE"); at stdin EOF every client is closed.
import { createInterface } from "node:readline";

// serve runs the protocol with clients (connected SDK clients), printing ready first.
export async function serve(clients, ready) {
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

  process.stdout.write(ready + "\n");
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
}
