/**
 * What an index line's label (the vault entry's `strategy` field, the name the original gave it)
 * means, for the help of every command that shows one. The label names why a state was archived,
 * not what its bytes are: an apply archives the session before compacting it.
 */
export function labelMeaning(shownAs: string): string {
  return `${shownAs} says why a state was archived: the strategy of the apply that archived it (the bytes are the session before that compaction), snapshot or the --label given to gobstopper snapshot, fork, or pre-undo (the file as an undo found it). --json keeps the original's name for it, strategy.`;
}
