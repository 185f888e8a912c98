import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { noteDocuments } from "../../src/store/memory-documents.js";
import { processTerm, tokenize, truncate } from "../../src/store/memory-terms.js";

describe("memory terms", () => {
  it("tokenizes on spaces and punctuation, CJK runs as pairs", () => {
    assert.deepEqual(tokenize("Hello, world! it's"), ["Hello", "world", "it", "s"]);
    assert.deepEqual(tokenize("北京烤鸭"), ["北京", "京烤", "烤鸭"]);
    assert.deepEqual(tokenize("雨"), ["雨"]);
    assert.deepEqual(tokenize("GPU显卡"), ["GPU", "显卡"]);
  });

  it("lower-cases and drops stop words", () => {
    assert.equal(processTerm("Paris"), "paris");
    assert.equal(processTerm("The"), null);
  });

  it("truncates with an ellipsis within the limit, never splitting a surrogate pair", () => {
    assert.equal(truncate("short", 10), "short");
    assert.equal(truncate("abcdefghij", 5), "abcd…");
    assert.equal(truncate("ab😀cd", 4), "ab…");
    assert.equal(truncate("abc", 0), "");
  });
});

describe("note documents", () => {
  it("splits markdown into paragraphs titled by their heading, keeping code fences whole", () => {
    const docs = noteDocuments("n.md", "intro line\n\n## Setup ##\nstep one\nstep two\n\n```\ncode\n\nmore code\n```\n\n# Empty\n\n", { maxDocChars: 1000 });
    assert.deepEqual(
      docs.map((doc) => [doc.id, doc.title, doc.text]),
      [
        ["note:n.md#1", "", "intro line"],
        ["note:n.md#2", "Setup", "step one\nstep two"],
        ["note:n.md#3", "Setup", "```\ncode\n\nmore code\n```"],
      ],
    );
  });
});
