/** Splits a command template into words (single and double quotes group; backslash escapes) and fills `${NAME}` placeholders. */
export function expandCommand(template: string, vars: Record<string, string | number | undefined>): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < template.length) word += template[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < template.length) {
      word += template[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in command template`);
  if (inWord) words.push(word);
  return words.map((w) =>
    w.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
      const v = vars[name];
      if (v === undefined || v === '') throw new Error(`command template uses \${${name}} but it has no value`);
      return String(v);
    }),
  );
}
