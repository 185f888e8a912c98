import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DoctorReport } from "../../src/diagnostics/doctor-report.js";
import { renderDoctorTable } from "../../src/diagnostics/render-doctor.js";

const report: DoctorReport = {
  ok: false,
  summary: { ok: 1, warn: 1, fail: 1 },
  version: "0.1.0",
  generated_at: "2025-01-01T00:00:00.000Z",
  checks: [
    { id: "system.node", title: "Node.js", status: "ok", finding: "Node.js 20.19.0" },
    { id: "port.http", title: "HTTP port", status: "warn", finding: "127.0.0.1:8080 is already in use", fix: "set http.port to a free port" },
    { id: "model.default", title: "Model default", status: "fail", finding: "no file at /m.gguf\nsecond line", fix: "put the file there \u001b[2J" },
  ],
};

describe("renderDoctorTable", () => {
  it("aligns status, title and finding, with the fix indented under the finding", () => {
    const text = renderDoctorTable(report, { color: false });
    const lines = text.split("\n");
    const row = lines.find((line) => line.includes("HTTP port")) ?? "";
    const fix = lines[lines.indexOf(row) + 1] ?? "";
    assert.match(row, /^! WARN +HTTP port +127\.0\.0\.1:8080 is already in use$/);
    assert.equal(fix.indexOf("fix:"), row.indexOf("127.0.0.1"), "fix starts in the finding column");
    const findingColumns = lines.filter((line) => /^[+!x] /.test(line)).map((line) => line.indexOf(line.includes("Node.js 20") ? "Node.js 20" : line.includes("127.0") ? "127.0" : "no file"));
    assert.equal(new Set(findingColumns).size, 1, "findings share one column");
  });

  it("prints no fix for ok checks, keeps findings on one line and ends with a summary", () => {
    const text = renderDoctorTable(report, { color: false });
    assert.equal(text.match(/fix:/g)?.length, 2);
    assert.match(text, /no file at \/m\.gguf second line/);
    assert.ok(!text.includes("\u001b"), "no escape sequences without color, not even from a finding");
    assert.match(text, /1 ok, 1 warning, 1 failed: fix the failed check above/);
    assert.ok(text.endsWith("\n"));
  });

  it("colors only when asked", () => {
    const text = renderDoctorTable(report, { color: true });
    assert.ok(text.includes("\u001b[31mx FAIL"));
    assert.ok(text.includes("\u001b[32m+ ok"));
  });

  it("says all is well when nothing failed", () => {
    const text = renderDoctorTable({ ...report, ok: true, summary: { ok: 1, warn: 0, fail: 0 }, checks: [report.checks[0]!] }, { color: false });
    assert.match(text, /1 ok, 0 warnings, 0 failed: everything local-ai needs is in place\./);
  });
});
