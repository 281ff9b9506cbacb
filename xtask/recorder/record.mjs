// pi-session fixture recorder. Run through `cargo xtask record`, which sets up the environment
// (a scratch HOME and agent dir) and picks the runtime: omp under node_modules/.bin/bun, pi and
// pi16 under node.
//
//   record.mjs <omp|pi|pi16> scenarios <outDir> [--only <scenario>]
//       write every scenario session with the real SessionManager into <outDir>/<name>.jsonl
//       and record <outDir>/<name>.expected.json (omp: image blobs into <outDir>/blobs/)
//   record.mjs omp foreign <corpusDir|-> <handDir> <outDir>
//       import every Claude Code / Codex transcript of <corpusDir> and <handDir> ({claude,codex}/*.jsonl)
//       with omp's persistForeignSession and record the result (see src/foreign.mjs)
//   record.mjs <omp|pi|pi16> verify <inDir> <outDir>
//       for every <inDir>/*.jsonl written by someone else (e.g. our Rust facade), record
//       <outDir>/<name>.expected.json with the real SessionManager (omp reads <inDir>/blobs/)
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { installDeterminism, reset } from "./src/determinism.mjs";

installDeterminism();

const { recordExpected, stableJson } = await import("./src/expected.mjs");
const { SCENARIOS, HANDWRITTEN } = await import("./src/scenarios.mjs");
const B = await import("./src/builders.mjs");

/** The working directory every generated session claims (recorded in the header). */
const SESSION_CWD = "/home/user/project";
/**
 * Sessions are written under this fixed path (then copied into the fixture folder), because a
 * forked session records its source file's absolute path in the header and the bytes must not
 * depend on a random temp dir.
 */
const WRITE_ROOT = "/tmp/pi-session-recorder";
/** Where omp blobs go, relative to the fixture folder (recorded as `blobsDir` in expected.json). */
const BLOBS_DIR = "blobs";

function fail(message) {
	console.error(`recorder: ${message}`);
	process.exit(1);
}

async function loadImplementation(impl) {
	if (impl === "omp") return (await import("./src/impl-omp.mjs")).loadOmp();
	if (impl === "pi" || impl === "pi16") return (await import("./src/impl-pi.mjs")).loadPi(impl);
	return fail(`unknown implementation "${impl}" (expected omp, pi or pi16)`);
}

function appliesTo(scenario, impl) {
	return !scenario.only || scenario.only.includes(impl);
}

function describeFor(scenario, x) {
	return typeof scenario.description === "function" ? scenario.description(x) : scenario.description;
}

async function writeScenarioSession(implementation, scenario, x, outDir) {
	const target = path.join(outDir, `${scenario.name}.jsonl`);
	if (scenario.text) {
		writeFileSync(target, scenario.text(x));
		return { target, extraLeaves: scenario.extraLeaves };
	}
	// A fixed folder, not a random temp dir: forks record the source path in `parentSession`.
	const scratch = path.join(WRITE_ROOT, x.impl, scenario.name);
	rmSync(scratch, { recursive: true, force: true });
	mkdirSync(scratch, { recursive: true });
	try {
		const writer = await implementation.create(scratch, SESSION_CWD);
		const result = (await scenario.run(writer, x)) ?? {};
		const written = await writer.finish();
		if (!written || !existsSync(written)) throw new Error(`${x.impl} wrote no file for scenario ${scenario.name}`);
		writeFileSync(target, readFileSync(written));
		return { target, extraLeaves: result.extraLeaves };
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

async function recordOne(implementation, { name, description, file, extraLeaves }, outDir) {
	const meta = { scenario: name, description, file: path.basename(file), extraLeaves };
	if (implementation.impl === "omp") {
		const blobs = implementation.exportBlobs(readFileSync(file, "utf8"), path.join(outDir, BLOBS_DIR));
		meta.blobsDir = BLOBS_DIR;
		meta.blobs = blobs;
	}
	reset(`${name}:open`);
	const { expected, rewrittenText } = await recordExpected(implementation, file, meta);
	writeFileSync(path.join(outDir, `${name}.expected.json`), stableJson(expected));
	const reopened = path.join(outDir, `${name}.reopened.jsonl`);
	if (rewrittenText !== undefined) writeFileSync(reopened, rewrittenText);
	else rmSync(reopened, { force: true });
}

async function recordScenarios(impl, outDir, only) {
	const implementation = await loadImplementation(impl);
	const x = { impl, omp: impl === "omp", B };
	const all = [...SCENARIOS, ...HANDWRITTEN].filter(s => appliesTo(s, impl) && (!only || s.name === only));
	if (only && all.length === 0) fail(`no scenario named ${only} for ${impl}`);
	const names = new Set();
	mkdirSync(outDir, { recursive: true });
	for (const scenario of all) {
		if (names.has(scenario.name)) fail(`duplicate scenario name ${scenario.name}`);
		names.add(scenario.name);
		reset(scenario.name);
		const { target, extraLeaves } = await writeScenarioSession(implementation, scenario, x, outDir);
		await recordOne(implementation, { name: scenario.name, description: describeFor(scenario, x), file: target, extraLeaves }, outDir);
		console.error(`recorder: ${implementation.label} ${scenario.name}`);
	}
	console.error(`recorder: ${implementation.label}: ${all.length} scenarios recorded into ${outDir}`);
}

async function verifyDirectory(impl, inDir, outDir) {
	const implementation = await loadImplementation(impl);
	if (!existsSync(inDir)) fail(`verify: ${inDir} does not exist`);
	if (impl === "omp") implementation.importBlobs(path.join(inDir, BLOBS_DIR));
	const files = readdirSync(inDir)
		.filter(n => n.endsWith(".jsonl") && !n.endsWith(".reopened.jsonl"))
		.sort();
	mkdirSync(outDir, { recursive: true });
	for (const fileName of files) {
		const name = fileName.slice(0, -".jsonl".length);
		const file = path.join(inDir, fileName);
		const meta = { scenario: name, description: `verify: ${fileName} opened by ${implementation.label}`, file: fileName };
		if (impl === "omp") meta.blobsDir = BLOBS_DIR;
		reset(`${name}:open`);
		const { expected, rewrittenText } = await recordExpected(implementation, file, meta);
		writeFileSync(path.join(outDir, `${name}.expected.json`), stableJson(expected));
		if (rewrittenText !== undefined) writeFileSync(path.join(outDir, `${name}.reopened.jsonl`), rewrittenText);
		console.error(`recorder: ${implementation.label} verified ${fileName}`);
	}
	console.error(`recorder: ${implementation.label}: ${files.length} files verified into ${outDir}`);
}

const [impl, mode, ...rest] = process.argv.slice(2);
try {
	if (mode === "scenarios") {
		const onlyIndex = rest.indexOf("--only");
		const only = onlyIndex >= 0 ? rest[onlyIndex + 1] : undefined;
		if (!rest[0] || rest[0] === "--only") fail("usage: record.mjs <impl> scenarios <outDir> [--only <scenario>]");
		await recordScenarios(impl, path.resolve(rest[0]), only);
	} else if (mode === "foreign") {
		if (impl !== "omp" || rest.length < 3) fail("usage: record.mjs omp foreign <corpusDir|-> <handDir> <outDir>");
		const { recordForeign } = await import("./src/foreign.mjs");
		const corpus = rest[0] === "-" ? "-" : path.resolve(rest[0]);
		await recordForeign(await loadImplementation(impl), corpus, path.resolve(rest[1]), path.resolve(rest[2]));
	} else if (mode === "verify") {
		if (rest.length < 2) fail("usage: record.mjs <impl> verify <inDir> <outDir>");
		await verifyDirectory(impl, path.resolve(rest[0]), path.resolve(rest[1]));
	} else {
		fail("usage: record.mjs <omp|pi|pi16> scenarios <outDir> [--only <scenario>] | verify <inDir> <outDir>");
	}
	process.exit(0);
} catch (error) {
	console.error(error?.stack ?? String(error));
	process.exit(1);
}
