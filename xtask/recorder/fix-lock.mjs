// Adds lock-file entries for the platform builds of @oh-my-pi/pi-natives that the npm registry
// does not carry (only linux-x64 is published). `npm ci` insists that every optional dependency
// named by a package has a lock entry; these entries carry os/cpu so npm skips them on this
// machine and never tries to download them. Run after `npm install` regenerates the lock file:
//   node fix-lock.mjs
import { readFileSync, writeFileSync } from "node:fs";

const LOCK = new URL("./package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, "utf8"));
const natives = lock.packages["node_modules/@oh-my-pi/pi-natives"];
if (!natives) throw new Error("package-lock.json has no @oh-my-pi/pi-natives entry; run npm install first");

const PLATFORMS = { "darwin-arm64": ["darwin", "arm64"], "darwin-x64": ["darwin", "x64"], "linux-arm64": ["linux", "arm64"], "linux-x64": ["linux", "x64"], "win32-arm64": ["win32", "arm64"], "win32-x64": ["win32", "x64"] };
const missing = [];
for (const [name, version] of Object.entries(natives.optionalDependencies ?? {})) {
	const key = `node_modules/${name}`;
	if (lock.packages[key]) continue;
	const platform = PLATFORMS[name.replace("@oh-my-pi/pi-natives-", "")];
	if (!platform) throw new Error(`unknown pi-natives platform package ${name}`);
	missing.push([key, { version, optional: true, os: [platform[0]], cpu: [platform[1]] }]);
}
// Insert the new entries right after pi-natives itself; npm does not care about order, and this
// keeps the rest of the file exactly as npm wrote it.
const packages = {};
for (const [key, value] of Object.entries(lock.packages)) {
	packages[key] = value;
	if (key === "node_modules/@oh-my-pi/pi-natives") for (const [k, v] of missing) packages[k] = v;
}
lock.packages = packages;
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`fix-lock: added ${missing.length} platform entries for @oh-my-pi/pi-natives`);
