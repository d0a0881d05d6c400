/** The fleet's input error, apart from the reader so the package entry can export it without loading a schema (issue 23). */
/** A report that cannot be merged: unreadable, not a report, or another segscan version. The message names the file. */
export class ReportInputError extends Error {
  override readonly name = "ReportInputError";
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}
