/** ANSI styling for the terminal chat; every function is the identity when colour is off. */
export interface TerminalStyle {
  readonly color: boolean;
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const sgr = (open: number, close: number) => (text: string): string => (text === "" ? text : `\x1b[${open}m${text}\x1b[${close}m`);

/**
 * Colour only on an interactive terminal, and never when NO_COLOR is set to anything non-empty
 * (https://no-color.org) or TERM is `dumb`: plain text is what a pipe or a file should get.
 */
export function wantsColor(isTTY: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  if (!isTTY) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return env.TERM !== "dumb";
}

export function createStyle(color: boolean): TerminalStyle {
  if (!color) {
    const plain = (text: string): string => text;
    return { color, dim: plain, bold: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  }
  return { color, dim: sgr(2, 22), bold: sgr(1, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
}
