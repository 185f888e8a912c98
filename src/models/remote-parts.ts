import { splitPartPaths } from "../engine/gguf/split-parts.js";

/** `model.gguf.part1of3`: a GGUF cut into byte ranges, which node-llama-cpp joins into one file. */
const BINARY_PART = /\.part(\d+)of(\d+)$/i;

/**
 * Every file of a remote model, from the URL of its first: the parts of a split GGUF
 * (`-00001-of-00003.gguf`, each a GGUF of its own) or of a GGUF cut in binary parts
 * (`.part1of3`, one GGUF over all of them); the URL alone otherwise. The query is kept.
 */
export function remotePartUrls(url: string): { urls: string[]; binary: boolean } {
  const parsed = new URL(url);
  const binary = BINARY_PART.exec(parsed.pathname);
  const count = Number(binary?.[2]);
  if (binary !== null && Number.isInteger(count) && count > 0) {
    const stem = parsed.pathname.slice(0, parsed.pathname.length - binary[0].length);
    return { urls: Array.from({ length: count }, (_, index) => withPath(parsed, `${stem}.part${index + 1}of${count}`)), binary: true };
  }
  return { urls: splitPartPaths(parsed.pathname).map((pathname) => withPath(parsed, pathname)), binary: false };
}

function withPath(url: URL, pathname: string): string {
  const copy = new URL(url.href);
  copy.pathname = pathname;
  return copy.href;
}
