/** The fleet's input error, apart from the reader so the package entry can export it without loading a schema. */
/**
 * A report that cannot be merged: unreadable (`io`), or not a report, too
 * large to read, or of another segscan version (`content`). The message names
 * the file.
 */
export class ReportInputError extends Error {
  override readonly name = "ReportInputError";
  constructor(
    readonly file: string,
    message: string,
    readonly kind: "io" | "content" = "content",
  ) {
    super(message);
  }
}
