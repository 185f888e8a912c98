/**
 * A scripted server's answer held back until the test releases it: `arrived` resolves (with the
 * release) when the request reaches the handler, so a test acts on the request's arrival, an
 * event, instead of polling for it.
 */
export function heldResponse(): { hold(answer: () => void): void; arrived: Promise<() => void> } {
  let arrive: (release: () => void) => void = () => undefined;
  const arrived = new Promise<() => void>((resolve) => (arrive = resolve));
  return { hold: (answer) => arrive(answer), arrived };
}
