/** A small SentencePiece ("llama") vocabulary: specials, ChatML controls, 256 byte tokens, then word pieces. */

/** llama.cpp token types. */
export const TokenType = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

export interface TinyVocab {
  tokens: string[];
  scores: number[];
  types: number[];
  unkId: number;
  bosId: number;
  eosId: number;
  imStartId: number;
  imEndId: number;
}

/** SentencePiece's visible space. */
export const SPM_SPACE = '\u2581';

const CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?\'"-()[]{}/*+=<>_#@&%$';
const WORDS = [
  'the',
  'and',
  'you',
  'is',
  'are',
  'to',
  'of',
  'in',
  'it',
  'that',
  'for',
  'on',
  'with',
  'as',
  'this',
  'hello',
  'world',
  'what',
  'how',
  'why',
  'can',
  'help',
  'user',
  'assistant',
  'system',
  'model',
  'token',
  'router',
  'node',
  'lane',
  'queue',
  'please',
  'thanks',
  'yes',
  'no',
  'one',
  'two',
  'three',
];

/** The ChatML template llama.cpp and node-llama-cpp both recognise. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export function buildTinyVocab(): TinyVocab {
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const seen = new Set<string>();
  const add = (text: string, type: number, score = 0): number => {
    if (seen.has(text)) return tokens.indexOf(text);
    seen.add(text);
    tokens.push(text);
    scores.push(score);
    types.push(type);
    return tokens.length - 1;
  };
  const unkId = add('<unk>', TokenType.unknown);
  const bosId = add('<s>', TokenType.control);
  add('</s>', TokenType.control);
  const imStartId = add('<|im_start|>', TokenType.control);
  const imEndId = add('<|im_end|>', TokenType.control);
  for (let b = 0; b < 256; b++) add(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, TokenType.byte);
  // Word pieces: every "▁"-prefix of every word, so the SPM merge loop can grow a word one letter at a time.
  // Scores fall with insertion order, as in a SentencePiece model ordered by frequency.
  const pieces: string[] = [SPM_SPACE, ...CHARS];
  for (const c of CHARS) pieces.push(SPM_SPACE + c);
  for (const word of WORDS) for (let n = 2; n <= word.length; n++) pieces.push(SPM_SPACE + word.slice(0, n));
  let rank = 0;
  for (const piece of pieces) if (!seen.has(piece)) add(piece, TokenType.normal, -rank++);
  // ChatML ends a turn with <|im_end|>, so that is the end-of-generation token.
  return { tokens, scores, types, unkId, bosId, eosId: imEndId, imStartId, imEndId };
}
