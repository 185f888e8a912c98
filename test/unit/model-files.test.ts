import assert from "node:assert/strict";
import { copyFile, mkdtemp, rm, stat, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { readGgufFileInfo } from "node-llama-cpp";
import { parseConfigText } from "../../src/config/load-config.js";
import { isModelReference, modelReferenceKind } from "../../src/config/model-reference.js";
import { DownloadProgress, formatDuration } from "../../src/cli/download-progress.js";
import { findShortfalls, neededBytesPerPart } from "../../src/engine/gguf/gguf-completeness.js";
import { ggmlTypeSize, knownGgmlTypes, tensorDataBytes } from "../../src/engine/gguf/ggml-type-sizes.js";
import { isEntryPart, splitPartPaths } from "../../src/engine/gguf/split-parts.js";
import { loadLlama } from "../../src/engine/llama/llama-loader.js";
import { validateGguf } from "../../src/engine/plan/validate-gguf.js";
import { modelsDirOf, hubOptions } from "../../src/models/download-settings.js";
import { fileNameForReference } from "../../src/models/reference-file.js";
import { throttleProgress, type PullProgress } from "../../src/models/progress-throttle.js";
import { isRuntimeError } from "../../src/shared/runtime-error.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

describe("ggml type sizes", () => {
  it("match llama.cpp's own block and type sizes for every type it knows", async () => {
    const { llama } = await loadLlama();
    try {
      const bindings = (llama as unknown as { _bindings: { getTypeSizeForGgmlType(type: number): number | undefined; getBlockSizeForGgmlType(type: number): number | undefined } })._bindings;
      for (const type of knownGgmlTypes()) {
        const ours = ggmlTypeSize(type);
        assert.deepEqual(ours, { blockValues: bindings.getBlockSizeForGgmlType(type), blockBytes: bindings.getTypeSizeForGgmlType(type) }, `ggml type ${type}`);
      }
      // And every type llama.cpp sizes is in the table (0 = a type it no longer has).
      for (let type = 0; type < 64; type++) {
        if ((bindings.getTypeSizeForGgmlType(type) ?? 0) > 0) assert.ok(ggmlTypeSize(type) !== undefined, `ggml type ${type} is missing from the table`);
      }
    } finally {
      await llama.dispose();
    }
  });

  it("size a tensor from its shape: whole blocks per row, rows multiplied", () => {
    assert.equal(tensorDataBytes(0, [4096, 32000]), 4096 * 32000 * 4);
    assert.equal(tensorDataBytes(8, [4096, 2n]), (4096 / 32) * 34 * 2);
    assert.equal(tensorDataBytes(12, [4096]), (4096 / 256) * 144);
    assert.equal(tensorDataBytes(999, [1]), undefined, "an unknown (newer) type cannot be sized");
  });
});

describe("truncated GGUF files", () => {
  let dir = "";
  let tiny = "";
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "gguf-complete-"));
    tiny = await ensureFixture("tiny");
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a whole file's last tensor ends at the end of the file", async () => {
    const info = await readGgufFileInfo(tiny, { sourceType: "filesystem", logWarnings: false });
    assert.equal(neededBytesPerPart(info.fullTensorInfo ?? []).get(1), (await stat(tiny)).size);
    await validateGguf(tiny);
  });

  it("a file cut in its tensor data is model_missing, reason truncated, with the bytes missing and the fix", async () => {
    const cut = path.join(dir, "cut.gguf");
    await copyFile(tiny, cut);
    const size = (await stat(cut)).size;
    await truncate(cut, size - 1000);
    await assert.rejects(validateGguf(cut), (error: unknown) => {
      assert.ok(isRuntimeError(error));
      assert.equal(error.code, "model_missing");
      assert.deepEqual(error.details, { path: cut, reason: "truncated", needed_bytes: size, actual_bytes: size - 1000 });
      assert.match(error.message, /cut\.gguf is truncated: its header describes \d+ bytes \(header and tensor data\) but the file has \d+ \(1000 bytes missing\); .*`local-ai pull <ref>` again/);
      return true;
    });
  });

  it("a file cut inside its header is truncated too (not a model with missing metadata)", async () => {
    const cut = path.join(dir, "header.gguf");
    await copyFile(tiny, cut);
    await truncate(cut, 200);
    await assert.rejects(validateGguf(cut), (error: unknown) => isRuntimeError(error) && error.code === "model_missing" && error.details?.reason === "truncated" && error.details?.actual_bytes === 200);
  });

  it("each part of a split model is checked against its own tensors", () => {
    const tensors = [
      { ggmlType: 0, dimensions: [10], fileOffset: 100, filePart: 1 },
      { ggmlType: 0, dimensions: [10], fileOffset: 64, filePart: 2 },
      { ggmlType: 0, dimensions: [20], fileOffset: 104, filePart: 2 },
    ];
    assert.deepEqual(findShortfalls(tensors, [140, 184]), []);
    assert.deepEqual(findShortfalls(tensors, [140, 150]), [{ part: 2, neededBytes: 184, actualBytes: 150 }]);
    assert.deepEqual(findShortfalls(tensors, [140]), [{ part: 2, neededBytes: 184, actualBytes: 0 }], "a missing part holds nothing");
  });

  it("split part names: every part from any part, and which one is loaded", () => {
    assert.deepEqual(splitPartPaths("/m/model-00002-of-00003.gguf"), ["/m/model-00001-of-00003.gguf", "/m/model-00002-of-00003.gguf", "/m/model-00003-of-00003.gguf"]);
    assert.deepEqual(splitPartPaths("/m/model.gguf"), ["/m/model.gguf"]);
    assert.equal(isEntryPart("/m/model-00001-of-00003.gguf"), true);
    assert.equal(isEntryPart("/m/model-00002-of-00003.gguf"), false);
    assert.equal(isEntryPart("/m/model.gguf"), true);
  });
});

describe("model references", () => {
  it("tells paths from references by their syntax", () => {
    assert.equal(modelReferenceKind("hf:owner/repo:Q4_K_M"), "hf");
    assert.equal(modelReferenceKind("huggingface:owner/repo/file.gguf"), "hf");
    assert.equal(modelReferenceKind("https://example.com/m.gguf"), "url");
    assert.equal(modelReferenceKind("http://127.0.0.1:8000/m.gguf"), "url");
    assert.equal(modelReferenceKind("./models/m.gguf"), "path");
    assert.equal(modelReferenceKind("/abs/hf:odd.gguf"), "path");
    assert.equal(isModelReference("C:\\models\\m.gguf"), false);
  });

  it("a config keeps references as they are, resolves paths, and puts models_dir under data_dir by default", () => {
    const parsed = parseConfigText("llama:\n  models:\n    a:\n      path: hf:owner/repo:Q4_K_M\n    b:\n      path: ./m.gguf\n      download: auto\n      idle_unload_s: 300\n", {}, "/srv/app");
    assert.ok(parsed.ok);
    assert.equal(parsed.config.llama.models.a?.path, "hf:owner/repo:Q4_K_M");
    assert.equal(parsed.config.llama.models.a?.download, "never");
    assert.equal(parsed.config.llama.models.a?.idle_unload_s, null);
    assert.equal(parsed.config.llama.models.b?.path, "/srv/app/m.gguf");
    assert.equal(parsed.config.llama.models.b?.download, "auto");
    assert.equal(parsed.config.llama.models.b?.idle_unload_s, 300);
    assert.equal(modelsDirOf(parsed.config), "/srv/app/.local-ai/models");
    const own = parseConfigText("app:\n  models_dir: ../shared-models\n", {}, "/srv/app");
    assert.ok(own.ok);
    assert.equal(modelsDirOf(own.config), "/srv/shared-models");
    const bad = parseConfigText("llama:\n  models:\n    a:\n      path: x.gguf\n      download: always\n", {}, "/srv/app");
    assert.ok(!bad.ok);
    assert.match(bad.problems[0]?.path ?? "", /llama\.models\.a\.download/);
  });

  it("a URL is saved under its file name, made safe; hub URLs and hf: references are named by node-llama-cpp", () => {
    assert.equal(fileNameForReference("https://example.com/a/b/Model%20Q4.gguf?download=1"), "Model_Q4.gguf");
    assert.equal(fileNameForReference("https://example.com/model.gguf.part1of3"), "model.gguf");
    assert.equal(fileNameForReference("https://example.com/download"), "download.gguf");
    assert.equal(fileNameForReference("https://example.com/..%2F..%2Fetc.gguf"), "_.._etc.gguf");
    assert.equal(fileNameForReference("https://huggingface.co/o/r/resolve/main/m.gguf"), "m.gguf", "a URL is a URL, on the hub's host too");
    assert.equal(fileNameForReference("hf:o/r:Q4_K_M"), undefined);
    assert.equal(fileNameForReference("http://127.0.0.1:9/plain/y.gguf"), "y.gguf", "a URL on a mirror's host is a URL");
  });

  it("HF_ENDPOINT and HF_TOKEN come from the environment given, not the process's", () => {
    assert.deepEqual(hubOptions({ HF_ENDPOINT: "http://mirror.local/", HF_TOKEN: " hf_x " }), { endpoints: { huggingFace: "http://mirror.local/" }, tokens: { huggingFace: "hf_x" } });
    assert.deepEqual(hubOptions({}), {});
  });
});

describe("pull progress", () => {
  it("is throttled to one report per interval, the latest value sent at its end, and a last one with every byte", (context) => {
    context.mock.timers.enable({ apis: ["setTimeout", "Date"] });
    const seen: PullProgress[] = [];
    const throttle = throttleProgress((progress) => seen.push(progress), 250);
    throttle.update({ downloadedBytes: 1, totalBytes: 100 });
    throttle.update({ downloadedBytes: 2, totalBytes: 100 });
    throttle.update({ downloadedBytes: 3, totalBytes: 100 });
    assert.deepEqual(seen.map((p) => p.downloadedBytes), [1]);
    context.mock.timers.tick(250);
    assert.deepEqual(seen.map((p) => p.downloadedBytes), [1, 3], "a stalled download still shows where it stopped");
    throttle.update({ downloadedBytes: 50, totalBytes: 100 });
    throttle.finish({ downloadedBytes: 100, totalBytes: 100 });
    throttle.update({ downloadedBytes: 100, totalBytes: 100 });
    context.mock.timers.tick(1000);
    assert.deepEqual(seen.map((p) => p.downloadedBytes), [1, 3, 100]);
  });

  it("draws a bar on a terminal and plain lines every 10 % elsewhere, with speed and time left", () => {
    let now = 0;
    const capture = (): { stream: PassThrough; text: () => string } => {
      const stream = new PassThrough();
      let text = "";
      stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
      return { stream, text: () => text };
    };
    const tty = capture();
    const bar = new DownloadProgress(tty.stream, { tty: true, columns: 100, now: () => now });
    bar.update(0, 100 * 1024 * 1024);
    now = 2000;
    bar.update(20 * 1024 * 1024, 100 * 1024 * 1024);
    bar.end();
    assert.equal(tty.text(), "\r\u001b[2K[----------------------------------------]   0% 0 B of 100.0 MiB\r\u001b[2K[########--------------------------------]  20% 20.0 MiB of 100.0 MiB 10.0 MiB/s 8s left\n");

    now = 0;
    const plain = capture();
    const lines = new DownloadProgress(plain.stream, { tty: false, now: () => now });
    for (let mib = 0; mib <= 100; mib += 4) {
      now += 1000;
      lines.update(mib * 1024 * 1024, 100 * 1024 * 1024);
    }
    lines.end();
    const out = plain.text().trimEnd().split("\n");
    assert.deepEqual(out.map((line) => line.slice(11, 15).trim()), ["0%", "12%", "20%", "32%", "40%", "52%", "60%", "72%", "80%", "92%", "100%"], "one line per 10 % crossed");
    assert.equal(out[0], "downloaded   0% 0 B of 100.0 MiB");
    assert.equal(out[3], "downloaded  32% 32.0 MiB of 100.0 MiB 4.0 MiB/s 17s left");
    assert.equal(out[10], "downloaded 100% 100.0 MiB of 100.0 MiB 4.0 MiB/s");
    assert.equal(formatDuration(75), "1m15s");
    assert.equal(formatDuration(3700), "1h01m");
  });
});
