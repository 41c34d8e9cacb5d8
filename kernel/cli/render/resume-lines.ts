/** How a published fork is resumed, for people: the command, and the provider's caveat under it. */
import type { OperationReceipt } from '../../../schemas/generated/types.js';
import { printableText } from '../../text/human.js';

export interface ResumeLines {
  /** One line, never wrapped: it is there to be copied whole. */
  command: string;
  /** A sentence, wrapped like the rest of a command's prose. */
  note: string | null;
}

export function resumeLines(label: string, receipt: Pick<OperationReceipt, 'resume_command' | 'resume_note'>): ResumeLines {
  return {
    command: `${label}: ${receipt.resume_command}`,
    // The note is the provider's and may quote the transcript's directory, which is anybody's text:
    // a line break in it would print a line that passes for one of gobstopper's own.
    note: receipt.resume_note ? `  note: ${printableText(receipt.resume_note)}` : null,
  };
}
