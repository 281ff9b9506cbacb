// Records pi 1.6.0's own convertToLlm for pi16_llm.input.json:
//   PI16_PKG=<…>/node_modules/@earendil-works/pi-coding-agent node pi16_llm.mjs < pi16_llm.input.json > pi16_llm.expected.json
// dist/core/messages.js is imported directly (the package index needs node 22).
import { readFileSync } from "fs";
const pkg = process.env.PI16_PKG ?? "../../../../xtask/recorder/node_modules/@earendil-works/pi-coding-agent";
const { convertToLlm } = await import(`${pkg}/dist/core/messages.js`);
console.log(JSON.stringify(convertToLlm(JSON.parse(readFileSync(0, "utf8")))));
