/**
 * What an interrupt reports once a fork or restore is already in the provider's store: the file is
 * there to resume, and the receipt that may still be pending is completed by the same command run
 * again (publication is idempotent), which also prints the resume command.
 */
export function publishedNote(path: string): string {
  return `${path} was already published; run the same command again to finish its record and see how to resume it`;
}
