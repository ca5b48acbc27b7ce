import { SPOKEN_TEXT, SPOKEN_TOKEN } from './layout';

/** The tiny model's text tokens: made-up syllable words (`" ka"`, `"lo"`, …), one per id, so any output reads as text. */
const CONSONANTS = 'bdfgklmnprstvz';
const VOWELS = 'aeiou';

/** The id of the lone space, which whisper.cpp looks up by text (it suppresses a blank first token): GPT-2's 220. */
export const SPACE_TOKEN = 220;

/** Token `id`'s text: even ids start a word (a leading space, as GPT-2-style tokens do), syllables from the id's digits. */
export function tinyToken(id: number): string {
  if (id === SPACE_TOKEN) return ' ';
  if (id === SPOKEN_TOKEN) return SPOKEN_TEXT;
  let n = Math.floor(id / 2);
  let word = '';
  do {
    const syllable = n % (CONSONANTS.length * VOWELS.length);
    word += CONSONANTS[Math.floor(syllable / VOWELS.length)]! + VOWELS[syllable % VOWELS.length]!;
    n = Math.floor(n / (CONSONANTS.length * VOWELS.length));
  } while (n > 0);
  return id % 2 === 0 ? ` ${word}` : word;
}

/** The text tokens 0..count-1; the loader names the special tokens after them itself. */
export function tinyVocab(count: number): string[] {
  return Array.from({ length: count }, (_, id) => tinyToken(id));
}
