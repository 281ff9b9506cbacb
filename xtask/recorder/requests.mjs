// pi-session provider-request recorder. Run through `cargo xtask record` after the scenarios:
// omp under node_modules/.bin/bun (omp 18.2.3's @oh-my-pi/pi-ai), pi under node
// (pi 0.73.1's @mariozechner/pi-ai).
//
//   requests.mjs <omp|pi> <fixtureDir> <outDir>
//
// 1. <outDir>/models.json: the model registry the agent's pi-ai resolves `provider/id` with
//    (pi: getProviders/getModels; omp: @oh-my-pi/pi-catalog's bundled catalog), reduced to what
//    the request body depends on: api, baseUrl, input modalities, reasoning, thinking maps and
//    compat flags (compat objects are shared through a table, so the file stays small).
// 2. <outDir>/requests/<scenario>.json: for every <fixtureDir>/<scenario>.expected.json, every
//    recorded context (default leaf, tips, extra leaves) and every model of MODELS, the body the
//    real provider `streamSimple` POSTs, captured by an HTTP server on 127.0.0.1 that the model's
//    baseUrl points at (dummy key, no network), reduced to the keys the session decides
//    (SESSION_KEYS). The messages handed to pi-ai are built the agent's way from the recorded
//    buildSessionContext result: pi `convertToLlm`; omp `wrapSteeringForModel` → `convertToLlm`
//    → the non-vision image gate → `filterProviderReplayMessages` → `normalizeMessagesForProvider`.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { installDeterminism, reset } from "./src/determinism.mjs";

installDeterminism();

/**
 * The model set: Chat Completions with and without image input, a Responses reasoning model, an
 * Anthropic budget-thinking model and an adaptive-thinking one, each with thinking off and on, a
 * Google model. The sessions' own turns
 * come from anthropic/claude-sonnet-4-5 (mostly), openai/gpt-5, google/gemini-2.5-pro and others,
 * so both the same-model and the cross-model paths of pi-ai run.
 * `thinking`: the thinking level handed to pi-ai (null: the session's own level).
 */
export const MODELS = [
	{ key: "groq.llama-4-scout", provider: "groq", id: "meta-llama/llama-4-scout-17b-16e-instruct", thinking: null },
	{ key: "groq.llama-3.3-70b", provider: "groq", id: "llama-3.3-70b-versatile", thinking: null },
	{ key: "openai.gpt-5", provider: "openai", id: "gpt-5", thinking: null },
	{ key: "anthropic.claude-sonnet-4-5", provider: "anthropic", id: "claude-sonnet-4-5", thinking: "off" },
	{ key: "anthropic.claude-sonnet-4-5.high", provider: "anthropic", id: "claude-sonnet-4-5", thinking: "high" },
	{ key: "anthropic.claude-sonnet-4-6", provider: "anthropic", id: "claude-sonnet-4-6", thinking: "off" },
	{ key: "anthropic.claude-sonnet-4-6.medium", provider: "anthropic", id: "claude-sonnet-4-6", thinking: "medium" },
	{ key: "google.gemini-2.5-pro", provider: "google", id: "gemini-2.5-pro", thinking: null },
];

/** The caller's options, the same for every request (Rust passes them through the same way). */
export const SYSTEM_PROMPT = "You are a coding agent.";

/** Body keys the session decides, per API (the rest is the host's: model, stream, tools, ...). */
const SESSION_KEYS = {
	"openai-completions": ["messages", "tools", "reasoning_effort", "reasoning", "thinking", "enable_thinking", "chat_template_kwargs"],
	"openai-responses": ["instructions", "input", "reasoning", "include"],
	"anthropic-messages": ["system", "messages", "thinking", "output_config"],
	"google-generative-ai": ["systemInstruction", "contents", "generationConfig"],
};

function fail(message) {
	console.error(`requests: ${message}`);
	process.exit(1);
}

function stableJson(value) {
	return `${JSON.stringify(value, null, 2)}\n`;
}

// ---------------------------------------------------------------------------------------------
// The two agents

async function loadPi() {
	const ai = await import("@mariozechner/pi-ai");
	const agent = await import("@mariozechner/pi-coding-agent");
	return {
		label: "pi@0.73.1",
		package: "@mariozechner/pi-ai@0.73.1",
		registry() {
			const models = [];
			for (const provider of ai.getProviders()) for (const model of ai.getModels(provider)) models.push(model);
			return models;
		},
		model(provider, id) {
			return ai.getModels(provider).find(m => m.id === id);
		},
		llm(agentContext, _model) {
			return agent.convertToLlm(agentContext.messages);
		},
		options(level) {
			return { reasoning: level === "off" || level == null ? undefined : level };
		},
		streamSimple: ai.streamSimple,
	};
}

async function loadOmp() {
	if (!globalThis.Bun) fail("the omp recorder must run under bun (node_modules/.bin/bun)");
	const ai = await import("@oh-my-pi/pi-ai");
	const catalog = await import("@oh-my-pi/pi-catalog");
	const messages = await import("@oh-my-pi/pi-coding-agent/session/messages");
	const core = await import("@oh-my-pi/pi-agent-core");
	return {
		label: "omp@18.2.3",
		package: "@oh-my-pi/pi-ai@18.2.3",
		registry() {
			const models = [];
			for (const provider of catalog.getBundledProviders()) for (const model of catalog.getBundledModels(provider)) models.push(model);
			return models;
		},
		model(provider, id) {
			return catalog.getBundledModel(provider, id);
		},
		// sdk.ts: transformContext (wrapSteeringForModel), convertToLlmFinal (convertToLlm, the
		// image gate for a model without image input, filterProviderReplayMessages), then
		// agent-loop.ts normalizeMessagesForProvider.
		llm(agentContext, model) {
			let converted = messages.convertToLlm(messages.wrapSteeringForModel(agentContext.messages));
			if (!model.input.includes("image")) {
				converted = messages.replaceLlmImagesWithText(converted, "[image omitted: the active model does not support image input]");
			}
			converted = core.filterProviderReplayMessages(converted);
			return core.normalizeMessagesForProvider(converted, model);
		},
		// sdk.ts: thinkingLevel = toReasoningEffort(level), disableReasoning = level === "off".
		options(level) {
			const concrete = level == null || level === "inherit" ? undefined : level;
			return { reasoning: concrete === "off" ? undefined : concrete, disableReasoning: concrete === "off" };
		},
		streamSimple: ai.streamSimple,
	};
}

// ---------------------------------------------------------------------------------------------
// The registry table

const REGISTRY_FIELDS = ["api", "baseUrl", "reasoning", "input", "maxTokens", "thinkingLevelMap", "thinking"];

function registryTable(agent) {
	const compats = [];
	const compatIndex = new Map();
	const models = [];
	for (const model of agent.registry()) {
		const row = { provider: model.provider, id: model.id };
		for (const field of REGISTRY_FIELDS) if (model[field] !== undefined) row[field] = model[field];
		if (model.compat !== undefined) {
			const text = JSON.stringify(model.compat);
			let index = compatIndex.get(text);
			if (index === undefined) {
				index = compats.length;
				compats.push(model.compat);
				compatIndex.set(text, index);
			}
			row.compat = index;
		}
		models.push(row);
	}
	models.sort((a, b) => (a.provider === b.provider ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.provider < b.provider ? -1 : 1));
	return { implementation: agent.label, package: agent.package, compats, models };
}

// ---------------------------------------------------------------------------------------------
// The capture server

const SSE = { "content-type": "text/event-stream", "cache-control": "no-cache" };

function sse(events) {
	return events.map(([event, data]) => `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`).join("");
}

/** A minimal valid streamed reply for the API the request path belongs to. */
function reply(url) {
	if (url.includes("/chat/completions")) {
		return sse([
			[null, { id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: "stop" }] }],
			[null, "[DONE]"],
		]);
	}
	if (url.includes("/responses")) {
		const response = { id: "resp_1", object: "response", created_at: 0, status: "completed", model: "m", output: [], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
		return sse([
			["response.created", { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress" } }],
			["response.completed", { type: "response.completed", sequence_number: 1, response }],
		]);
	}
	if (url.includes("/messages")) {
		return sse([
			["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }],
			["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
			["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } }],
			["content_block_stop", { type: "content_block_stop", index: 0 }],
			["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }],
			["message_stop", { type: "message_stop" }],
		]);
	}
	return sse([[null, { candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } }]]);
}

function startServer() {
	const captured = [];
	const server = http.createServer((req, res) => {
		const chunks = [];
		req.on("data", chunk => chunks.push(chunk));
		req.on("end", () => {
			captured.push({ url: req.url, body: Buffer.concat(chunks).toString("utf8") });
			res.writeHead(200, SSE);
			res.end(reply(req.url ?? ""));
		});
	});
	return new Promise(resolve => {
		server.listen(0, "127.0.0.1", () => resolve({ server, captured, port: server.address().port }));
	});
}

// ---------------------------------------------------------------------------------------------
// Capturing

function sessionPart(api, body) {
	const out = {};
	const wanted = new Set(SESSION_KEYS[api] ?? Object.keys(body));
	// In the body's own key order (the order pi-ai's serialisation writes).
	for (const key of Object.keys(body)) {
		if (!wanted.has(key) || body[key] === undefined) continue;
		if (key === "tools" && !(Array.isArray(body.tools) && body.tools.length === 0)) continue;
		if (key === "generationConfig") {
			if (body.generationConfig?.thinkingConfig !== undefined) out.generationConfig = { thinkingConfig: body.generationConfig.thinkingConfig };
			continue;
		}
		out[key] = body[key];
	}
	return out;
}

async function capture(agent, capture, model, context, level) {
	capture.captured.length = 0;
	const target = { ...model, baseUrl: model.api === "google-generative-ai" ? `http://127.0.0.1:${capture.port}/v1beta` : `http://127.0.0.1:${capture.port}/v1` };
	const stream = agent.streamSimple(target, context, { apiKey: "dummy-key", maxRetries: 0, ...agent.options(level) });
	let error;
	for await (const event of stream) {
		if (event.type === "error") error = event.error?.errorMessage ?? "error";
	}
	const first = capture.captured[0];
	// The client can refuse before sending (Google's SDK: "contents are required").
	if (!first) return { refused: error ?? "no request sent" };
	return { body: JSON.parse(first.body) };
}

async function recordRequests(agent, fixtureDir, outDir) {
	const server = await startServer();
	const requestsDir = path.join(outDir, "requests");
	mkdirSync(requestsDir, { recursive: true });
	const names = readdirSync(fixtureDir)
		.filter(n => n.endsWith(".expected.json"))
		.sort();
	let count = 0;
	try {
		for (const fileName of names) {
			const expected = JSON.parse(readFileSync(path.join(fixtureDir, fileName), "utf8"));
			if (!Array.isArray(expected.contexts)) continue;
			const scenario = expected.scenario;
			const requests = [];
			for (const context of expected.contexts) {
				for (const spec of MODELS) {
					const model = agent.model(spec.provider, spec.id);
					if (!model) throw new Error(`${agent.label} has no model ${spec.provider}/${spec.id}`);
					const level = spec.thinking ?? context.agent.thinkingLevel ?? "off";
					reset(`${scenario}:${context.leafId}:${spec.key}`);
					const messages = agent.llm(context.agent, model);
					const { body, refused } = await capture(agent, server, model, { systemPrompt: SYSTEM_PROMPT, messages }, level);
					const request = { leafId: context.leafId, model: `${spec.provider}/${spec.id}`, thinkingLevel: level, api: model.api };
					if (refused !== undefined) request.refused = refused;
					else request.body = sessionPart(model.api, body);
					requests.push(request);
					count++;
				}
			}
			const record = { implementation: agent.label, package: agent.package, scenario, systemPrompt: SYSTEM_PROMPT, requests };
			writeFileSync(path.join(requestsDir, `${scenario}.json`), stableJson(record));
			console.error(`requests: ${agent.label} ${scenario} (${requests.length})`);
		}
	} finally {
		server.server.close();
	}
	console.error(`requests: ${agent.label}: ${count} request bodies from ${names.length} recordings into ${requestsDir}`);
}

const [impl, fixtureDir, outDir] = process.argv.slice(2);
if (!impl || !fixtureDir || !outDir) fail("usage: requests.mjs <omp|pi> <fixtureDir> <outDir>");
for (const key of Object.keys(process.env)) {
	if (/_API_KEY$|_BASE_URL$|^ANTHROPIC_|^OPENAI_|^GEMINI_|^GOOGLE_/.test(key)) delete process.env[key];
}
try {
	const agent = impl === "omp" ? await loadOmp() : impl === "pi" ? await loadPi() : fail(`unknown implementation ${impl}`);
	mkdirSync(outDir, { recursive: true });
	writeFileSync(path.join(outDir, "models.json"), `${JSON.stringify(registryTable(agent))}\n`);
	await recordRequests(agent, path.resolve(fixtureDir), path.resolve(outDir));
	process.exit(0);
} catch (error) {
	console.error(error?.stack ?? String(error));
	process.exit(1);
}
