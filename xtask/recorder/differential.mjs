// The differential recordings: what each implementation's own `buildSessionContext` returns for
// session trees that are not files (random trees, malformed field values, pi 1.6's crafted
// cases), and pi 1.6's `convertToLlm` for a list of messages. Run through `cargo xtask record`
// (xtask/src/record/differential.rs), which owns the inputs and merges the answers back.
//
//   differential.mjs <omp|pi|pi16> context <cases.json> <out.json> [blobsDir]
//       <cases.json> is `{"cases": [{entries, leafId?, …}]}`; writes one answer per case
//       (`{"throws": message}` when the real function threw). omp resolves image frames from
//       <blobsDir>, as its SessionManager does.
//   differential.mjs pi16 llm <messages.json> <out.json>
//       writes convertToLlm(<messages>).
//
// pi 1.6's dist/core modules are imported directly: its package index needs node 22.
import { readFileSync, writeFileSync } from "node:fs";

const [impl, mode, input, output, blobsDir] = process.argv.slice(2);
const data = JSON.parse(readFileSync(input, "utf8"));
const PI16 = "./node_modules/@earendil-works/pi-coding-agent/dist/core";

async function builder() {
	if (impl === "omp") {
		const omp = "./node_modules/@oh-my-pi/pi-coding-agent/src/session";
		const { buildSessionContext } = await import(`${omp}/session-context.ts`);
		const { BlobStore, lazyImageDataSync } = await import(`${omp}/blob-store.ts`);
		const blobs = new BlobStore(blobsDir);
		const options = { resolveFrameData: data => lazyImageDataSync(blobs, data) };
		return c => buildSessionContext(c.entries, c.leafId, undefined, options);
	}
	const module =
		impl === "pi"
			? "./node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"
			: `${PI16}/session-manager.js`;
	const { buildSessionContext } = await import(module);
	return c => buildSessionContext(c.entries, c.leafId);
}

if (mode === "llm" && impl === "pi16") {
	const { convertToLlm } = await import(`${PI16}/messages.js`);
	writeFileSync(output, JSON.stringify(convertToLlm(data)));
} else if (mode === "context") {
	const build = await builder();
	const answers = data.cases.map(c => {
		try {
			return build(c);
		} catch (error) {
			return { throws: String(error) };
		}
	});
	writeFileSync(output, JSON.stringify(answers));
} else {
	console.error(`differential.mjs: unknown mode ${impl} ${mode}`);
	process.exit(2);
}
