/** How a published fork is resumed, for people: the command, and the provider's caveat under it. */
import type { OperationReceipt } from '../../../schemas/generated/types.js';
import { printableText } from '../../text/human.js';

export function resumeLines(label: string, receipt: Pick<OperationReceipt, 'resume_command' | 'resume_note'>): string[] {
  const lines = [`${label}: ${receipt.resume_command}`];
  // The note is the provider's and may quote the transcript's directory, which is anybody's text:
  // a line break in it would print a line that passes for one of gobstopper's own.
  if (receipt.resume_note) lines.push(`  note: ${printableText(receipt.resume_note)}`);
  return lines;
}
