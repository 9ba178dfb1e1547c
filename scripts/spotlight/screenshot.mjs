// node screenshot.mjs URL FILE TEXT: a PNG of URL by headless Chromium (Debian's chromium),
// taken once the page shows TEXT (at most 30 s). Spotlight's pages fill from a /stream that
// never ends, so Chromium's own --screenshot (at load) is blank and --virtual-time-budget
// never ends: this drives Chromium over its DevTools pipe instead (no WebSocket, no package).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, file, text] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "spotlight-shot-"));
const chromium = spawn("chromium", [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  `--user-data-dir=${profile}`, "--hide-scrollbars", "--window-size=1280,720",
  "--remote-debugging-pipe", "about:blank",
], { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });

// The pipe: JSON messages ended by a NUL byte, written to fd 3, read from fd 4.
let next = 0;
let buffered = "";
const waiting = new Map();
chromium.stdio[4].on("data", (chunk) => {
  buffered += chunk.toString("utf8");
  let end;
  while ((end = buffered.indexOf("\0")) >= 0) {
    const msg = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    const w = waiting.get(msg.id);
    if (w) {
      waiting.delete(msg.id);
      msg.error ? w.reject(new Error(JSON.stringify(msg.error))) : w.resolve(msg.result);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = ++next;
  chromium.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + "\0");
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let status = 0;
try {
  const { targetId } = await send("Target.createTarget", { url });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  let found = false;
  for (let i = 0; i < 60 && !found; i++) {
    await sleep(500);
    const { result } = await send("Runtime.evaluate", { expression: "document.body ? document.body.innerText : ''", returnByValue: true }, sessionId);
    found = String(result.value).includes(text);
  }
  await sleep(1000); // the last rows' layout
  const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
  writeFileSync(file, Buffer.from(data, "base64"));
  if (!found) {
    console.error(`${url} did not show "${text}" within 30 s`);
    status = 1;
  }
} catch (err) {
  console.error(`screenshot of ${url}: ${err.message}`);
  status = 1;
} finally {
  chromium.kill();
  await sleep(500);
  rmSync(profile, { recursive: true, force: true });
}
process.exit(status);
