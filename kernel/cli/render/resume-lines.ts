/** How a published fork is resumed, for people: the command, and the provider's caveat under it. */
import type { OperationReceipt } from '../../../schemas/generated/types.js';

export function resumeLines(label: string, receipt: Pick<OperationReceipt, 'resume_command' | 'resume_note'>): string[] {
  const lines = [`${label}: ${receipt.resume_command}`];
  if (receipt.resume_note) lines.push(`  note: ${receipt.resume_note}`);
  return lines;
}
