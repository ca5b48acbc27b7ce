/**
 * Number rules for the GBNF grammars node-llama-cpp makes from a JSON Schema or loads for `json_object`. Its own rules
 * admit an exponent of up to 16 digits (`3032363e3970`, which a client parses as Infinity) and, for `integer`, an
 * exponent at all and 16 digits (beyond 2^53). These replace them: an integer is at most 15 digits with no fraction or
 * exponent (a safe integer), a number has a bounded fraction and an exponent of at most two digits (always finite).
 */

/** A JSON Schema `integer`: `-?(0|[1-9][0-9]{0,14})`, |n| < 10^15 < 2^53. */
export const INTEGER_RULE = '"-"? ("0" | [1-9] [0-9]{0,14})';
/** A JSON Schema `number`: up to 15 integer digits, 15 fraction digits, an exponent within ±99. */
export const NUMBER_RULE = '"-"? ("0" | [1-9] [0-9]{0,14}) ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,2})?';

/** Rule names node-llama-cpp 3.21.1 gives its number rules (`reservedRuleNames.number`). */
const SCHEMA_RULES: Record<string, string> = {
  'integer-number-rule': INTEGER_RULE,
  'fractional-number-rule': NUMBER_RULE,
};

/** The body of the rule `name` replaced by `body`, where the grammar has it (one rule a line). */
function replaceRule(gbnf: string, name: string, body: string): string {
  const head = `${name} ::= `;
  return gbnf
    .split('\n')
    .map((line) => (line.startsWith(head) ? head + body : line))
    .join('\n');
}

/** A grammar made from a JSON Schema, its integer and number rules bounded. */
export function boundSchemaNumbers(gbnf: string): string {
  return Object.entries(SCHEMA_RULES).reduce((g, [name, body]) => replaceRule(g, name, body), gbnf);
}

/** The built-in `json` grammar (llama.cpp's json.gbnf), its `number` rule bounded (it keeps its trailing `ws`). */
export function boundJsonNumbers(gbnf: string): string {
  return replaceRule(gbnf, 'number', `${NUMBER_RULE} ws`);
}
