/**
 * Splits a Windows command line (Win32_Process.CommandLine) into argv the way the C runtime and
 * CommandLineToArgvW do: spaces separate outside quotes; 2n backslashes before a quote are n
 * backslashes and the quote toggles quoting; 2n+1 are n and a literal quote; other backslashes are
 * literal. argv[0] is read up to its closing quote (or the first space), without escapes.
 */
export function splitWindowsCommandLine(line: string): string[] {
  const argv: string[] = [];
  let index = 0;
  const isSpace = (char: string | undefined): boolean => char === " " || char === "\t";
  // The program name: no backslash processing (paths end in backslashes legitimately).
  if (line.startsWith('"')) {
    const close = line.indexOf('"', 1);
    argv.push(close === -1 ? line.slice(1) : line.slice(1, close));
    index = close === -1 ? line.length : close + 1;
  } else {
    while (index < line.length && !isSpace(line[index])) index++;
    if (index > 0) argv.push(line.slice(0, index));
  }
  for (;;) {
    while (isSpace(line[index])) index++;
    if (index >= line.length) return argv;
    let arg = "";
    let quoted = false;
    while (index < line.length && (quoted || !isSpace(line[index]))) {
      let slashes = 0;
      while (line[index] === "\\") {
        slashes++;
        index++;
      }
      if (line[index] === '"') {
        arg += "\\".repeat(Math.floor(slashes / 2));
        if (slashes % 2 === 1) {
          arg += '"';
        } else if (quoted && line[index + 1] === '"') {
          // "" inside quotes: a literal quote (the C runtime's rule since 2008).
          arg += '"';
          index++;
        } else {
          quoted = !quoted;
        }
        index++;
      } else {
        arg += "\\".repeat(slashes);
        if (index < line.length && (quoted || !isSpace(line[index]))) {
          arg += line[index];
          index++;
        }
      }
    }
    argv.push(arg);
  }
}
