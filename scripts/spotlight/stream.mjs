// Records what Spotlight's sidecar streams to its UI (the /stream event source that
// `spotlight tail` and the browser read): one parsed envelope a line, [header, items].
// The tail prints no profile chunks (profiles are commented out of its types in 4.11.8),
// and the UI reads them from this stream, so the Spotlight check reads them here.
//
//   node stream.mjs PORT FILE
import { appendFileSync } from "node:fs";
import { EventSource } from "eventsource";

const [port, file] = process.argv.slice(2);
const es = new EventSource(`http://localhost:${port}/stream`);
es.addEventListener("application/x-sentry-envelope", (event) => appendFileSync(file, `${event.data}\n`));
es.onerror = () => {}; // the sidecar restarts nothing; the caller stops this process
