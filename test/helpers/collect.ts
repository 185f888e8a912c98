/** Everything an async iterable yields, in order (it runs to its end; an error it throws propagates). */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}
