/** A bounded tail of a child's output lines, kept for error messages and doctor. */
export class LogTail {
  private readonly buffer: string[] = [];

  constructor(private readonly capacity = 200) {}

  push(line: string): void {
    this.buffer.push(line);
    if (this.buffer.length > this.capacity) this.buffer.splice(0, this.buffer.length - this.capacity);
  }

  lines(count = this.capacity): string[] {
    return this.buffer.slice(-count);
  }

  clear(): void {
    this.buffer.length = 0;
  }
}
