// Builders for the messages the scenarios append. Shapes and key orders follow what the real agent
// loops produce (pi-ai AssistantMessage: role, content, api, provider, model, usage, stopReason,
// timestamp, then optional keys; ToolResultMessage: role, toolCallId, toolName, content, details,
// isError, timestamp). Timestamps come from the recorder's fake clock.
import { now } from "./determinism.mjs";

/** A full pi-ai Usage object; costs are per-million-token prices so the floats are realistic. */
export function usage(input, output, cacheRead = 0, cacheWrite = 0) {
	const cost = {
		input: (input * 3) / 1e6,
		output: (output * 15) / 1e6,
		cacheRead: (cacheRead * 0.3) / 1e6,
		cacheWrite: (cacheWrite * 3.75) / 1e6,
	};
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}

export const ZERO_USAGE = usage(0, 0);

export const text = (t, extra = {}) => ({ type: "text", text: t, ...extra });
export const thinking = (t, signature) =>
	signature === undefined ? { type: "thinking", thinking: t } : { type: "thinking", thinking: t, thinkingSignature: signature };
export const toolCall = (id, name, args, extra = {}) => ({ type: "toolCall", id, name, arguments: args, ...extra });
export const image = (data, mimeType = "image/png") => ({ type: "image", data, mimeType });

export function user(content, extra = {}) {
	return { role: "user", content, timestamp: now(), ...extra };
}

export function developer(content, extra = {}) {
	return { role: "developer", content, timestamp: now(), ...extra };
}

/**
 * An assistant turn. `opts`: provider, model, api, usage, stopReason (default "stop", or "toolUse"
 * when the content has tool calls), errorMessage and any extra keys (appended after timestamp).
 */
export function assistant(content, opts = {}) {
	const { provider = "anthropic", model = "claude-sonnet-4-5", api = "anthropic-messages", errorMessage, extra = {} } = opts;
	const hasToolCall = content.some(block => block.type === "toolCall");
	const message = {
		role: "assistant",
		content,
		api,
		provider,
		model,
		usage: opts.usage ?? usage(1200 + content.length * 7, 80 + content.length * 13, 400, 0),
		stopReason: opts.stopReason ?? (hasToolCall ? "toolUse" : "stop"),
		timestamp: now() - 700,
	};
	if (errorMessage !== undefined) message.errorMessage = errorMessage;
	return Object.assign(message, extra);
}

export function toolResult(toolCallId, toolName, content, opts = {}) {
	return {
		role: "toolResult",
		toolCallId,
		toolName,
		content: typeof content === "string" ? [text(content)] : content,
		details: opts.details,
		isError: opts.isError ?? false,
		timestamp: now(),
		...(opts.extra ?? {}),
	};
}

/** How a bash or python execution ended, in the field order both agents write. */
function executionOutcome(opts) {
	return { exitCode: opts.exitCode, cancelled: opts.cancelled ?? false, truncated: opts.truncated ?? false };
}

/** Adds `excludeFromContext` only when the scenario sets it. */
function withContextExclusion(message, opts) {
	if (opts.excludeFromContext !== undefined) message.excludeFromContext = opts.excludeFromContext;
	return message;
}

export function bashExecution(command, output, opts = {}) {
	return withContextExclusion(
		{ role: "bashExecution", command, output, ...executionOutcome(opts), fullOutputPath: opts.fullOutputPath, timestamp: now() },
		opts,
	);
}

export function pythonExecution(code, output, opts = {}) {
	return withContextExclusion({ role: "pythonExecution", code, output, ...executionOutcome(opts), timestamp: now() }, opts);
}

// ---------------------------------------------------------------------------------------------
// Tiny deterministic PNGs (stored deflate blocks, so no zlib implementation differences).

const CRC_TABLE = (() => {
	const table = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		table[n] = c >>> 0;
	}
	return table;
})();

function crc32(bytes) {
	let c = 0xffffffff;
	for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}

function u32(n) {
	return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function chunk(type, data) {
	const typeBytes = Array.from(type, ch => ch.charCodeAt(0));
	return [...u32(data.length), ...typeBytes, ...data, ...u32(crc32([...typeBytes, ...data]))];
}

function storedZlib(raw) {
	const out = [0x78, 0x01];
	for (let offset = 0; offset < raw.length || offset === 0; offset += 65535) {
		const block = raw.slice(offset, offset + 65535);
		const final = offset + 65535 >= raw.length ? 1 : 0;
		out.push(final, block.length & 0xff, block.length >>> 8, ~block.length & 0xff, (~block.length >>> 8) & 0xff, ...block);
		if (raw.length === 0) break;
	}
	let a = 1;
	let b = 0;
	for (const byte of raw) {
		a = (a + byte) % 65521;
		b = (b + a) % 65521;
	}
	out.push(...u32(((b << 16) | a) >>> 0));
	return out;
}

/** A width×height RGB PNG with a pattern chosen by `variant`, as base64. */
export function pngBase64(width, height, variant = 0) {
	const raw = [];
	for (let y = 0; y < height; y++) {
		raw.push(0);
		for (let x = 0; x < width; x++) raw.push((x * 16 + variant * 40) & 0xff, (y * 16 + variant * 90) & 0xff, ((x ^ y) * 32 + variant) & 0xff);
	}
	const header = [...u32(width), ...u32(height), 8, 2, 0, 0, 0];
	const bytes = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...chunk("IHDR", header), ...chunk("IDAT", storedZlib(raw)), ...chunk("IEND", [])];
	return Buffer.from(bytes).toString("base64");
}

/** 2×2: well under omp's 1024-char externalization threshold, so it stays inline. */
export const SMALL_PNG = pngBase64(2, 2, 1);
/** 16×16: over the threshold, so omp writes it to the blob store as `blob:sha256:<hex>`. */
export const LARGE_PNG = pngBase64(16, 16, 2);
export const LARGE_PNG_2 = pngBase64(16, 16, 3);
export { now, nowIso } from "./determinism.mjs";
