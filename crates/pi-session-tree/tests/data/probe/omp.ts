import { buildSessionContext } from "../../../../../xtask/recorder/node_modules/@oh-my-pi/pi-coding-agent/src/session/session-context.ts";
import { BlobStore, lazyImageDataSync } from "../../../../../xtask/recorder/node_modules/@oh-my-pi/pi-coding-agent/src/session/blob-store.ts";
const blobs = new BlobStore(process.env.BLOBS_DIR ?? "blobs");
const input = JSON.parse(await Bun.stdin.text());
const out = [];
for (const c of input) {
	try {
		out.push(buildSessionContext(c.entries, c.leafId === undefined ? undefined : c.leafId, undefined, { resolveFrameData: data => lazyImageDataSync(blobs, data) }));
	} catch (error) {
		out.push({ throws: String(error) });
	}
}
console.log(JSON.stringify(out));
