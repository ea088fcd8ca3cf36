/** Word overlap (Jaccard) from which two causes count as the same. */
const SAME_CAUSE = 0.5;

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);

/** Whether two causes say the same, by their words: both empty (no reflection) counts as the same. */
export function sameCause(a: string, b: string): boolean {
  const x = words(a);
  const y = words(b);
  if (x.size === 0 && y.size === 0) return true;
  const shared = [...x].filter((word) => y.has(word)).length;
  return shared / (x.size + y.size - shared) >= SAME_CAUSE;
}
