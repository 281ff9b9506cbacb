// Deterministic randomness and time for recording fixtures.
//
// Both implementations mint ids from the platform's random sources (crypto.randomUUID,
// getRandomValues, node:crypto, Bun.randomUUIDv7, the `uuid` package) and stamp entries with
// `new Date()`. To make re-recording produce identical bytes we replace every one of those sources
// with a seeded generator and a clock that only moves when the recorder says so. The clock never
// advances on its own, so the number of internal Date.now() calls an implementation makes does not
// change any recorded value.
//
// Call `installDeterminism()` once, BEFORE importing an implementation, then `reset(seed)` at the
// start of every scenario so that scenarios are independent of each other and of their order.
import nodeCrypto from "node:crypto";
import nodeModule from "node:module";

/** The clock starts here for every scenario: 2026-01-15T09:00:00.000Z. */
export const CLOCK_START_MS = Date.UTC(2026, 0, 15, 9, 0, 0, 0);

const state = { now: CLOCK_START_MS, a: 1, b: 2, c: 3, d: 4 };

/** 32-bit string hash (FNV-1a), used to turn a scenario name into a seed. */
export function hashSeed(text) {
	let h = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		h ^= text.charCodeAt(i);
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	return h >>> 0;
}

/** sfc32: small, fast, good enough for ids; fully determined by the seed. */
function nextUint32() {
	const t = (((state.a + state.b) >>> 0) + state.d) >>> 0;
	state.d = (state.d + 1) >>> 0;
	state.a = state.b ^ (state.b >>> 9);
	state.b = (state.c + (state.c << 3)) >>> 0;
	state.c = ((state.c << 21) | (state.c >>> 11)) >>> 0;
	state.c = (state.c + t) >>> 0;
	return t;
}

function fillRandom(bytes) {
	for (let i = 0; i < bytes.length; i++) bytes[i] = nextUint32() & 0xff;
	return bytes;
}

function hex(bytes) {
	return Array.from(bytes, b => b.toString(16).padStart(2, "0")).join("");
}

function formatUuid(bytes) {
	const h = hex(bytes);
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A v4 UUID from the seeded generator. */
export function seededUuidV4() {
	const bytes = fillRandom(new Uint8Array(16));
	bytes[6] = (bytes[6] & 0x0f) | 0x40;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	return formatUuid(bytes);
}

/** A v7 UUID: the fake clock's milliseconds, then seeded random bits. */
export function seededUuidV7() {
	const bytes = fillRandom(new Uint8Array(16));
	let ms = state.now;
	for (let i = 5; i >= 0; i--) {
		bytes[i] = ms % 256;
		ms = Math.floor(ms / 256);
	}
	bytes[6] = (bytes[6] & 0x0f) | 0x70;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	return formatUuid(bytes);
}

/** Restart the generator and the clock for one scenario. */
export function reset(seedText) {
	const seed = hashSeed(seedText);
	state.a = 0x9e3779b9;
	state.b = 0x243f6a88;
	state.c = 0xb7e15162;
	state.d = seed;
	for (let i = 0; i < 15; i++) nextUint32();
	state.now = CLOCK_START_MS;
}

/** Move the fake clock forward (default one second) and return the new time in ms. */
export function tick(ms = 1000) {
	state.now += ms;
	return state.now;
}

/** The fake clock's current time in ms. */
export function now() {
	return state.now;
}

/** The fake clock's current time as an ISO string. */
export function nowIso() {
	return new Date(state.now).toISOString();
}

function patchProperty(target, name, value) {
	if (!target) return;
	try {
		Object.defineProperty(target, name, { value, writable: true, configurable: true });
	} catch {
		target[name] = value;
	}
	if (target[name] !== value) throw new Error(`recorder: could not patch ${name} for deterministic recording`);
}

let installed = false;

/** Replace Math.random, crypto randomness, Bun.randomUUIDv7 and Date with deterministic versions. */
export function installDeterminism() {
	if (installed) return;
	installed = true;
	const RealDate = globalThis.Date;
	class FixedDate extends RealDate {
		constructor(...args) {
			if (args.length === 0) super(state.now);
			else super(...args);
		}
		static now() {
			return state.now;
		}
	}
	globalThis.Date = FixedDate;

	Math.random = () => nextUint32() / 0x100000000;

	const webCrypto = globalThis.crypto;
	patchProperty(webCrypto, "randomUUID", seededUuidV4);
	patchProperty(webCrypto, "getRandomValues", array => {
		fillRandom(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
		return array;
	});

	patchProperty(nodeCrypto, "randomUUID", seededUuidV4);
	patchProperty(nodeCrypto, "randomBytes", (size, callback) => {
		const buffer = fillRandom(Buffer.alloc(size));
		if (callback) {
			callback(null, buffer);
			return undefined;
		}
		return buffer;
	});
	patchProperty(nodeCrypto, "randomFillSync", (buffer, offset = 0, size) => {
		const view = new Uint8Array(buffer.buffer ?? buffer, buffer.byteOffset ?? 0, buffer.byteLength);
		fillRandom(view.subarray(offset, size === undefined ? undefined : offset + size));
		return buffer;
	});
	// node 20 exposes node:crypto getRandomValues as a getter that forwards to webcrypto (patched above).
	if (Object.getOwnPropertyDescriptor(nodeCrypto, "getRandomValues")?.writable) patchProperty(nodeCrypto, "getRandomValues", array => webCrypto.getRandomValues(array));
	if (typeof nodeModule.syncBuiltinESMExports === "function") nodeModule.syncBuiltinESMExports();

	if (globalThis.Bun) patchProperty(globalThis.Bun, "randomUUIDv7", () => seededUuidV7());
}
