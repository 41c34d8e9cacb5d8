/**
 * Regular-expression source for literal words: several places match one of a list of fixed words
 * in a single scan, and each must escape them the same way.
 */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** An alternation that matches any of `words` literally. */
export const literalAlternatives = (words: readonly string[]): string => words.map(escapeRegExp).join('|');
