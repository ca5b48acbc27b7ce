import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  boundJsonNumbers,
  boundSchemaNumbers,
  INTEGER_RULE,
  NUMBER_RULE,
} from '../../src-router/engines/llama-node/bounded-numbers';

// The number rules the built-in engine's JSON grammars use, read as regular expressions (the rules use only quoted
// literals, character classes, groups, alternation and bounded repetition, which mean the same in both).
const asRegExp = (rule: string) =>
  new RegExp(
    `^(?:${rule.replace(/"([^"]*)"/g, (_, lit: string) => lit.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).replaceAll(' ', '')})$`,
  );
const integer = asRegExp(INTEGER_RULE);
const number = asRegExp(NUMBER_RULE);

// node-llama-cpp 3.21.1's grammar for {a: integer, b: number, c: array of integer|null}, as it makes it.
const schemaGrammar = [
  'root ::= "{" whitespace-b-1-4-rule "\\"a\\"" ":" [ ]? integer-number-rule comma-whitespace-b-1-4-rule "\\"b\\"" ":" [ ]? fractional-number-rule comma-whitespace-b-1-4-rule "\\"c\\"" ":" [ ]? rule1 whitespace-b-0-4-rule "}" "\\n\\n\\n\\n" [\\n]*',
  'integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?',
  'comma-whitespace-b-1-4-rule ::= "," ([\\n] ("    " | "\\t") | [ ]?)',
  'fractional-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?',
  'null-rule ::= "null"',
  'rule0 ::= ( integer-number-rule | null-rule )',
].join('\n');

describe("bounded number rules of the built-in engine's JSON grammars", () => {
  it('admit for integer only safe integers written without fraction or exponent', () => {
    for (const ok of ['0', '-0', '7', '-42', '999999999999999', '-999999999999999']) {
      expect(integer.test(ok), ok).toBe(true);
      expect(Number.isSafeInteger(JSON.parse(ok)), ok).toBe(true);
    }
    for (const bad of ['3032363e3970', '1e5', '1.0', '01', '9999999999999999', '-', '+1', ''])
      expect(integer.test(bad), bad).toBe(false);
  });

  it('admit for number only finite values: a bounded fraction and an exponent of at most two digits', () => {
    for (const ok of ['0', '-0.5', '3.14', '1e9', '1E-99', '-999999999999999.999999999999999e+99', '12e07']) {
      expect(number.test(ok), ok).toBe(true);
      expect(Number.isFinite(JSON.parse(ok)), ok).toBe(true);
    }
    for (const bad of ['3032363e3970', '1e100', '1.', '.5', '01', '1.0000000000000000', '1e', 'NaN', 'Infinity'])
      expect(number.test(bad), bad).toBe(false);
  });

  it('replace the integer and number rules of a schema grammar and leave every other rule as it was', () => {
    const out = boundSchemaNumbers(schemaGrammar).split('\n');
    const before = schemaGrammar.split('\n');
    expect(out).toHaveLength(before.length);
    expect(out[1]).toBe(`integer-number-rule ::= ${INTEGER_RULE}`);
    expect(out[3]).toBe(`fractional-number-rule ::= ${NUMBER_RULE}`);
    for (const i of [0, 2, 4, 5]) expect(out[i]).toBe(before[i]);
    expect(boundSchemaNumbers('root ::= "null"')).toBe('root ::= "null"');
  });

  it("replace the number rule of node-llama-cpp's json grammar, keeping its trailing whitespace", () => {
    const json = readFileSync('resources/llama-runtime/node_modules/node-llama-cpp/llama/grammars/json.gbnf', 'utf8');
    const out = boundJsonNumbers(json);
    expect(json).toMatch(/^number ::= /m);
    expect(out).toContain(`\nnumber ::= ${NUMBER_RULE} ws\n`);
    expect(out.replace(/^number ::= .*$/m, '')).toBe(json.replace(/^number ::= .*$/m, ''));
  });
});
