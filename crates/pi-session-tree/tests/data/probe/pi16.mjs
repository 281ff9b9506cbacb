// Runs pi 1.6.0's own buildSessionContext and convertToLlm over crafted cases.
// PI16_PKG: the installed @earendil-works/pi-coding-agent folder (its dist/core modules
// are imported directly: the package index needs node 22).
import { readFileSync } from "fs";
const pkg = process.env.PI16_PKG ?? "../../../../../xtask/recorder/node_modules/@earendil-works/pi-coding-agent";
const { buildSessionContext } = await import(`${pkg}/dist/core/session-manager.js`);
const { convertToLlm } = await import(`${pkg}/dist/core/messages.js`);
const input = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const c of input) {
	let expected;
	let llm;
	try {
		expected = buildSessionContext(c.entries, c.leafId === undefined ? undefined : c.leafId);
		llm = convertToLlm(expected.messages);
	} catch (error) {
		expected = { throws: String(error) };
	}
	out.push({ ...c, expected, ...(llm === undefined ? {} : { llm }) });
}
console.log(JSON.stringify(out));
