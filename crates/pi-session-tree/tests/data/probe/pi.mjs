import { buildSessionContext } from "../../../../../xtask/recorder/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";
import { readFileSync } from "fs";
const input = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const c of input) {
	try {
		out.push(buildSessionContext(c.entries, c.leafId === undefined ? undefined : c.leafId));
	} catch (error) {
		out.push({ throws: String(error) });
	}
}
console.log(JSON.stringify(out));
